/**
 * The built client runs where docs/api.md §16.3 says, imported as a user's project imports it
 * (consumer.ts: node_modules/@crm-service/client → its `exports`, lib/):
 * - plain `node` and Deno run runtime-probe.mjs against a real server: typed calls, paging,
 *   an upsert, a chunked batch and verifyWebhook of a real delivery;
 * - `tsc` (strict, moduleResolution nodenext and bundler, skipLibCheck off) compiles a
 *   consumer against the package's `.d.ts` with no error (no TS5097), and `deno check` too;
 * - its sources compile against the DOM and ES libraries alone (a browser's view).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@crm-service/client";
import { DENO, REPO_ROOT, runCommand } from "../helpers/spawn.ts";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";
import { consumerProject, type Consumer } from "./consumer.ts";

setDefaultTimeout(60_000);

const fx = useWebhookServer({ env: "sandbox", extraEnv: { CRM_OUTBOX_POLL_MS: "50" } });
const TSC = join(REPO_ROOT, "node_modules/.bin/tsc");
let consumer: Consumer;

beforeAll(() => {
  consumer = consumerProject();
  consumer.write("probe.mjs", readFileSync(join(REPO_ROOT, "test/client/runtime-probe.mjs"), "utf8"));
});
afterAll(() => consumer?.remove());

/** The probe's input: the default project's key and a real contact.created delivery. */
async function probeInput() {
  const crm = createClient({ baseUrl: fx.srv.origin, apiKey: fx.srv.key });
  const rx = await fx.receiver();
  const hook = (await crm.POST("/webhooks", { body: { url: rx.url, events: ["contact.created"] } })).data!;
  fx.track(hook.id);
  await crm.POST("/contacts", { body: { firstName: "Runtime", email: `runtime.${Date.now()}@example.com` } });
  const [req] = await rx.waitFor(1, 20_000);
  return { input: { baseUrl: fx.srv.origin, apiKey: fx.srv.key, secret: hook.secret, headers: req!.headers, body: req!.text }, eventId: req!.json.id as string };
}

async function runProbe(cmd: string[]) {
  const { input, eventId } = await probeInput();
  const run = await runCommand(cmd, { cwd: consumer.dir, env: { ...(process.env as Record<string, string>), CRM_PROBE_INPUT: JSON.stringify(input) } });
  const seen = JSON.parse(run.stdout.trim().split("\n").pop()!);
  expect(seen).toMatchObject({ projectId: fx.srv.projectId, created: 201, eventId, tampered: "signature_mismatch", upsert: "updated" });
  expect(seen.contacts.length).toBeGreaterThanOrEqual(2);
  // Three upsert items in chunks of 2: indexes over the whole input, summaries summed.
  expect(seen.batch).toEqual({ indexes: [0, 1, 2], results: ["unchanged", "created", "created"], summary: { created: 2, updated: 0, unchanged: 1, failed: 0 } });
}

/** A consumer's TypeScript: typed calls and the sync helpers, and mistakes the types must catch. */
const CONSUMER_TS = `import { BatchError, createClient, CrmApiError, type Schema, type UpsertResult } from "@crm-service/client";
import { verifyWebhook } from "@crm-service/client/webhooks";

export async function main(apiKey: string): Promise<string> {
  const crm = createClient({ baseUrl: "http://127.0.0.1:8080", apiKey });
  const { data } = await crm.GET("/contacts/{contactId}", { params: { path: { contactId: "CR-1" } } });
  const contact: Schema<"Contact"> | undefined = data;
  const upserted = await crm.upsertContact({ email: "ada@example.com", firstName: "Ada" }, { matchOn: "email", update: "fill", tags: "add" });
  const result: UpsertResult = upserted.result;
  const batch = await crm.batchContacts({ operation: "upsert", matchOn: "customFields.External ID", items: [{ email: "a@example.com" }] });
  const created: number = batch.summary.created + batch.results[0]!.index;
  await crm.batchInteractions({ items: [{ contactId: "CR-1", type: "note", note: "n", uniqueIdentifier: "u-1" }] }, { chunkSize: 500 });
  // @ts-expect-error matchOn names email, phone or customFields.<id or title>
  await crm.upsertContact({ email: "x@example.com" }, { matchOn: "firstName" });
  // @ts-expect-error update items carry their contactId
  await crm.batchContacts({ operation: "update", items: [{ firstName: "x" }] });
  // @ts-expect-error an upsert batch needs matchOn
  await crm.batchContacts({ operation: "upsert", items: [] });
  try {
    await verifyWebhook("whsec_x", {}, "{}");
  } catch (e) {
    if (e instanceof BatchError) return String(e.completed);
    if (e instanceof CrmApiError) return e.envelope?.matches?.join(",") ?? "";
  }
  return [contact?.contactId, result, created].join(" ");
}
`;

describe("the built package in other runtimes and compilers", () => {
  test("the client's sources type-check with no Node, Bun or Deno types (clients/typescript/tsconfig.json: fetch and Web Crypto only)", async () => {
    const run = await runCommand([TSC, "-p", join(REPO_ROOT, "clients/typescript"), "--noEmit"], { allowFail: true });
    expect(run.stdout + run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
  });

  test("plain node (no loader, no bundler) imports the package and makes real calls", async () => {
    await runProbe(["node", "probe.mjs"]);
  });

  test("Deno imports the package from node_modules and makes real calls", async () => {
    await runProbe([DENO, "run", "--node-modules-dir=manual", "--allow-net", "--allow-env", "--allow-read", "probe.mjs"]);
  });

  for (const [name, module] of [
    ["nodenext", "NodeNext"],
    ["bundler", "ESNext"],
  ] as const) {
    test(`tsc, strict, moduleResolution ${name}, skipLibCheck off: a consumer compiles against the package with no error`, async () => {
      consumer.write("consumer.ts", CONSUMER_TS);
      const compilerOptions = { target: "ES2022", module, moduleResolution: name, lib: ["ES2022", "DOM"], types: [], strict: true, noEmit: true, skipLibCheck: false };
      consumer.write(`tsconfig.${name}.json`, JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
      const run = await runCommand([TSC, "-p", `tsconfig.${name}.json`], { cwd: consumer.dir, allowFail: true });
      expect(run.stdout + run.stderr).toBe("");
      expect(run.exitCode).toBe(0);
    });
  }

  test("deno check: Deno finds the package's types (@ts-self-types) and the consumer checks", async () => {
    consumer.write("consumer.ts", CONSUMER_TS);
    const run = await runCommand([DENO, "check", "--node-modules-dir=manual", "consumer.ts"], { cwd: consumer.dir, allowFail: true, env: { ...(process.env as Record<string, string>), NO_COLOR: "1" } });
    expect(run.stderr).not.toContain("ERROR");
    expect(run.exitCode).toBe(0);
  });
});
