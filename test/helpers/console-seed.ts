/**
 * A project filled as an operator's would be, for the console's browser tests and its
 * screenshots (docs/admin.md §3): contact types, interaction types, custom fields and tags;
 * a few dozen contacts (long names and emails among them) with interactions of several
 * types; a form with a submission; a webhook subscription whose receiver fails and one whose
 * receiver answers; a duplicate pair, a merge, a deleted contact and a finished CSV import.
 * Through the CLI, the API and (for the import) the console over HTTP. A step that fails is
 * noted in `problems` and the rest goes on, so a crawl still sees what could be made.
 */
import { AdminClient } from "./admin.ts";
import { startReceiver, type Receiver } from "./receiver.ts";
import { walk, type ProjectInfo, type ServerHandle } from "./server.ts";
import { until } from "./until.ts";

export interface ConsoleSeed {
  project: ProjectInfo;
  /** Every contact made, by contact id, in order (the merged-away one included). */
  contacts: string[];
  /** A contact with a long timeline of several interaction types. */
  busyContact: string;
  /** A contact whose every value is long. */
  longContact: string;
  /** Two contacts sharing an email, left for the Duplicates page. */
  duplicatePair: [string, string];
  /** The survivor of the merge, and the contact merged into it. */
  merged: { survivor: string; mergedAway: string };
  /** A contact deleted (restorable). */
  deletedContact: string;
  formId: string;
  /** Subscriptions by role: descriptions (their links' names) and ids. */
  webhooks: { failing: { id: string; description: string }; succeeding: { id: string; description: string } };
  /** The finished import's page (console path), if the import worked. */
  importPath?: string;
  receivers: Receiver[];
  /** Contacts the project holds once seeded (the merged-away and the deleted one not counted), as the API lists them. */
  liveContacts: number;
  /** Steps that failed (nothing else stops the seeding). */
  problems: string[];
}

/** The project's long name: a phone's navigation must still fit. */
export const SEED_PROJECT_NAME = "Northwind Customer Success and Renewals (EMEA)";

const PEOPLE: Array<[string, string, string | null]> = [
  ["Grace", "Hopper", "Navy Computing Lab"],
  ["Alan", "Turing", null],
  ["Katherine", "Johnson", "NASA Langley"],
  ["Linus", "Torvalds", null],
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
  ["Maximilian-Alexander", "Featherstonehaugh-Worthington-Smythe", "International Consolidated Widgets, Sprockets and Precision Gearworks Holdings plc"],
  ["Wolfeschlegelsteinhausenbergerdorff", "Oluwaseun-Adeyemi-Bankole", "Adeyemi-Bankole Renewable Energy Cooperative of Greater Lagos"],
  ["Zhang", "Wei", "深圳前海微众银行股份有限公司"],
  ["Søren", "Kierkegaard-Østergaard", null],
];
const PLANS = ["gold", "silver", "bronze"];
const CITIES = ["London", "Berlin", "Lisbon", "Toronto", "Nairobi", "Osaka", "Kingston upon Thames"];
const TAGS = ["vip", "newsletter", "churn-risk", "procurement-approval-required-before-invoicing"];

/** A HubSpot-style export (docs/import-export.md §2: matched by alias). */
export const SEED_IMPORT_CSV =
  [
    "First Name,Last Name,Email,Phone Number,Company Name,City",
    "Ines,Moreau,ines.moreau@example.fr,+33 1 42 68 53 00,Moreau Conseil,Paris",
    "Kenji,Watanabe,kenji.watanabe@example.jp,+81 3-1234-5678,,Tokyo",
    "Amara,Okafor,amara.okafor@example.ng,,Okafor Logistics,Lagos",
    "Priya,Raman,priya.raman(at)example.in,,,Chennai",
  ].join("\n") + "\n";

/** Fills a new project of `server`; `admin` (signed in) uploads the import. The caller stops `receivers`. */
export async function seedConsole(server: ServerHandle, admin: AdminClient, opts: { name?: string } = {}): Promise<ConsoleSeed> {
  const problems: string[] = [];
  const step = async <T>(what: string, work: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await work();
    } catch (error) {
      problems.push(`${what}: ${String(error).split("\n").slice(0, 3).join(" ")}`);
      return undefined;
    }
  };
  const project = await server.newProject({ name: opts.name ?? SEED_PROJECT_NAME });
  const api = async (method: string, path: string, body?: unknown, ok = [200, 201, 202, 204]) => {
    const res = await project.api(method, path, { body });
    if (!ok.includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
    return res.json;
  };
  const cli = (args: string[]) => server.cli([...args, "--project", project.id, "--json"]);

  // Reference data: contact types, interaction types, custom fields (tags come with the contacts).
  const types = await step("contact types", async () => {
    const partner = await cli(["contact-type", "create", "--category", "Other", "--name", "Partner"]);
    const trial = await cli(["contact-type", "create", "--category", "Lead", "--name", "Trial lead"]);
    await cli(["contact-type", "create", "--category", "Customer", "--name", "Enterprise customer with a dedicated account manager"]);
    return [partner.id as string, trial.id as string];
  });
  await step("interaction types", async () => {
    for (const name of ["Demo", "Support ticket", "Site visit"]) await cli(["interaction-type", "create", "--name", name]);
  });
  await step("custom fields", async () => {
    await cli(["custom-field", "create", "--title", "Plan", "--type", "select", "--options", PLANS.join(",")]);
    await cli(["custom-field", "create", "--title", "Seats", "--type", "number"]);
    await cli(["custom-field", "create", "--title", "Renewal date", "--type", "date"]);
  });

  // Webhooks first, so the contacts below are delivered: one receiver always fails, one answers.
  const receivers: Receiver[] = [];
  const failingReceiver = await startReceiver({ status: 500, body: "upstream database unavailable" });
  const okReceiver = await startReceiver({ status: 200, body: "ok" });
  receivers.push(failingReceiver, okReceiver);
  const hook = async (url: string, description: string, events: string[]) => ({ id: (await api("POST", "/webhooks", { url, events, description })).id as string, description });
  const failing = await hook(failingReceiver.url, "Slack #sales notifications (channel archived)", ["*"]);
  const succeeding = await hook(okReceiver.url, "Billing sync", ["contact.created", "contact.updated", "interaction_log.created"]);

  // Contacts: a few dozen, long values among them.
  const contacts: string[] = [];
  for (const [i, [first, last, business]] of PEOPLE.entries()) {
    const local = `${first}.${last}`.toLowerCase().normalize("NFD").replace(/[^a-z.-]/g, "");
    const long = first.length + last.length > 30;
    const c = await api("POST", "/contacts", {
      firstName: first,
      lastName: last,
      email: long ? `${local}@procurement.subsidiary.enterprise-example.co.uk` : `${local || `person${i}`}@example.com`,
      phone: `+1 202 555 01${String(10 + i).padStart(2, "0")}`,
      ...(business ? { businessName: business } : {}),
      ...(types && i % 4 === 1 ? { contactTypeId: types[i % 2] } : {}),
      tags: long ? TAGS : i % 3 === 0 ? ["newsletter"] : i % 5 === 0 ? ["vip"] : [],
      customFields: { Plan: PLANS[i % 3], Seats: 5 + i * 3 },
      address: { city: CITIES[i % CITIES.length] },
      ...(long ? { notes: "Ask for the purchase-order number before invoicing. ReferenceCode:ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ" } : {}),
    });
    contacts.push(c.contactId);
  }
  const busyContact = contacts[0]!;
  const longContact = contacts[PEOPLE.findIndex(([f]) => f.startsWith("Maximilian"))]!;

  // Interactions of several types on one timeline, and some elsewhere.
  await step("interactions", async () => {
    const list = (await api("GET", "/interaction-types")).data as Array<{ id: string; name: string }>;
    const typeId = (name: string) => list.find((t) => t.name === name)?.id;
    const logs = [
      { interactionTypeId: typeId("Call"), note: "Discussed the renewal; they want to add 10 seats.", fields: { outcome: "quote requested", duration: "25 min" } },
      { interactionTypeId: typeId("Meeting"), note: "On-site demo of the reporting module with the finance team.", fields: { attendees: "4", location: "Arlington office" } },
      { type: "note", note: "Sent the quote (Q-2024-118).\nFollow up next Tuesday if no answer." },
      { interactionTypeId: typeId("Demo"), note: "A very long note pasted from an email thread: ".concat("the customer described the integration problem in detail; ".repeat(10)) },
      { interactionTypeId: typeId("Email"), note: "Signed order form received.", fields: { po: "PO-77812" } },
      { interactionTypeId: typeId("Support ticket"), note: "Login loop on Safari", fields: { ticket: "SUP-4411", url: "https://support.example.com/tickets/SUP-4411/conversation/attachments/screenshot-2024-03-02.png" } },
    ];
    for (const log of logs) await api("POST", `/contacts/${busyContact}/interactions`, log);
    await api("POST", `/contacts/${longContact}/interactions`, { interactionTypeId: typeId("Site visit"), note: "Visited the loading bay; https://www.international-consolidated-widgets-and-precision-gearworks.example/procurement/vendor-onboarding/forms/supplier-registration-2024.pdf" });
    for (const id of contacts.slice(1, 8)) await api("POST", `/contacts/${id}/interactions`, { interactionTypeId: typeId("Call"), note: "Intro call." });
    await api("PATCH", `/contacts/${contacts[1]}`, { notes: "Moved to the enterprise plan.", tags: ["vip"] });
  });

  // A form and a submission.
  const formId =
    (await step("form", async () => {
      const form = await cli(["form", "create", "--name", "Request a quote", "--fields", "firstName,lastName,email,Plan", "--redirect-url", "https://www.example.com/thanks-for-your-request"]);
      const res = await server.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { firstName: "Hedy", lastName: "Kiesler", email: "hedy.kiesler@example.com" } });
      if (res.status !== 201) throw new Error(`submission: ${res.status} ${res.text.slice(0, 200)}`);
      return form.id as string;
    })) ?? "";

  // A duplicate pair (left for the Duplicates page), a merge, a deleted contact.
  const dup = async (body: Record<string, unknown>) => (await api("POST", "/contacts", body)).contactId as string;
  const duplicatePair: [string, string] = [
    await dup({ firstName: "Margaret", lastName: "Hamilton", email: "margaret.hamilton@mit-instrumentation.example", phone: "+1 617 555 0100", tags: ["vip"] }),
    await dup({ firstName: "Margaret", lastName: "Hamilton-Heafield", email: "Margaret.Hamilton@mit-instrumentation.example", notes: "Prefers calls in the morning." }),
  ];
  const survivor = await dup({ firstName: "Ada", lastName: "Lovelace", email: "ada@analytical-engines.example", businessName: "Analytical Engines Ltd" });
  const mergedAway = await dup({ firstName: "Ada", lastName: "King", email: "ADA@analytical-engines.example", notes: "Countess of Lovelace." });
  await step("merge", () => api("POST", `/contacts/${survivor}/merge`, { contactIds: [mergedAway] }));
  const deletedContact = await dup({ firstName: "Temporary", lastName: "Contact", email: "temporary@example.com" });
  await step("delete", () => api("DELETE", `/contacts/${deletedContact}`));
  contacts.push(...duplicatePair, survivor, mergedAway, deletedContact);

  // An import through the console: upload, preview, start, finished.
  const importPath = await step("import", () => importCsv(admin, server.origin, project.id, SEED_IMPORT_CSV, "hubspot-contacts-export.csv"));

  // Both subscriptions have attempts on record before any page is seen.
  await step("webhook attempts", () =>
    until(
      async () => {
        const [f, s] = await Promise.all([api("GET", `/webhooks/${failing.id}/attempts`), api("GET", `/webhooks/${succeeding.id}/attempts`)]);
        return f.data.length > 0 && s.data.some((a: { statusCode: number | null }) => a.statusCode === 200);
      },
      { timeoutMs: 30_000, intervalMs: 250, what: "attempts of both subscriptions" },
    ),
  );

  const liveContacts = (await walk(project.api, "/contacts", { limit: 100 })).items.length;
  return { liveContacts, project, contacts, busyContact, longContact, duplicatePair, merged: { survivor, mergedAway }, deletedContact, formId, webhooks: { failing, succeeding }, importPath, receivers, problems };
}

/** Uploads `csv` on the console's import page without starting it; the path of its preview (kept an hour). */
export async function uploadCsv(admin: AdminClient, origin: string, projectId: string, csv: string, name: string): Promise<string> {
  const base = `/admin/projects/${projectId}/import`;
  await admin.get(base);
  const form = new FormData();
  form.append("_csrf", admin.csrf);
  form.append("file", new File([csv], name, { type: "text/csv" }));
  const uploaded = await admin.request("POST", base, { body: form, headers: { Origin: origin } });
  if (uploaded.status !== 303 || !uploaded.location) throw new Error(`upload: ${uploaded.status} ${uploaded.text.slice(0, 300)}`);
  const preview = await admin.get(uploaded.location);
  if (preview.status !== 200) throw new Error(`preview: ${preview.status}`);
  return uploaded.location;
}

/** Uploads `csv` on the console's import page, starts it without choices and waits for it to finish; its page's path. */
export async function importCsv(admin: AdminClient, origin: string, projectId: string, csv: string, name: string): Promise<string> {
  const previewPath = await uploadCsv(admin, origin, projectId, csv, name);
  const started = await admin.post(`${previewPath}/start`);
  if (started.status !== 303 || !started.location) throw new Error(`start: ${started.status} ${started.text.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 300)}`);
  const location = started.location;
  await until(
    async () => {
      const page = await admin.get(location);
      return page.status === 200 && !/<meta http-equiv="refresh"/.test(page.text);
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `import ${location} to finish` },
  );
  return location;
}
