/**
 * The batch-items bucket across nodes (docs/api.md §18.4, §6; docs/scaling.md §6): two
 * `crm serve` processes on one PostgreSQL database share a key's items bucket, as they
 * share its minute bucket: a batch's items are the key's, not each node's, and a refused
 * batch takes nothing on any node. Runs on PostgreSQL whatever CRM_TEST_BACKEND says.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { newCluster, startAll, type Cluster } from "./nodes.ts";

setDefaultTimeout(120_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
});

describe("the batch-items bucket holds across nodes", () => {
  test("10 items an hour: 6 on A, then 6 on B is 429 (4 left, nothing written), 4 on B passes, then A is refused too", async () => {
    const c = await newCluster();
    clusters.push(c);
    const [a, b] = await startAll(c, ["A", "B"]);
    const p = await c.project();
    await c.cli(["project", "update", p.id, "--batch-items-per-hour", "10", "--json"]);
    const apiA = a!.api(p.key);
    const apiB = b!.api(p.key);
    const people = (n: number, tag: string) => ({ operation: "create", items: Array.from({ length: n }, (_, i) => ({ firstName: `${tag}${i}` })) });

    const first = await apiA("POST", "/contacts/batch", { body: people(6, "a") });
    expectStatus(first, 200);
    expect(first.headers.get("ratelimit-limit")).toBe("10");
    expect(first.headers.get("ratelimit-remaining")).toBe("4");

    const refused = await apiB("POST", "/contacts/batch", { body: people(6, "b") });
    expectError(refused, "ERR_RATE_LIMITED");
    expect(refused.headers.get("ratelimit-remaining")).toBe("4");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(700);
    expect((await apiA("GET", "/contacts", { query: { limit: 100 } })).json.data).toHaveLength(6);

    // B's refusal took nothing: the 4 left pass there, through the other batch route.
    const contactId = first.json.results[0].contactId;
    const logs = await apiB("POST", "/interactions/batch", { body: { items: Array.from({ length: 4 }, (_, i) => ({ contactId, type: "note", note: `n${i}` })) } });
    expectStatus(logs, 200);
    expect(logs.headers.get("ratelimit-remaining")).toBe("0");

    expectError(await apiA("POST", "/contacts/batch", { body: people(1, "late") }), "ERR_RATE_LIMITED");
  });
});
