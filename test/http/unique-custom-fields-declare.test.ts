/**
 * Declaring a custom field unique (docs/api.md §18.3, docs/cli.md, docs/admin.md): `crm
 * custom-field create … --unique` and the console's "Unique" box, for type text only; the
 * reference record shows `unique` (true or false on every record). What a unique field does
 * to contact writes and matchOn is tested with the contacts (contacts-upsert.test.ts).
 * One server for the file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let p: ProjectInfo;
let admin: AdminClient;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  p = await srv.newProject({ name: "unique-fields" });
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const fieldsByTitle = async () => {
  const { items } = await walk(p.api, "/custom-fields", { limit: 200 });
  return Object.fromEntries(items.map((f: any) => [f.title, f]));
};

const decode = (s: string) => s.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, "&");

describe("crm custom-field create --unique", () => {
  test("a text field made with --unique is stored unique: its JSON and its reference record say unique: true", async () => {
    const out = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "External ID", "--type", "text", "--unique", "--json"]);
    expect(out).toEqual({ id: expect.stringMatching(/^cf_/), title: "External ID", type: "text", unique: true, writable: true });
    expect((await fieldsByTitle())["External ID"]).toEqual({ id: out.id, title: "External ID", type: "text", writable: true, unique: true });
  });

  test("without --unique a field is not unique: unique: false on its record, whatever its type", async () => {
    await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Nickname", "--type", "text", "--json"]);
    await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Size", "--type", "select", "--options", "S,M", "--json"]);
    const fields = await fieldsByTitle();
    expect(fields.Nickname).toMatchObject({ type: "text", unique: false });
    expect(fields.Size).toMatchObject({ type: "select", options: ["S", "M"], unique: false });
    // Every record carries the member, true or false.
    for (const f of Object.values(fields)) expect(typeof (f as any).unique).toBe("boolean");
  });

  test.each(["textarea", "number", "email", "select"])("--unique with type %s is a usage error (exit 2) naming --unique, and creates nothing", async (type) => {
    const title = `Not unique ${type}`;
    const args = ["custom-field", "create", "--project", p.id, "--title", title, "--type", type, "--unique", "--json"];
    if (type === "select") args.push("--options", "a,b");
    const r = await srv.cliRaw(args);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`--unique is only for type text, not ${type}`);
    expect((await fieldsByTitle())[title]).toBeUndefined();
  });

  test("crm help custom-field create lists --unique", async () => {
    const r = await srv.cliRaw(["help", "custom-field", "create"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/--unique\s+\S/);
  });
});

describe("the console's Unique box", () => {
  const refPath = () => `/admin/projects/${p.id}/reference`;

  test("the custom field form has the Unique checkbox, and the list shows which fields are unique", async () => {
    await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Member number", "--type", "text", "--unique", "--json"]);
    const page = await admin.get(refPath());
    expect(page.status).toBe(200);
    expect(page.text).toContain('<input type="checkbox" id="custom-fields-unique" name="unique" value="on"/>');
    expect(decode(page.text)).toContain('<label for="custom-fields-unique">Unique (no two contacts share a value; can be an upsert match key)</label>');
    // Columns: title, type, options, writable, unique, id.
    const rows = tableRows(page.text, "Custom fields");
    expect(rows.find((r) => r[0] === "Member number")![4]).toBe("Unique");
    expect(rows.find((r) => r[0] === "Nickname")![4]).toBe("—");
  });

  test("a text field created with the box ticked is unique; without it, not", async () => {
    const ticked = await admin.post(`${refPath()}/custom-fields`, { title: "Console key", type: "text", options: "", unique: "on" });
    expect(ticked.status).toBe(303);
    const plain = await admin.post(`${refPath()}/custom-fields`, { title: "Console note", type: "text", options: "" });
    expect(plain.status).toBe(303);
    const fields = await fieldsByTitle();
    expect(fields["Console key"]).toMatchObject({ type: "text", unique: true });
    expect(fields["Console note"]).toMatchObject({ type: "text", unique: false });
  });

  test("the box ticked on another type is refused at the box (422), and nothing is created", async () => {
    const res = await admin.post(`${refPath()}/custom-fields`, { title: "Console seats", type: "number", options: "", unique: "on" });
    expect(res.status).toBe(422);
    expect(decode(res.text)).toContain('<p class="error" id="custom-fields-unique-error">Unique is only for type text, not number.</p>');
    // The form keeps what was sent: the box is still ticked.
    expect(res.text).toContain('<input type="checkbox" id="custom-fields-unique" name="unique" value="on" checked=""/>');
    expectStatus(await p.api("GET", "/custom-fields"), 200);
    expect((await fieldsByTitle())["Console seats"]).toBeUndefined();
  });
});
