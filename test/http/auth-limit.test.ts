/** Failed authentications are limited per client address (decisions §2, §12): own server. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError } from "../helpers/expect.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer();
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

describe("failed-authentication limit", () => {
  test("up to 30 failed authentications a minute from one address are 401; the next is 429 ERR_RATE_LIMITED with Retry-After", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await srv.api("GET", "/contacts", { key: `crm_live_${"x".repeat(46)}` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual(Array(30).fill(401));
    const limited = await srv.api("GET", "/contacts", { key: "wrong" });
    expectError(limited, "ERR_RATE_LIMITED");
    const retry = limited.headers.get("retry-after");
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    expect(limited.headers.get("x-request-id")).toBeTruthy();
  });

  test("past the limit, missing keys are 429 too for the rest of the minute", async () => {
    const res = await srv.api("GET", "/ping", { key: null });
    expectError(res, "ERR_RATE_LIMITED");
  });
});
