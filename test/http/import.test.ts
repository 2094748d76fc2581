/**
 * `crm import` (docs/cli.md §4, docs/api.md §11; docs/webhooks.md §1.1) against a running server: the CLI writes
 * to the live database; the contacts are then read back over the API.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { sqliteOnly } from "../helpers/postgres.ts";
import { openSideDatabase } from "../helpers/side-db.ts";
import { BUN, runCommand } from "../helpers/spawn.ts";

let srv: ServerHandle;
let dir: string;

beforeAll(async () => {
  srv = await startServer();
  dir = mkdtempSync(join(tmpdir(), "crm-import-test-"));
}, 60_000);

afterAll(async () => {
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let fileCounter = 0;
function csv(text: string): string {
  const path = join(dir, `f${++fileCounter}.csv`);
  writeFileSync(path, text);
  return path;
}

async function runImport(projectId: string, path: string, ...extra: string[]) {
  const r = await srv.cliRaw(["import", path, "--project", projectId, "--json", ...extra]);
  if (r.exitCode !== 0) throw new Error(`import failed (${r.exitCode}): ${r.stdout}\n${r.stderr}`);
  return { ...JSON.parse(r.stdout.trim()), stderr: r.stderr };
}

/** Read from the database itself (the SQLite file, or PostgreSQL under CRM_TEST_BACKEND=postgres). */
async function contactCreatedEvents(projectId: string): Promise<number> {
  const db = await openSideDatabase(srv.env, { readonly: true });
  try {
    return (await db.get<{ n: number }>("SELECT count(*) AS n FROM events WHERE project_id = ? AND type = 'contact.created'", projectId))!.n;
  } finally {
    await db.close();
  }
}

describe("crm import", () => {
  let p: ProjectInfo;
  const cf: Record<string, string> = {};
  let summary: any;
  let since: string;

  beforeAll(async () => {
    p = await srv.newProject();
    const field = async (title: string, type: string, options?: string) =>
      (cf[title] = (await srv.cli(["custom-field", "create", "--project", p.id, "--title", title, "--type", type, "--json", ...(options ? ["--options", options] : [])])).id);
    await field("Plan", "select", "gold,silver");
    await field("Score", "number");
    await field("Colors", "multiselect", "red,green,blue");
    await field("Partner", "checkbox");
    since = new Date(Date.now() - 1000).toISOString();
    const long = "x".repeat(256);
    const file = csv(
      `\uFEFFFirstName,LASTNAME,email,tags,Plan,${cf.Score},Colors,Partner,subscribed,address.city,notes\r\n` +
        `Ada,Lovelace,ada@example.com,vip;Early,gold,42,red|blue,yes,true,"London, UK","said ""hi""\nthen left"\r\n` +
        `Bob,,not-an-email,,,,,,,,\r\n` +
        `${long},Long,long@example.com,,,,,,,,\r\n` +
        `Cy,,cy@example.com,vip,platinum,,,,,,\r\n` +
        `Dee,,dee@example.com,,silver,7.5,,no,0,,\r\n` +
        `Eve,,eve@example.com,,,abc,,,,,\r\n` +
        `Fay,,,,,,,,maybe,,\r\n` +
        `Gus,Short row\r\n` +
        `,,,,,,,,,,\r\n`,
    );
    summary = await runImport(p.id, file);
  }, 60_000);

  test("valid rows are created, invalid ones skipped with their row numbers and reasons; a blank row is skipped, not rejected", () => {
    expect(summary.rows).toBe(9);
    expect(summary.created).toBe(2);
    expect(summary.dryRun).toBe(false);
    expect(summary.skippedCount).toBe(6);
    expect(summary.blankRows).toBe(1);
    const byRow = Object.fromEntries(summary.skipped.map((s: any) => [s.row, s]));
    expect(Object.keys(byRow).map(Number)).toEqual([2, 3, 4, 6, 7, 8]);
    expect(byRow[2]).toMatchObject({ fieldName: "email", reason: expect.stringContaining("valid email") });
    expect(byRow[3]).toMatchObject({ fieldName: "firstName", reason: expect.stringContaining("255") });
    expect(byRow[4]).toMatchObject({ fieldName: `customFields.${cf.Plan}`, reason: expect.stringContaining("gold, silver") });
    expect(byRow[6]).toMatchObject({ fieldName: `customFields.${cf.Score}` });
    expect(byRow[7]).toMatchObject({ fieldName: "subscribed" });
    expect(byRow[8].reason).toContain("2 fields");
  });

  test("the contacts are served by the API and seen by updatedSince polling", async () => {
    const { items } = await walk(p.api, "/contacts", { updatedSince: since });
    expect(items.map((c: any) => c.firstName).sort()).toEqual(["Ada", "Dee"]);
    const ada = items.find((c: any) => c.firstName === "Ada");
    expect(ada).toMatchObject({
      lastName: "Lovelace",
      email: "ada@example.com",
      source: "import",
      subscribed: true,
      notes: 'said "hi"\nthen left',
      address: { city: "London, UK", line1: null },
      customFields: { [cf.Plan!]: "gold", [cf.Score!]: 42, [cf.Colors!]: ["red", "blue"], [cf.Partner!]: true },
    });
    expect(ada.tags.map((t: any) => t.name).sort()).toEqual(["Early", "vip"]);
    const dee = items.find((c: any) => c.firstName === "Dee");
    expect(dee).toMatchObject({ subscribed: false, customFields: { [cf.Plan!]: "silver", [cf.Score!]: 7.5, [cf.Partner!]: false } });
    // Skipped rows took no contact number: the two contacts are CR-1 and CR-2.
    expect(items.map((c: any) => c.contactId).sort()).toEqual(["CR-1", "CR-2"]);
  });

  test("no contact.created is recorded for imported contacts (docs/webhooks.md §1.1)", async () => {
    // A project of its own: the API create below must not change what the other tests list.
    const own = await srv.newProject();
    const out = await runImport(own.id, csv("firstName,email\nImp,imp@example.com\nOrt,ort@example.com\n"));
    expect(out).toMatchObject({ created: 2, skippedCount: 0 });
    expect(await contactCreatedEvents(own.id)).toBe(0);
    const res = await own.api("POST", "/contacts", { body: { firstName: "Via API" } });
    expect(res.status).toBe(201);
    expect(await contactCreatedEvents(own.id)).toBe(1);
  });

  test("progress goes to stderr as plain lines when not on a terminal", () => {
    expect(summary.stderr).toMatch(/import: 9 rows 100%, [\d,]+ rows\/s \(done\)/);
  });
});

describe("crm import options and refusals", () => {
  const rows = (n: number, offset = 0) =>
    "firstName,email\n" + Array.from({ length: n }, (_, i) => `P${offset + i},p${offset + i}@example.com`).join("\n") + "\n";

  test("--dry-run checks every row and writes nothing", async () => {
    const p = await srv.newProject();
    const out = await runImport(p.id, csv("firstName,email,tags\nAna,a@example.com,newtag\nBad,bad,\n"), "--dry-run");
    expect(out).toMatchObject({ dryRun: true, rows: 2, created: 1, skipped: [{ row: 2, fieldName: "email" }] });
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
    expect((await p.api("GET", "/tags")).json.data).toEqual([]);
    const listed = (await srv.cli(["project", "list", "--json"])).data.find((x: any) => x.id === p.id);
    expect(listed.contactCount).toBe(0);
  });

  test("the contact quota is respected, in a dry run too; the rest are skipped", async () => {
    const p = await srv.newProject({ contactQuota: 3 });
    expect((await p.api("POST", "/contacts", { body: { firstName: "First" } })).status).toBe(201);
    const file = csv(rows(5));
    const expected = { created: 2, skipped: [3, 4, 5].map((row) => ({ row, reason: "contact quota exhausted" })) };
    expect(await runImport(p.id, file, "--dry-run")).toMatchObject({ ...expected, dryRun: true });
    expect(await runImport(p.id, file)).toMatchObject({ ...expected, dryRun: false });
    const { items } = await walk(p.api, "/contacts");
    expect(items.length).toBe(3);
  });

  test("an unknown or repeated column is a usage error before anything is imported", async () => {
    const p = await srv.newProject();
    const unknown = await srv.cliRaw(["import", csv("firstName,favouriteColour\nAda,red\n"), "--project", p.id]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('unknown column "favouriteColour"');
    const repeated = await srv.cliRaw(["import", csv("email,EMAIL\na@example.com,b@example.com\n"), "--project", p.id]);
    expect(repeated.exitCode).toBe(2);
    expect((await srv.cliRaw(["import", join(dir, "missing.csv"), "--project", p.id])).exitCode).toBe(2);
    expect((await p.api("GET", "/contacts")).json.data).toEqual([]);
  });

  test("a leading ' is removed only before =, +, -, @, tab or CR (what crm export adds, docs/security.md §8)", async () => {
    const p = await srv.newProject();
    const score = (await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Score", "--type", "number", "--json"])).id;
    const total = (await srv.cli(["custom-field", "create", "--project", p.id, "--title", "=Total", "--type", "text", "--json"])).id;
    const file = csv(
      "firstName,lastName,phone,notes,Score,'=Total,tags\r\n" +
        `"'=HYPERLINK(""http://x"")",'hello,'+1 415 555 0100,"'\tindented",'-0.5,'@SUM(A1),'-a; 'b\r\n` +
        `''=x,'0123,+1 415 555 0101,"'\rcr",-2,@plain,\r\n`,
    );
    expect(await runImport(p.id, file)).toMatchObject({ created: 2, skippedCount: 0 });
    const { items } = await walk(p.api, "/contacts");
    const byNumber = Object.fromEntries(items.map((c: any) => [c.contactId, c]));
    expect(byNumber["CR-1"]).toMatchObject({
      firstName: '=HYPERLINK("http://x")',
      lastName: "'hello",
      phone: "+1 415 555 0100",
      notes: "\tindented",
      customFields: { [score]: -0.5, [total]: "@SUM(A1)" },
    });
    // Only the cell's first character counts: `'b`, a list item inside the cell, keeps its quote.
    expect(byNumber["CR-1"].tags.map((t: any) => t.name).sort()).toEqual(["'b", "-a"]);
    expect(byNumber["CR-2"]).toMatchObject({
      firstName: "'=x",
      lastName: "'0123",
      phone: "+1 415 555 0101",
      notes: "\rcr",
      customFields: { [score]: -2, [total]: "@plain" },
    });
  });

  test("human summary without --json", async () => {
    const p = await srv.newProject();
    const r = await srv.cliRaw(["import", csv("firstName,email\nAda,a@example.com\nBob,nope\n"), "--project", p.id]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("2 rows, 1 contacts created");
    expect(r.stdout).toContain("row 2: email must be a valid email address. (email)");
  });

  // The bound is the CSV reader's, the same code on both backends; on PostgreSQL the import
  // writes ~190 rows/s (one round trip per statement), so 100,000 rows take minutes there.
  test.skipIf(sqliteOnly)("100,000 rows import in bounded memory", async () => {
    const p = await srv.newProject();
    const big = join(dir, "big.csv");
    const small = join(dir, "small.csv");
    const write = (path: string, n: number) => {
      const lines = ["firstName,lastName,email,tags,address.city"];
      for (let i = 0; i < n; i++) lines.push(`First${i},"Last, ${i}",user${i}@example.com,t${i % 5},City ${i % 100}`);
      writeFileSync(path, lines.join("\n") + "\n");
    };
    write(small, 10_000);
    write(big, 100_000);
    const timed = existsSync("/usr/bin/time");
    const run = async (path: string) => {
      const cmd = [BUN, "src/main.ts", "import", path, "--project", p.id, "--json"];
      const started = Date.now();
      // Async: the test's event loop keeps running while the import does.
      // Generous: this test bounds memory, not speed (126 s for both files alone here; past 300 s
      // while the PostgreSQL suite shared the two cores). Speed is bench/'s business.
      const r = await runCommand(timed ? ["/usr/bin/time", "-v", ...cmd] : cmd, { cwd: REPO_ROOT, env: srv.env, allowFail: true, timeoutMs: 560_000 });
      const seconds = (Date.now() - started) / 1000;
      expect(r.exitCode, r.stderr).toBe(0);
      const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN);
      return { out: JSON.parse(r.stdout), seconds, rssMb: rssKb / 1024, stderr: r.stderr };
    };
    const a = await run(small);
    const b = await run(big);
    expect(a.out).toMatchObject({ created: 10_000, skippedCount: 0 });
    expect(b.out).toMatchObject({ created: 100_000, skippedCount: 0, rows: 100_000 });
    expect(b.stderr).toContain("import: 100,000 rows");
    console.log(
      `import: 10k rows ${a.seconds.toFixed(1)} s (${Math.round(10_000 / a.seconds)} rows/s), peak RSS ${a.rssMb.toFixed(0)} MB; ` +
        `100k rows ${b.seconds.toFixed(1)} s (${Math.round(100_000 / b.seconds)} rows/s), peak RSS ${b.rssMb.toFixed(0)} MB`,
    );
    if (timed) {
      // The file is streamed and rows are written in batches of 500, never held: peak RSS
      // levels off (about 125 MB at 10k rows, 160–170 MB from 30k to 300k rows here).
      expect(b.rssMb).toBeLessThan(256);
    }
    const res = await p.api("GET", "/contacts", { query: { search: "user99999@example.com" } });
    expect(res.json.data.map((c: any) => c.lastName)).toEqual(["Last, 99999"]);
  }, 600_000);
});
