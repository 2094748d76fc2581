/**
 * The realistic data of scripts/admin-screenshots.ts that goes in through the API: a few
 * dozen contacts (long values among them, two sharing an email), timelines, and webhook
 * subscriptions in each state (recovered after a failure, failing, disabled), plus the
 * CSV the console imports.
 */
import type { Reply } from "../test/helpers/receiver.ts";
import type { ServerHandle } from "../test/helpers/server.ts";
import { until } from "../test/helpers/until.ts";

export const PASSWORD = "screenshots need a long passphrase";

const PEOPLE = [
  ["Grace", "Hopper", "Navy Computing Lab"],
  ["Alan", "Turing", null],
  ["Katherine", "Johnson", "NASA Langley"],
  ["Linus", "Torvalds", null],
  ["Margaret", "Hamilton", "Hamilton Technologies"],
  ["Edsger", "Dijkstra", null],
  ["Barbara", "Liskov", "MIT CSAIL"],
  ["Donald", "Knuth", null],
  ["Frances", "Allen", "IBM Research"],
  ["Tim", "Berners-Lee", "W3C"],
  ["Radia", "Perlman", null],
  ["Ken", "Thompson", "Bell Labs"],
  ["Hedy", "Lamarr", null],
  ["John", "McCarthy", "Stanford AI Lab"],
  ["Sophie", "Wilson", "Acorn Computers"],
  ["Dennis", "Ritchie", "Bell Labs"],
  ["Shafi", "Goldwasser", null],
  ["Leslie", "Lamport", "Microsoft Research"],
  ["Annie", "Easley", null],
  ["Guido", "van Rossum", "Python Software Foundation"],
  ["Joan", "Clarke", null],
  ["Bjarne", "Stroustrup", null],
] as const;
const PLANS = ["gold", "silver", "bronze"];
const CITIES = ["London", "Berlin", "Lisbon", "Toronto", "Nairobi", "Osaka"];

const LONG = {
  firstName: "Maximilian-Alexander",
  lastName: "Featherstonehaugh-Worthington-Smythe",
  email: "maximilian.alexander.featherstonehaugh-worthington-smythe@procurement.subsidiary.enterprise-example.co.uk",
  phone: "+1 415 555 0100",
  businessName: "International Consolidated Widgets, Sprockets and Precision Gearworks Holdings plc",
  website: "https://www.international-consolidated-widgets-and-precision-gearworks.example/about/leadership/procurement",
  notes: "Prefers email.\nAsk for the purchase-order number before invoicing; their accounts-payable system rejects invoices without one. ReferenceCode:ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
  address: { line1: "Unit 14, Riverside Industrial Estate", line2: "Building C, Loading Bay 3", city: "Kingston upon Thames", state: "Greater London", zip: "KT1 1AA", country: "GB" },
  tags: ["vip", "newsletter", "churn-risk", "procurement-approval-required"],
  customFields: { Plan: "gold", Seats: 1200, Topics: ["product news", "webinars"] },
};

export interface Seeded {
  busyContact: string;
  longContact: string;
  /** The subscriptions' descriptions (their links' names), by state. */
  webhooks: { recovered: string; failing: string; disabled: string };
}

/** Fills the project of `key` through the API; `receiver(replies)` starts a loopback receiver answering `replies` in turn (the last one from then on). */
export async function seedApi(server: ServerHandle, key: string, receiver: (replies: Reply[]) => Promise<string>): Promise<Seeded> {
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await server.api(method, path, { key, body });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json;
  };

  // Subscriptions first, so the contacts below are delivered to them.
  const webhooks = { recovered: "Billing sync", failing: "Slack #sales notifications", disabled: "Legacy CRM mirror (retired in March)" };
  await api("POST", "/webhooks", { url: await receiver([{ status: 500, body: "upstream database unavailable" }, { status: 503, body: "maintenance" }, { status: 200, body: "ok" }]), events: ["contact.created"], description: webhooks.recovered });
  await api("POST", "/webhooks", { url: await receiver([{ status: 410, body: '{"error":"channel_archived","detail":"The channel was archived by an admin."}' }]), events: ["*"], description: webhooks.failing });
  const legacy = await api("POST", "/webhooks", { url: await receiver([{ status: 200 }]), events: ["contact.created", "contact.updated"], description: webhooks.disabled });
  await api("PATCH", `/webhooks/${legacy.id}`, { status: "disabled" });

  const ids: string[] = [];
  for (const [i, [first, last, business]] of PEOPLE.entries()) {
    const email = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, "") + "@example.com";
    const c = await api("POST", "/contacts", {
      firstName: first,
      lastName: last,
      email,
      phone: `+1 202 555 01${String(10 + i).padStart(2, "0")}`,
      ...(business ? { businessName: business } : {}),
      tags: i % 3 === 0 ? ["newsletter"] : i % 5 === 0 ? ["vip"] : [],
      customFields: { Plan: PLANS[i % 3], Seats: 5 + i * 3 },
      address: { city: CITIES[i % CITIES.length] },
      subscribed: i % 2 === 0,
    });
    ids.push(c.contactId);
  }
  // Someone entered twice: both show the duplicate signal.
  await api("POST", "/contacts", { firstName: "Grace B.", lastName: "Hopper", email: "grace.hopper@example.com", source: "trade show" });
  const long = await api("POST", "/contacts", LONG);

  // A busy timeline: typed interactions with fields, notes, one long.
  const types = await api("GET", "/interaction-types");
  const typeId = (name: string) => (types.data as Array<{ id: string; name: string }>).find((t) => t.name === name)?.id;
  const busy = ids[0]!;
  const logs = [
    { interactionTypeId: typeId("Call"), note: "Discussed the renewal; they want to add 10 seats.", fields: { outcome: "quote requested", duration: "25 min" } },
    { interactionTypeId: typeId("Meeting"), note: "On-site demo of the reporting module with the finance team.", fields: { attendees: "4", location: "Arlington office" } },
    { type: "note", note: "Sent the quote (Q-2024-118).\nFollow up next Tuesday if no answer." },
    { type: "note", note: "A very long note pasted from an email thread: ".concat("the customer described the integration problem in detail; ".repeat(12)) },
    { interactionTypeId: typeId("Email"), note: "Signed order form received.", fields: { po: "PO-77812" } },
  ];
  for (const log of logs) await api("POST", `/contacts/${busy}/interactions`, log);
  await api("POST", `/contacts/${long.contactId}/interactions`, { type: "note", note: "Called the procurement desk; https://www.international-consolidated-widgets-and-precision-gearworks.example/procurement/vendor-onboarding/forms/supplier-registration-2024.pdf" });
  await api("PATCH", `/contacts/${ids[1]}`, { notes: "Moved to the enterprise plan.", tags: ["vip"] });

  // The recovered subscription has its failures and its success on record before any page is shot.
  const list = await api("GET", "/webhooks");
  const recovered = (list.data as Array<{ id: string; description: string }>).find((w) => w.description === webhooks.recovered)!;
  await until(
    async () => {
      const attempts = await api("GET", `/webhooks/${recovered.id}/attempts?limit=100`);
      return (attempts.data as Array<{ statusCode: number | null }>).some((a) => a.statusCode === 200);
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "a delivered attempt of the recovered subscription" },
  );
  return { busyContact: busy, longContact: long.contactId, webhooks };
}

/** A trade-show export: good rows, a duplicate, and rows the importer refuses (no name, a bad email, a bad plan). */
/** A HubSpot export's header (docs/import-export.md §2: matched by alias), with a column no field matches. */
export const HUBSPOT_CSV = [
  "First Name,Last Name,Email,Phone Number,Company Name,City,Lead Status",
  "Grace,Hopper,grace.hopper@example.com,+1 212 555 0100,Navy Labs,Arlington,Open",
  "Alan,Turing,alan.turing@example.co.uk,+44 161 496 0000,,Manchester,In progress",
].join("\n") + "\n";

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

/** A CSV of `n` plain rows, large enough that its import is still running when its page is first shown. */
export function bigCsv(n: number): string {
  const rows = ["firstName,lastName,email,address.city"];
  for (let i = 0; i < n; i++) rows.push(`Lead${i},Export,lead${i}.export@example.org,${CITIES[i % CITIES.length]}`);
  return rows.join("\n");
}
