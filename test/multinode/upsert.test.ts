/**
 * Upserts and unique custom fields on two nodes of one PostgreSQL database
 * (docs/api.md §18.2, §18.3): concurrent upserts of one new value take turns on an advisory
 * lock every node shares, and a unique value's primary key refuses the second holder
 * whichever node writes it. These rules only matter with several nodes, so this file runs
 * on PostgreSQL whatever CRM_TEST_BACKEND says.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { newCluster, startAll, type Cluster } from "./nodes.ts";

// Every test starts two server processes and runs the CLI.
setDefaultTimeout(120_000);

const clusters: Cluster[] = [];
afterEach(async () => {
  for (const c of clusters.splice(0)) await c.close();
});

async function twoNodes() {
  const c = await newCluster();
  clusters.push(c);
  const nodes = await startAll(c, ["A", "B"]);
  const p = await c.project({ rateLimitPerMinute: 10_000, contactCreatesPerHour: 10_000 });
  return { c, p, apis: nodes.map((n) => n.api(p.key)) };
}

describe("upsert across nodes", () => {
  test("100 concurrent PUTs of one new email split over two nodes make one contact: one 201, 99 200", async () => {
    const { apis } = await twoNodes();
    const email = `race-${Date.now()}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => apis[i % 2]!("PUT", "/contacts", { query: { matchOn: "email" }, body: { email, notes: `n${i % 5}` } })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(99);
    expect(new Set(answers.map((r) => r.json.contactId)).size).toBe(1);
    const list = await apis[0]!("GET", "/contacts", { query: { email } });
    expect(list.json.data).toHaveLength(1);
  });

  test("40 concurrent creates holding one unique value split over two nodes: one 201, 39 409", async () => {
    const { c, p, apis } = await twoNodes();
    const field = await c.cli(["custom-field", "create", "--project", p.id, "--title", "External ID", "--type", "text", "--unique", "--json"]);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => apis[i % 2]!("POST", "/contacts", { body: { firstName: `U${i}`, customFields: { [field.id]: "ext-1" } } })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 409).map((r) => r.json.fieldName)).toEqual(Array(39).fill(`customFields.${field.id}`));
  });

  test("concurrent PATCHes with one If-Match split over two nodes: exactly one passes", async () => {
    const { apis } = await twoNodes();
    const created = (await apis[0]!("POST", "/contacts", { body: { firstName: "Versioned" } })).json;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        apis[i % 2]!("PATCH", `/contacts/${created.contactId}`, { body: { notes: `n${i}` }, headers: { "If-Match": '"1"' } }),
      ),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    expect(answers.filter((r) => r.status === 412)).toHaveLength(19);
  });
});
