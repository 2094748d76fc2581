/**
 * The typed client runs on Node 20+ and Deno as well as Bun (docs/api.md §16.3): runtime-probe.ts
 * makes typed calls, paginates and verifies a real delivery under Deno (TypeScript as is)
 * and under the machine's Node (bundled to plain JavaScript first, as an app's bundler would);
 * and its sources compile against the DOM and ES libraries alone (a browser's view).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@crm-service/client";
import { BUN, DENO, REPO_ROOT, runCommand } from "../helpers/spawn.ts";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";

setDefaultTimeout(60_000);

const fx = useWebhookServer({ env: "sandbox", extraEnv: { CRM_OUTBOX_POLL_MS: "50" } });
const PROBE = join(REPO_ROOT, "test/client/runtime-probe.ts");

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

function expectProbe(stdout: string, eventId: string) {
  const seen = JSON.parse(stdout.trim().split("\n").pop()!);
  expect(seen).toMatchObject({ projectId: fx.srv.projectId, created: 201, eventId, tampered: "signature_mismatch" });
  expect(seen.contacts.length).toBeGreaterThanOrEqual(2);
}

describe("other runtimes", () => {
  test("the client's sources type-check with no Node, Bun or Deno types (clients/typescript/tsconfig.json: fetch and Web Crypto only)", async () => {
    const run = await runCommand([join(REPO_ROOT, "node_modules/.bin/tsc"), "-p", join(REPO_ROOT, "clients/typescript")], { allowFail: true });
    expect(run.stdout + run.stderr).toBe("");
    expect(run.exitCode).toBe(0);
  });

  test("under Deno: typed calls, for-await pagination and verifyWebhook of a real delivery", async () => {
    const { input, eventId } = await probeInput();
    const run = await runCommand([DENO, "run", `--config=${REPO_ROOT}/deno.json`, "--allow-net", "--allow-env", "--allow-read", PROBE], {
      env: { ...(process.env as Record<string, string>), CRM_PROBE_INPUT: JSON.stringify(input) },
    });
    expectProbe(run.stdout, eventId);
  });

  test("under Node (bundled): typed calls, for-await pagination and verifyWebhook of a real delivery", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crm-client-node-"));
    try {
      const bundle = join(dir, "probe.mjs");
      await runCommand([BUN, "build", PROBE, "--target=node", "--format=esm", `--outfile=${bundle}`]);
      const { input, eventId } = await probeInput();
      const run = await runCommand(["node", bundle], { env: { ...(process.env as Record<string, string>), CRM_PROBE_INPUT: JSON.stringify(input) } });
      expectProbe(run.stdout, eventId);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
