import { ADDRESS_KEYS } from "../contacts/schemas.ts";
import { unneutraliseFormula } from "./spreadsheet.ts";

/**
 * The CSV vocabulary of contacts (docs/import-export.md §1), shared by the importer
 * (src/transfer/import-columns.ts) and the exporter (src/transfer/export.ts), so what
 * `crm export` writes `crm import` reads back.
 */

/**
 * A header as matched: lower case, without spaces, `_`, `-` and `.` ("E-mail 1 - Value" →
 * "email1value"), and without the `'` an export puts before a custom field title such as
 * `=x` (docs/security.md §1, src/transfer/spreadsheet.ts).
 */
export const normalizeHeader = (header: string) => unneutraliseFormula(header).toLowerCase().replace(/[\s_\-.]+/g, "");

/** Contact fields a CSV column can set, as the create body names them (docs/api.md §11). */
export const TEXT_FIELDS = [
  "firstName", "lastName", "email", "phone", "businessName", "website", "notes",
  "source", "identityType", "contactTypeId",
] as const;
export const BOOLEAN_FIELDS = ["subscribed", "smsSubscribed"] as const;
export const ADDRESS_FIELDS = ADDRESS_KEYS.map((key) => `address.${key}` as const);

/**
 * Columns an export writes that are not written by an import: the service sets them
 * (contactId, createdAt, updatedAt). An import recognises and skips them, and says so.
 */
export const READ_ONLY_FIELDS = ["contactId", "createdAt", "updatedAt"] as const;

/** The contact type by its name (an export writes the name: type ids differ between projects). */
export const CONTACT_TYPE_FIELD = "contactType";

/** Other CRMs' headers for our fields (docs/import-export.md §1), before normalizing. */
export const FIELD_ALIASES: Readonly<Record<string, readonly string[]>> = {
  firstName: ["first name", "given name"],
  lastName: ["last name", "surname", "family name"],
  email: ["e-mail", "email address", "e-mail 1 - value"],
  phone: ["phone number", "mobile", "mobile phone", "phone 1 - value"],
  businessName: ["company", "company name", "organization", "organisation", "organization 1 - name"],
  website: ["url", "web site"],
  notes: ["note"],
  tags: ["labels"],
  "address.line1": ["street", "address", "address line 1"],
  "address.line2": ["address line 2"],
  "address.city": ["city", "town"],
  "address.state": ["state", "region", "province"],
  "address.zip": ["zip", "zip code", "postal code", "postcode"],
  "address.country": ["country"],
};

/**
 * The export's columns before the custom fields (docs/import-export.md §2: contactId, every contact
 * field, address.*, tags), in the order written.
 */
export const EXPORT_COLUMNS = [
  "contactId", "identityType", "source", "firstName", "lastName", "email", "phone", "businessName", "website",
  CONTACT_TYPE_FIELD, "subscribed", "smsSubscribed", "notes", "createdAt", "updatedAt",
  ...ADDRESS_FIELDS, "tags",
] as const;

/** Tag names and multiselect values in one cell: joined by `; ` (docs/import-export.md §1), split on `;` or `|` on import. */
export const LIST_SEPARATOR = "; ";

/** Every normalized header that names a contact field (field names and their aliases). */
const FIELD_HEADERS = new Set(
  [
    ...TEXT_FIELDS, ...BOOLEAN_FIELDS, ...ADDRESS_FIELDS, ...READ_ONLY_FIELDS, CONTACT_TYPE_FIELD, "tags",
    ...Object.values(FIELD_ALIASES).flat(),
  ].map(normalizeHeader),
);

/**
 * The export's header for a custom field: its title, unless the title reads as a contact
 * field or an alias ("City", "Notes"); then `customFields.<title>`, which the import
 * always takes as the custom field.
 */
export const customFieldHeader = (title: string) =>
  FIELD_HEADERS.has(normalizeHeader(title)) || /^customfields\./i.test(title) ? `customFields.${title}` : title;
