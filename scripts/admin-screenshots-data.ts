/**
 * The CSV files scripts/admin-screenshots.ts uploads to the console's import; the rest of its
 * data comes from test/helpers/console-seed.ts.
 */
/** A HubSpot export's header (docs/import-export.md §2: matched by alias), with a column no field matches. */
export const HUBSPOT_CSV = [
  "First Name,Last Name,Email,Phone Number,Company Name,City,Lead Status",
  "Grace,Hopper,grace.hopper@example.com,+1 212 555 0100,Navy Labs,Arlington,Open",
  "Alan,Turing,alan.turing@example.co.uk,+44 161 496 0000,,Manchester,In progress",
].join("\n") + "\n";

/** A trade-show export: good rows, a blank row, a duplicate, and rows the importer refuses (a bad email, a bad plan). */
export const IMPORT_CSV = [
  "firstName,lastName,email,phone,businessName,tags,address.city,Plan",
  "Ines,Moreau,ines.moreau@example.fr,+33 1 42 68 53 00,Moreau Conseil,newsletter,Paris,silver",
  "Kenji,Watanabe,kenji.watanabe@example.jp,+81 3-1234-5678,,vip,Tokyo,gold",
  "Amara,Okafor,amara.okafor@example.ng,,Okafor Logistics,,Lagos,bronze",
  "Lars,Nilsson,lars.nilsson@example.se,,,newsletter,Stockholm,",
  ",,,,,,,",
  "Priya,Raman,priya.raman(at)example.in,,,,,",
  "Tomás,García,tomas.garcia@example.es,+34 912 345 678,,,Madrid,platinum",
  "Chloé,Dubois,chloe.dubois@example.be,,,newsletter,Brussels,silver",
  "Grace,Hopper,grace.hopper@example.com,,,,,gold",
  "Oluwaseun,Adeyemi-Bankole,oluwaseun.adeyemi-bankole@long-company-domain-name.example.com,,Adeyemi-Bankole Renewable Energy Cooperative,,Abuja,gold",
].join("\n");

