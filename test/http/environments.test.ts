/**
 * The one file that runs two servers: a production and a sandbox deployment, to check that
 * a key of one environment is unknown to the other (docs/api.md §2).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectStatus } from "../helpers/expect.ts";

let prod: ServerHandle;
let sandbox: ServerHandle;

const UNAUTHORIZED = {
  success: false,
  statusCode: 401,
  error: "Unauthorized",
  code: "ERR_UNAUTHORIZED",
  message: "Invalid or missing API key.",
};

beforeAll(async () => {
  [prod, sandbox] = await Promise.all([startServer({ env: "production" }), startServer({ env: "sandbox" })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([prod?.stop(), sandbox?.stop()]);
}, 60_000);

describe("environments", () => {
  test("a sandbox server prints a crm_test_ bootstrap key", () => {
    expect(sandbox.key).toMatch(/^crm_test_[A-Za-z0-9]{46}$/);
  });

  test("a production server prints a crm_live_ bootstrap key", () => {
    expect(prod.key).toMatch(/^crm_live_[A-Za-z0-9]{46}$/);
  });

  test("the CLI of a sandbox deployment creates crm_test_ keys", async () => {
    expect((await sandbox.createKey({ scopes: ["contacts:read"] })).key).toMatch(/^crm_test_[A-Za-z0-9]{46}$/);
  });

  test("GET /ping reports environment sandbox on a sandbox server", async () => {
    const res = await sandbox.api("GET", "/ping", { key: sandbox.key });
    expectStatus(res, 200);
    expect(res.json.environment).toBe("sandbox");
    expect([...res.json.scopes].sort()).toEqual([...ALL_SCOPES].sort());
  });

  test("the sandbox serves the same paths as production", async () => {
    const res = await sandbox.api("POST", "/contacts", { key: sandbox.key, body: { firstName: "Sandy" } });
    expectStatus(res, 201);
    expectStatus(await sandbox.api("GET", `/contacts/${res.json.contactId}`, { key: sandbox.key }), 200);
  });

  test("a crm_test_ key against a production server is 401 with the fixed message", async () => {
    const res = await prod.api("GET", "/ping", { key: sandbox.key });
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
  });

  test("a crm_live_ key against a sandbox server is 401 with the fixed message", async () => {
    const res = await sandbox.api("GET", "/ping", { key: prod.key });
    expect(res.status).toBe(401);
    expect(res.json).toEqual(UNAUTHORIZED);
  });
});
