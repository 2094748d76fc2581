/**
 * Counters shared by two nodes of one PostgreSQL database, under bursts split over them
 * (issue 25; docs/security.md §9): a key's buckets take a token from every bucket or from
 * none in one statement, so creates refused on one node never hold a token that requests
 * on the other node are refused for. The quota across nodes: two-nodes.test.ts; the
 * sign-in tries: admin-lockout.test.ts.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError } from "../helpers/expect.ts";
import { newCluster, startAll, type Cluster } from "./nodes.ts";

// Every test starts two server processes and runs the CLI several times.
setDefaultTimeout(120_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
});

describe("a key's buckets across nodes (docs/api.md §6, docs/scaling.md §6)", () => {
  test("30 creates refused by the hourly bucket on node A beside 9 GETs on node B, at once: every GET is answered, no create takes a token", async () => {
    const c = await newCluster();
    clusters.push(c);
    const [a, b] = await startAll(c, ["A", "B"]);
    // 10 a minute (one token back every 6 s, far longer than the burst) and 1 create an hour.
    const p = await c.project({ rateLimitPerMinute: 10, contactCreatesPerHour: 1 });
    const apiA = a!.api(p.key);
    const apiB = b!.api(p.key);
    expect((await apiA("POST", "/contacts", { body: { firstName: "The one create" } })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 39 }, (_, i) => (i % 4 === 3 ? apiB("GET", "/contacts") : apiA("POST", "/contacts", { body: { firstName: `Refused${i}` } }))),
    );
    const gets = answers.filter((_, i) => i % 4 === 3);
    expect(gets.map((r) => r.status)).toEqual(Array(9).fill(200));
    for (const refused of answers.filter((_, i) => i % 4 !== 3)) expectError(refused, "ERR_RATE_LIMITED");
    // The minute bucket is now empty on both nodes.
    expectError(await apiB("GET", "/contacts"), "ERR_RATE_LIMITED");
  });
});
