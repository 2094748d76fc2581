/**
 * Erasure reaches the file (docs/security.md §7), black box. SQLite: the
 * database file and its write-ahead log are read as bytes, and a person's former values
 * (emails changed by PATCH, names, phones) and the rows of a CSV uploaded in the console
 * must not be in them once an erase has checkpointed the log: `secure_delete` is on for every
 * write, not only the erase's. PostgreSQL: the erase vacuums the tables it touched.
 *
 * Any `crm` command also checkpoints the log as it opens the file when no reader holds it
 * (SQLite does so for `PRAGMA journal_mode = WAL` on a new connection), so the console's
 * Erase, served by the server alone, is the test that needs the erase's own checkpoint.
 *
 * Every value carries random letters or digits found nowhere else, so a match cannot be
 * chance; the haystack is the files as Latin-1 text, lower-cased (names are stored as given
 * and lower-cased as search terms; phones as given and as their match key).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pageText, signedInAdmin, type AdminClient } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { postgresOnly, sqliteOnly, testBackend } from "../helpers/postgres.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { until } from "../helpers/until.ts";
import { hitsIn } from "./erase-person.ts";

setDefaultTimeout(120_000);

let srv: ServerHandle;
let admin: AdminClient;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  if (testBackend() === "sqlite") ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
}, 60_000);
afterAll(() => srv?.stop(), 60_000);

const letters = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => String.fromCharCode(97 + (b % 26))).join("");
const digits = (n: number) => Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) => String(b % 10)).join("");

/**
 * A name, an email and a phone, each unique to this call; `length` random letters in each
 * text (values of one length could be written over in place, which proves nothing). The
 * phone is digits only, so its stored forms all contain `phone.slice(1)`.
 */
function values(length = 10) {
  const word = letters(length);
  return {
    firstName: `Oriel${word}`,
    lastName: `Vantmoor${letters(length)}`,
    email: `mail.${word}@erase-file.example.org`,
    phone: `+4420${digits(8)}`,
  };
}
type Values = ReturnType<typeof values>;
/** What to look for in the file: lower-cased, the phone without its `+`. */
const needlesOf = (v: Values) => [v.firstName, v.lastName, v.email, v.phone.slice(1)].map((s) => s.toLowerCase());

/** The database file and its write-ahead log (when present) as lower-cased text. */
function fileText(): string {
  const path = srv.env.CRM_DB_PATH!;
  const parts = [path, `${path}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p).toString("latin1"));
  return parts.join("\n").toLowerCase();
}

async function create(p: ProjectInfo, body: Record<string, unknown>): Promise<string> {
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json.contactId as string;
}

async function patch(p: ProjectInfo, contactId: string, body: Record<string, unknown>) {
  expectStatus(await p.api("PATCH", `/contacts/${contactId}`, { body }), 200);
}

/** `crm contact erase`: exit 0, and no warning that the file was not reached. */
async function erase(projectId: string, contactId: string) {
  const r = await srv.cliRaw(["contact", "erase", "--project", projectId, contactId, "--json"]);
  expect(r.exitCode, r.stderr).toBe(0);
  expect(r.stderr).not.toContain("warning");
}

/** An erase of a contact made for it: the server-side action that checkpoints the log. */
async function checkpointByErase(p: ProjectInfo) {
  await erase(p.id, await create(p, { firstName: `Bystander${letters(6)}` }));
}

describe.skipIf(sqliteOnly)("SQLite: no byte of what was freed stays in the file", () => {
  test("after an erase, none of the person's former emails, names or phones is in crm.db or crm.db-wal", async () => {
    const p = await srv.newProject();
    const [first, second, third, fourth] = [values(10), values(14), values(6), values(12)];
    const contactId = await create(p, first);
    // The email three times, then the names and the phone: four of each value were stored.
    await patch(p, contactId, { email: second.email });
    await patch(p, contactId, { email: third.email });
    await patch(p, contactId, { email: fourth.email });
    await patch(p, contactId, { firstName: second.firstName, lastName: second.lastName });
    await patch(p, contactId, { phone: second.phone });
    await patch(p, contactId, { firstName: third.firstName, lastName: third.lastName, phone: third.phone });
    const everything = [first, second, third].flatMap(needlesOf).concat(fourth.email);
    // The search sees what the file holds: the current values are there before the erase.
    expect(hitsIn(fileText(), [fourth.email, third.firstName.toLowerCase(), third.phone.slice(1)])).toHaveLength(3);

    await erase(p.id, contactId);
    expect(hitsIn(fileText(), everything)).toEqual([]);
  });

  test("after the console's Erase, served by the server alone, none of the person's former values is in crm.db or crm.db-wal", async () => {
    const p = await srv.newProject();
    const [first, second, third] = [values(8), values(12), values(16)];
    const contactId = await create(p, first);
    await patch(p, contactId, second);
    await patch(p, contactId, third);
    const everything = [first, second, third].flatMap(needlesOf);
    expect(hitsIn(fileText(), everything).length).toBeGreaterThan(0);

    const erasePath = `/admin/projects/${p.id}/contacts/${contactId}/erase`;
    await admin.get(erasePath);
    const res = await admin.post(erasePath, { confirm: contactId });
    expect(res.status, pageText(res.text).slice(0, 300)).toBe(303);
    expect(hitsIn(fileText(), everything)).toEqual([]);
  });

  test("secure_delete is on for every write: what a PATCH replaced is gone from the file at the next checkpoint, where nothing keeps it on purpose", async () => {
    // A contact's former values are kept on purpose by its change history (docs/api.md §19.1),
    // so what a PATCH frees is shown on a subscription's description, which nothing else keeps.
    const p = await srv.newProject();
    // Each value longer than the one before, so SQLite cannot write the new one where the old one was.
    const descriptions = [30, 60, 120, 400].map((n) => `desc-${letters(n)}`);
    const created = await p.api("POST", "/webhooks", { body: { url: "https://93.184.216.34/crm-hook", events: ["contact.created"], description: descriptions[0] } });
    expectStatus(created, 201);
    for (const description of descriptions.slice(1)) expectStatus(await p.api("PATCH", `/webhooks/${created.json.id}`, { body: { description } }), 200);
    const replaced = descriptions.slice(0, -1).map((d) => d.slice(0, 40));
    expect(hitsIn(fileText(), replaced).length).toBeGreaterThan(0);

    await checkpointByErase(p);
    expect(hitsIn(fileText(), replaced)).toEqual([]);
    // The value as it is now is untouched.
    expect(hitsIn(fileText(), [descriptions.at(-1)!.slice(0, 40)])).toHaveLength(1);
  });

  test("a CSV uploaded in the console and started leaves no byte of its rows in the file once its rejected rows are deleted", async () => {
    const p = await srv.newProject();
    const rows = [values(), values(), values()];
    // Every row is refused (its email is not one), so no contact keeps its cells: only the upload held them.
    const csv = "firstName,lastName,email,phone\n" + rows.map((v) => `${v.firstName},${v.lastName},${v.email.replace("@", "-at-")},${v.phone}`).join("\n") + "\n";
    const needles = rows.flatMap((v) => [v.firstName, v.lastName, v.email.replace("@", "-at-"), v.phone.slice(1)].map((s) => s.toLowerCase()));
    const importPath = `/admin/projects/${p.id}/import`;
    await admin.get(importPath);
    const form = new FormData();
    form.append("_csrf", admin.csrf);
    form.append("file", new File([csv], "people.csv", { type: "text/csv" }));
    const uploaded = await admin.request("POST", importPath, { body: form, headers: { Origin: srv.origin } });
    expect(uploaded.status, uploaded.text.slice(0, 300)).toBe(303);
    const preview = await admin.get(uploaded.location!);
    expect(pageText(preview.text)).toContain(rows[0]!.firstName);
    expect(hitsIn(fileText(), needles)).toEqual(needles);

    const started = await admin.post(`${uploaded.location!}/start`);
    expect(started.status, pageText(started.text).slice(0, 300)).toBe(303);
    const done = await until(
      async () => {
        const page = await admin.get(started.location!);
        return !/<meta http-equiv="refresh"/.test(page.text) && page;
      },
      { timeoutMs: 60_000, intervalMs: 100, what: "the import to finish" },
    );
    expect(pageText(done.text)).toContain("email must be a valid email address.");
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
    // The rejected rows are kept to be fixed (docs/import-export.md §1.11) until deleted from the import's page.
    const deleted = await admin.post(`${started.location!}/rejected/delete`, { confirm: "yes" });
    expect(deleted.status, pageText(deleted.text).slice(0, 300)).toBe(303);

    await checkpointByErase(p);
    expect(hitsIn(fileText(), needles)).toEqual([]);
  });
});

describe.skipIf(postgresOnly)("PostgreSQL: the erase vacuums the tables it touched", () => {
  const touched = ["contacts", "interaction_logs", "contact_tags", "contact_search_terms", "search_typo_keys", "events", "idempotency_records"];

  test("after an erase, pg_stat_user_tables counts one more manual vacuum of contacts, its logs, tags, search terms, events and stored answers", async () => {
    const p = await srv.newProject();
    const v = values();
    const contactId = await create(p, { ...v, tags: ["vacuumed"] });
    expectStatus(await p.api("POST", `/contacts/${contactId}/interactions`, { body: { type: "note", note: `Met ${v.firstName}` } }), 201);
    const side = await openSideDatabase(srv.env, { readonly: true });
    try {
      const counts = async () =>
        Object.fromEntries(
          (await side.all<{ relname: string; n: number }>("SELECT relname, vacuum_count AS n FROM pg_stat_user_tables WHERE schemaname = current_schema()")).map((r) => [
            r.relname,
            Number(r.n),
          ]),
        );
      const before = await counts();
      for (const table of touched) expect(before[table], table).toBeDefined();
      await erase(p.id, contactId);
      const grown = await until(
        async () => {
          const now = await counts();
          return touched.every((t) => now[t]! > before[t]!) && now;
        },
        { timeoutMs: 10_000, what: "a vacuum of every table the erase touched" },
      );
      for (const table of touched) expect(grown[table], table).toBeGreaterThan(before[table]!);
    } finally {
      await side.close();
    }
  });
});
