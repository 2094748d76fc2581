/**
 * Every TypeScript code block of clients/typescript/README.md runs as written, in order,
 * against a real server (docs/api.md §16.3), importing the built package as a user's project
 * does. The base URL and key come from the environment the blocks read (`CRM_URL`,
 * `CRM_API_KEY`); a block that uses `crm` without making one runs after the README's
 * "Create a client" block, as the README says. The webhook block's handler is called with a
 * signed delivery and a tampered one. The shell blocks (npm pack / install, regenerate) are
 * not run here: runtimes.test.ts installs the package as a folder link and
 * build-up-to-date.test.ts runs the build.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, startServer, type ServerHandle } from "../helpers/server.ts";

const README = readFileSync(join(REPO_ROOT, "clients/typescript/README.md"), "utf8");
const BLOCKS = [...README.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
const CREATE = BLOCKS.find((b) => b.includes("const crm = createClient({\n"))!;
// Under node_modules, so `@crm-service/client` resolves as in a user's project.
const DIR = join(REPO_ROOT, "node_modules/.cache/crm-readme-blocks");
const SECRET = `whsec_${Buffer.from("readme-test-secret-0123456789abcd").toString("base64")}`;

let srv: ServerHandle;
const saved = { url: process.env.CRM_URL, key: process.env.CRM_API_KEY, secret: process.env.CRM_WEBHOOK_SECRET };

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  const project = await srv.newProject();
  process.env.CRM_URL = srv.origin;
  process.env.CRM_API_KEY = project.key;
  process.env.CRM_WEBHOOK_SECRET = SECRET;
  mkdirSync(DIR, { recursive: true });
}, 30_000);

afterAll(async () => {
  for (const [name, value] of [["CRM_URL", saved.url], ["CRM_API_KEY", saved.key], ["CRM_WEBHOOK_SECRET", saved.secret]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(DIR, { recursive: true, force: true });
  await srv?.stop();
}, 30_000);

/** The block as a module: after the create block when it uses a `crm` it does not make. */
function moduleText(block: string): string {
  const usesCrm = /\bcrm\./.test(block) && !/const crm\b/.test(block);
  return usesCrm ? `${CREATE}\n${block}` : block;
}

async function runBlock(n: number): Promise<Record<string, unknown>> {
  const file = join(DIR, `${process.pid}-block-${n}.ts`);
  writeFileSync(file, moduleText(BLOCKS[n]!));
  return (await import(file)) as Record<string, unknown>;
}

function signed(body: string, t = Math.floor(Date.now() / 1000)): Request {
  const v1 = createHmac("sha256", SECRET).update(`${t}.${body}`).digest("hex");
  return new Request("http://127.0.0.1/hooks/crm", { method: "POST", body, headers: { "X-Service-Signature": `t=${t},v1=${v1}` } });
}

describe("clients/typescript/README.md", () => {
  test("has TypeScript blocks, the create block among them, using the server's default port", () => {
    expect(BLOCKS.length).toBeGreaterThanOrEqual(8);
    expect(CREATE).toContain('"http://127.0.0.1:8080"');
    expect(README).not.toContain("localhost:3000");
  });

  for (const [n, block] of BLOCKS.entries()) {
    const title = block.split("\n").find((line) => line.trim() !== "" && !line.startsWith("import"))!.slice(0, 80);
    test(`block ${n + 1} runs as written: ${title}`, async () => {
      const mod = await runBlock(n);
      if (typeof mod.receive === "function") {
        const receive = mod.receive as (request: Request) => Promise<Response>;
        const body = JSON.stringify({ id: "evt_readme", event: "contact.created", data: { contact: { contactId: "CR-1" } } });
        expect((await receive(signed(body))).status).toBe(204);
        const tampered = signed(body);
        const forged = new Request(tampered.url, { method: "POST", headers: tampered.headers, body: `${body} ` });
        expect((await receive(forged)).status).toBe(400);
      }
    }, 60_000);
  }
});
