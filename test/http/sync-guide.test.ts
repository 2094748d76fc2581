/**
 * docs/sync.md runs as it reads (docs/api.md §18): every program of the guide (a ```ts or
 * ```sh block) is marked `<!-- runnable: NAME -->`; the blocks are written to one folder
 * under their names (so `./crm-fetch.ts` resolves as in a reader's project) and run in the
 * page's order against a real server, in one fresh project, with CRM_URL, CRM_API_KEY and
 * CRM_PROJECT in the environment and `crm` on the PATH (the server's own CLI on its
 * database). A block followed by `<!-- output: NAME -->` and a ```text block must print
 * exactly that, `…` standing for anything within a line.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, runCommand } from "../helpers/spawn.ts";
import { REPO_ROOT, startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

const DOC = "docs/sync.md";
const PROGRAM_LANGS = new Set(["ts", "typescript", "sh", "bash", "shell"]);

interface Block {
  name: string;
  lang: string;
  code: string;
  expected?: string;
}

/** Every fenced block with the marker line before it (`null` when there is none). */
function fencedBlocks(text: string): Array<{ marker: string | null; lang: string; code: string }> {
  const blocks: Array<{ marker: string | null; lang: string; code: string }> = [];
  for (const match of text.matchAll(/(?:^(<!--[^\n]*-->)\n)?^```([\w-]*)[^\n]*\n([\s\S]*?)^```$/gm)) {
    blocks.push({ marker: match[1] ?? null, lang: match[2] ?? "", code: match[3]! });
  }
  return blocks;
}

function guideBlocks(text: string): Block[] {
  const programs: Block[] = [];
  for (const block of fencedBlocks(text)) {
    const runnable = block.marker && /^<!-- runnable: ([\w.-]+) -->$/.exec(block.marker);
    const output = block.marker && /^<!-- output: ([\w.-]+) -->$/.exec(block.marker);
    if (runnable) programs.push({ name: runnable[1]!, lang: block.lang, code: block.code });
    else if (output) {
      const program = programs.find((p) => p.name === output[1]);
      if (!program) throw new Error(`${DOC}: output of ${output[1]} comes before (or without) its program`);
      program.expected = block.code;
    } else if (PROGRAM_LANGS.has(block.lang)) {
      throw new Error(`${DOC}: a \`\`\`${block.lang} block is not marked <!-- runnable: NAME -->:\n${block.code.slice(0, 200)}`);
    }
  }
  return programs;
}

/** Each expected line as a pattern: `…` matches anything within the line. */
function matchesExpected(actual: string, expected: string): boolean {
  const lines = (s: string) => s.replace(/\s+$/, "").split("\n").map((l) => l.replace(/\s+$/, ""));
  const got = lines(actual);
  const want = lines(expected);
  if (got.length !== want.length) return false;
  return want.every((line, i) => {
    const pattern = line.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
    return new RegExp(`^${pattern}$`).test(got[i]!);
  });
}

const blocks = guideBlocks(readFileSync(join(REPO_ROOT, DOC), "utf8"));

let server: ServerHandle;
let project: ProjectInfo;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startServer();
  project = await server.newProject({ name: "sync-guide" });
  dir = mkdtempSync(join(tmpdir(), "crm-sync-guide-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  // `crm` as the guide writes it: the server's CLI, on the server's database (run from the
  // checkout, whose bunfig and tsconfig it needs; the guide's `crm` commands take no file).
  writeFileSync(join(bin, "crm"), `#!/bin/sh\ncd "${REPO_ROOT}" && exec "${BUN}" src/main.ts "$@"\n`);
  chmodSync(join(bin, "crm"), 0o755);
  for (const block of blocks) writeFileSync(join(dir, block.name), block.code);
  env = {
    ...server.env,
    PATH: `${bin}:${process.env.PATH}`,
    CRM_URL: server.origin,
    CRM_API_KEY: project.key,
    CRM_PROJECT: project.id,
  };
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("docs/sync.md", () => {
  test("the guide's programs are marked, named once, and the ones that show output have it", () => {
    const names = blocks.map((b) => b.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toContain("crm-fetch.ts");
    for (const b of blocks) expect(b.name.endsWith(".ts") ? ["ts", "typescript"] : ["sh", "bash", "shell"]).toContain(b.lang);
    // Every example a reader runs for its output shows it.
    expect(blocks.filter((b) => b.expected === undefined).map((b) => b.name)).toEqual(["crm-fetch.ts", "external-id.sh", "mirror.ts"]);
  });

  for (const block of blocks) {
    test(
      `${block.name} runs${block.expected === undefined ? "" : " and prints what the guide shows"}`,
      async () => {
        const cmd = block.name.endsWith(".ts") ? [BUN, "run", join(dir, block.name)] : ["bash", "-e", "-o", "pipefail", join(dir, block.name)];
        const run = await runCommand(cmd, { cwd: dir, env, allowFail: true, timeoutMs: 170_000 });
        const report = `${block.name} exited ${run.exitCode}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
        expect(run.exitCode, report).toBe(0);
        if (block.expected !== undefined) expect(matchesExpected(run.stdout, block.expected), `${report}\n--- expected\n${block.expected}`).toBe(true);
      },
      180_000,
    );
  }

  test("after the guide: the mirror of §10 holds exactly what GET /contacts lists, without the deleted and the erased contacts", async () => {
    const mirror = JSON.parse(readFileSync(join(dir, "mirror.json"), "utf8"));
    const live = (await walk(project.api, "/contacts", { limit: 200 })).items;
    const byId = Object.fromEntries(live.map((c: any) => [c.contactId, c]));
    expect(Object.keys(mirror.contacts).sort()).toEqual(Object.keys(byId).sort());
    for (const [id, contact] of Object.entries(mirror.contacts)) expect(contact).toEqual(byId[id]);
    // The feed's cursor it kept is caught up: nothing after it.
    const after = await project.api("GET", "/changes", { query: { after: mirror.cursor } });
    expect(after.json.data).toEqual([]);
    const names = Object.values(mirror.contacts).map((c: any) => c.email);
    expect(names).toContain("noor@example.com");
    expect(names).toContain("person00004@example.com");
    expect(names).not.toContain("person00002@example.com");
    expect(names).not.toContain("person00003@example.com");
    // The erased one is gone from the service too, and the deleted one is in the trash (its history stays readable).
    const erased: any[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = await project.api("GET", "/changes", { query: { limit: 1000, ...(after ? { after } : {}) } });
      erased.push(...page.json.data.filter((r: any) => r.action === "erased"));
      [after, more] = [page.json.pagination.nextCursor, page.json.pagination.hasMore];
    }
    expect(erased).toHaveLength(1);
    expect((await project.api("GET", `/contacts/${erased[0].id}/history`)).status).toBe(404);
  });

  test("after the guide: §10.7's merge and its undo left both of Rosa's records, in the copy as in the service", async () => {
    const mirror = JSON.parse(readFileSync(join(dir, "mirror.json"), "utf8"));
    const rosas = Object.values(mirror.contacts).filter((c: any) => c.email?.toLowerCase() === "rosa@example.com") as any[];
    expect(rosas.map((c) => [c.email, c.phone, c.version]).sort()).toEqual([
      ["ROSA@example.com", "+1 415 555 0100", 3],
      ["rosa@example.com", null, 3],
    ]);
    // The feed told the copy of the merge (deleted with mergedInto, then merged) and of its undo (restored, then updated).
    const records: any[] = [];
    for (let after: string | undefined, more = true; more; ) {
      const page = await project.api("GET", "/changes", { query: { limit: 1000, object: "contact", ...(after ? { after } : {}) } });
      records.push(...page.json.data);
      [after, more] = [page.json.pagination.nextCursor, page.json.pagination.hasMore];
    }
    const [survivor, twin] = [rosas.find((c) => c.phone === null).contactId, rosas.find((c) => c.phone !== null).contactId];
    const merged = records.findIndex((r) => r.action === "merged");
    expect(records.slice(merged - 1).map((r) => [r.id, r.action])).toEqual([
      [twin, "deleted"],
      [survivor, "merged"],
      [twin, "restored"],
      [survivor, "updated"],
    ]);
    expect(records[merged - 1].changes).toEqual([{ field: "mergedInto", from: null, to: survivor }]);
  });

  test("after the guide: the External ID field is unique, and the load left one contact per person", async () => {
    const fields = await project.api("GET", "/custom-fields");
    const field = fields.json.data.find((f: any) => f.title === "External ID");
    expect(field).toMatchObject({ type: "text", unique: true });
    const byEmail = await project.api("GET", "/contacts", { query: { email: "person00007@example.com" } });
    expect(byEmail.json.data).toHaveLength(1);
    expect(byEmail.json.data[0].customFields[field.id]).toBe("ext-00007");
  });
});
