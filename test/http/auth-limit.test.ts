/**
 * Failed authentications are limited per client address (docs/api.md §2, §2.3). The count
 * lives in the server and every test here connects from 127.0.0.1, so each test starts its
 * own server: none depends on what another left in the window, and each runs alone or in
 * any order.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

let srv: ServerHandle | undefined;

afterEach(async () => {
  await srv?.stop();
  srv = undefined;
}, 60_000);

const UNKNOWN = `crm_live_${"x".repeat(46)}`;

/** 30 failed authentications from this address, each answered 401. */
async function failThirtyTimes(server: ServerHandle): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i < 30; i++) statuses.push((await server.api("GET", "/contacts", { key: UNKNOWN })).status);
  expect(statuses).toEqual(Array(30).fill(401));
}

describe("failed-authentication limit", () => {
  test("up to 30 failed authentications a minute from one address are 401; the 31st is 429 ERR_RATE_LIMITED with Retry-After = the seconds left of the minute", async () => {
    srv = await startServer();
    const started = performance.now();
    await failThirtyTimes(srv);
    const limited = await srv.api("GET", "/contacts", { key: "wrong" });
    const elapsed = (performance.now() - started) / 1000;
    expectError(limited, "ERR_RATE_LIMITED");
    // The window opened with the first failure, at most `elapsed` seconds before this answer.
    const retry = limited.headers.get("retry-after");
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBeLessThanOrEqual(60);
    expect(Number(retry)).toBeGreaterThanOrEqual(Math.max(1, Math.floor(60 - elapsed)));
    expect(limited.headers.get("x-request-id")).toMatch(/^req_/);
    // The document lists the RateLimit headers on every 429: this one's describe the failed-authentication limit (docs/api.md §2.3).
    expect(limited.headers.get("ratelimit-limit")).toBe("30");
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
  }, 60_000);

  test("past the limit, every kind of failed authentication is 429 too (a missing, malformed or unknown key), and a valid key is still answered", async () => {
    srv = await startServer();
    await failThirtyTimes(srv);
    for (const key of [null, "not-a-key", UNKNOWN]) expectError(await srv.api("GET", "/ping", { key }), "ERR_RATE_LIMITED");
    expectStatus(await srv.api("GET", "/ping", { key: srv.key }), 200);
    // The valid request reset nothing: failures are still refused.
    expectError(await srv.api("GET", "/ping", { key: null }), "ERR_RATE_LIMITED");
  }, 60_000);
});
