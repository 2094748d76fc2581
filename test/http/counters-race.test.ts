/**
 * Counters checked and changed atomically (issue 25; docs/security.md §9), under bursts on
 * either backend (CRM_TEST_BACKEND=postgres: requests run as parallel transactions): the
 * contact quota from every surface at once (docs/api.md §11.10), a key's rate-limit buckets
 * (docs/api.md §6: a refused request consumes nothing, even while others are taking), and
 * the per-address form limiter. Two nodes on one database: test/multinode/. The sign-in
 * tries: test/http/admin-lockout-race.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let addresses = 0;
const freshAddress = () => `198.19.${Math.floor(++addresses / 250)}.${addresses % 250}`;

beforeAll(async () => {
  // Loopback plays a trusted proxy: X-Forwarded-For gives each form submission its own client.
  srv = await startServer({ extraEnv: { CRM_TRUST_PROXY: "127.0.0.1" } });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 30_000);

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe("the contact quota under a burst (docs/api.md §11.10)", () => {
  test("a quota of 5 and 40 creates at once from the API and a web form: exactly 5 are created, the other 35 are 402, and the project counts 5", async () => {
    const p = await srv.newProject({ contactQuota: 5 });
    const form = await srv.cli(["form", "create", "--project", p.id, "--name", "Quota burst", "--fields", "email,firstName", "--json"]);
    const keys = await Promise.all([srv.newKey(["contacts:write"], p.id), srv.newKey(["contacts:write"], p.id)]);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? srv.api("POST", "/contacts", { key: keys[i % 4 === 0 ? 0 : 1]!, body: { firstName: `Api${i}`, email: `api${i}@example.com` } })
          : srv.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: `form${i}@example.com` }, headers: { "X-Forwarded-For": freshAddress() } }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: 5, 402: 35 });
    for (const refused of answers.filter((a) => a.status === 402)) expectError(refused, "ERR_QUOTA_EXCEEDED");
    const listed = await srv.api("GET", "/contacts", { key: p.key, query: { limit: 200 } });
    expect(listed.json.data).toHaveLength(5);
    expect((await srv.cli(["project", "list", "--json"])).data.find((x: { id: string }) => x.id === p.id).contactCount).toBe(5);
  });
});

describe("a key's rate-limit buckets under a burst (docs/api.md §6)", () => {
  test("creates refused by an empty hourly bucket take nothing from the minute bucket, even while they run: 30 of them at once beside 9 GETs leave every GET answered", async () => {
    // 10 a minute (one token back every 6 s, far longer than the burst) and 1 create an hour.
    const p = await srv.newProject({ rateLimitPerMinute: 10, contactCreatesPerHour: 1 });
    const api = (method: string, path: string, body?: object) => srv.api(method, path, { key: p.key, body });
    expect((await api("POST", "/contacts", { firstName: "The one create" })).status).toBe(201);
    // The minute bucket has 9 tokens left: one for each GET. The creates must consume none.
    const answers = await Promise.all(Array.from({ length: 39 }, (_, i) => (i % 4 === 3 ? api("GET", "/contacts") : api("POST", "/contacts", { firstName: `Refused${i}` }))));
    const gets = answers.filter((_, i) => i % 4 === 3);
    const creates = answers.filter((_, i) => i % 4 !== 3);
    expect(gets).toHaveLength(9);
    expect(gets.map((a) => a.status)).toEqual(Array(9).fill(200));
    for (const refused of creates) expectError(refused, "ERR_RATE_LIMITED");
  });
});

describe("the per-address form limiter under a burst (docs/api.md §6)", () => {
  test("30 submissions at once from one address to one form: exactly 10 are taken, 20 are 429", async () => {
    const form = await srv.cli(["form", "create", "--project", srv.projectId, "--name", "Limiter burst", "--fields", "email", "--json"]);
    const address = freshAddress();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        srv.api("POST", `/forms/${form.id}/submissions`, { key: null, body: { email: `burst${i}@example.com` }, headers: { "X-Forwarded-For": address } }),
      ),
    );
    expect(tally(answers.map((a) => a.status))).toEqual({ 201: 10, 429: 20 });
  });
});
