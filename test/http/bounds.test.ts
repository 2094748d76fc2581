/**
 * Bounds on what one request or one file can make the server do (docs/api.md §7): the
 * number of `tag` filters, the contact numbers a relabel may take (and that every number
 * the service then generates stays reachable), the per-address form limiter's state, and
 * the size of one CSV record in `crm import`. Black-box: the real server and its CLI.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let dir: string;

beforeAll(async () => {
  srv = await startServer();
  dir = mkdtempSync(join(tmpdir(), "crm-bounds-test-"));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const tags = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

describe("tag filters: at most 20 in one query", () => {
  test("20 tag filters are answered (every tag must match)", async () => {
    const all = tags(20);
    const made = await srv.api("POST", "/contacts", { body: { firstName: "Tagged", tags: all } });
    expectStatus(made, 201);
    const res = await srv.api("GET", "/contacts", { query: { tag: all } });
    expectStatus(res, 200);
    expect(res.json.data.map((c: { contactId: string }) => c.contactId)).toEqual([made.json.contactId]);
  });

  test("21 tag filters are 422 with fieldName tag", async () => {
    expectError(await srv.api("GET", "/contacts", { query: { tag: tags(21) } }), "ERR_FORM_VALIDATION", "tag");
  });

  test("500 tag filters are 422 with fieldName tag, never a 500", async () => {
    expectError(await srv.api("GET", "/contacts", { query: { tag: tags(500) } }), "ERR_FORM_VALIDATION", "tag");
  });
});

describe("relabels: CR-n with n up to 999,999,999,999, and every generated number stays reachable", () => {
  test("a relabel past 999,999,999,999 is 422 contactId and changes nothing", async () => {
    const p = await srv.newProject();
    const c = (await p.api("POST", "/contacts", { body: { firstName: "Bounded" } })).json;
    expect(c.contactId).toBe("CR-1");
    for (const target of ["CR-1000000000000", "CR-999999999999999", "CR-9007199254740993", `CR-${"9".repeat(40)}`]) {
      expectError(await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: target } }), "ERR_FORM_VALIDATION", "contactId");
    }
    expectStatus(await p.api("GET", `/contacts/${c.contactId}`), 200);
    // The refused relabels did not move the counter.
    const next = (await p.api("POST", "/contacts", { body: { firstName: "Next" } })).json;
    expect(next.contactId).toBe("CR-2");
  });

  test("after a relabel to CR-999999999999 the next contacts are CR-1000000000000 on, and GET, PATCH and their logs reach them", async () => {
    const p = await srv.newProject();
    const c = (await p.api("POST", "/contacts", { body: { firstName: "Top" } })).json;
    const relabelled = await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: "CR-999999999999" } });
    expectStatus(relabelled, 200);
    expect(relabelled.json.contactId).toBe("CR-999999999999");
    expectStatus(await p.api("GET", "/contacts/CR-999999999999"), 200);

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const made = await p.api("POST", "/contacts", { body: { firstName: `After ${i}` } });
      expectStatus(made, 201);
      expect(made.headers.get("location")).toBe(`/v1/contacts/${made.json.contactId}`);
      ids.push(made.json.contactId);
    }
    expect(ids).toEqual(["CR-1000000000000", "CR-1000000000001", "CR-1000000000002"]);
    for (const id of ids) {
      const got = await p.api("GET", `/contacts/${id}`);
      expectStatus(got, 200);
      expect(got.json.contactId).toBe(id);
      const patched = await p.api("PATCH", `/contacts/${id}`, { body: { lastName: "Reached" } });
      expectStatus(patched, 200);
      expect(patched.json).toMatchObject({ contactId: id, lastName: "Reached" });
      expectStatus(await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: "hello" } }), 201);
      const logs = await p.api("GET", `/contacts/${id}/interactions`);
      expectStatus(logs, 200);
      expect(logs.json.data).toHaveLength(1);
    }
    const listed = await p.api("GET", "/contacts", { query: { search: "CR-1000000000001" } });
    expect(listed.json.data.map((x: { contactId: string }) => x.contactId)).toEqual(["CR-1000000000001"]);
  });

  test("a relabel to a generated number of 13 digits is refused (past the bound), while the contact stays reachable", async () => {
    const p = await srv.newProject();
    const c = (await p.api("POST", "/contacts", { body: { firstName: "Top" } })).json;
    expectStatus(await p.api("PATCH", `/contacts/${c.contactId}`, { body: { contactId: "CR-999999999999" } }), 200);
    const next = (await p.api("POST", "/contacts", { body: { firstName: "Next" } })).json;
    expect(next.contactId).toBe("CR-1000000000000");
    expectError(await p.api("PATCH", `/contacts/CR-999999999999`, { body: { contactId: "CR-1000000000005" } }), "ERR_FORM_VALIDATION", "contactId");
    expectStatus(await p.api("PATCH", `/contacts/${next.contactId}`, { body: { contactId: "CR-42" } }), 200);
    expectStatus(await p.api("GET", "/contacts/CR-42"), 200);
  });
});

describe("the form limiter keeps state only for forms that exist", () => {
  test("submissions to 70 unknown forms are 404 and count for nothing: the same address then submits to a real form", async () => {
    for (let i = 0; i < 70; i++) {
      const res = await srv.api("POST", `/forms/frm_unknown${i}/submissions`, { key: null, body: { email: `u${i}@example.com` } });
      expectError(res, "ERR_NOT_FOUND");
    }
    const form = await srv.cli(["form", "create", "--project", srv.projectId, "--name", "Real", "--fields", "email", "--json"]);
    expectStatus(await srv.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: "real@example.com" } }), 201);
  });
});

describe("crm import: a CSV record has at most 500 fields and 1 MiB", () => {
  const run = async (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    const project = await srv.cli(["project", "create", "--name", `import-${name}`, "--json"]);
    return { project, result: await srv.cliRaw(["import", path, "--project", project.id, "--json"]) };
  };

  test("a row of 501 fields stops the import with an error naming the row; the rows before it are imported", async () => {
    const { result } = await run("wide.csv", `email,firstName\na@example.com,Ann\n${",".repeat(500)}\nb@example.com,Bob\n`);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("row 2: a record has more than 500 fields.");
    const summary = JSON.parse(result.stdout.trim());
    expect(summary.created).toBe(1);
  });

  test("a line of 10 MB of commas is refused at once", async () => {
    const { result } = await run("commas.csv", `email\n${",".repeat(10_000_000)}\n`);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("row 1: a record has more than 500 fields.");
  });

  test("a row over 1 MiB is refused, naming the bound", async () => {
    const { result } = await run("long.csv", `email,notes\na@example.com,"${"n".repeat(1_048_576)}"\n`);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain("row 1: a record is larger than 1048576 bytes");
  });
});
