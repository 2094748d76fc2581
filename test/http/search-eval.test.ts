/**
 * The search evaluation set (docs/api.md §11.6): about 300 people with names, emails and
 * phones from many countries (test/fixtures/search-eval/people.ts), and over 400 queries a
 * user would type, each with every contact it must find, all and only them
 * (test/fixtures/search-eval/queries.ts). Every query runs with the default order and with
 * `sort=relevance`; the score per kind and every miss are printed, and the set must pass whole.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { PEOPLE } from "../fixtures/search-eval/people.ts";
import { QUERIES, type Query } from "../fixtures/search-eval/queries.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type Api, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let api: Api;
const idOf = new Map<string, string>();
const keyOf = new Map<string, string>();

/** Queries run this many at a time. */
const PARALLEL = 6;
/** Results past this many are also walked in pages of this size. */
const PAGE = 3;

beforeAll(async () => {
  server = await startServer();
  // A project of its own: a typo is forgiven only when a word matches nothing in the project.
  const project = await server.newProject({ rateLimitPerMinute: 100_000 });
  api = server.client({ projectId: project.id, rotateEvery: 100_000 });
  // Batches of 50: each batch is one transaction, so the order by updatedAt has steps to check.
  for (let start = 0; start < PEOPLE.length; start += 50) {
    const people = PEOPLE.slice(start, start + 50);
    const items = people.map(({ key: _key, ...fields }) => fields);
    const res = await api("POST", "/contacts/batch", { body: { operation: "create", atomic: true, items } });
    expectStatus(res, 200);
    res.json.results.forEach((r: { contactId: string }, i: number) => {
      idOf.set(people[i]!.key, r.contactId);
      keyOf.set(r.contactId, people[i]!.key);
    });
  }
}, 120_000);
afterAll(() => server?.stop());

/** The query as sent: `{id:key}` and `{lid:key}` become that contact's contactId (lower-cased for lid). */
function queryText(query: string): string {
  return query.replace(/\{(id|lid):([^}]+)\}/g, (_, form: string, key: string) => {
    const id = idOf.get(key);
    if (!id) throw new Error(`unknown key ${key} in ${query}`);
    // A contactId query is a prefix too: CR-12 would also find CR-120…CR-129. Three digits
    // in a project of fewer than 1,000 contacts find only their contact.
    if (!/^CR-\d{3}$/.test(id)) throw new Error(`${key} is ${id}: pick a contact numbered 100 to 999`);
    return form === "lid" ? id.toLowerCase() : id;
  });
}

interface Outcome {
  keys: string[];
  /** Each contact's updatedAt, in the order of keys. */
  times: string[];
  error?: string;
}

/** Every page of `search` (limit 100, or `limit`) in order, as keys. */
async function search(text: string, sort?: "relevance", limit = 100): Promise<Outcome> {
  const keys: string[] = [];
  const times: string[] = [];
  let cursor: string | null = null;
  try {
    for (let page = 0; page < 100; page++) {
      const query: Record<string, string | number> = { search: text, limit };
      if (sort) query.sort = sort;
      if (cursor) query.cursor = cursor;
      const res = await api("GET", "/contacts", { query });
      if (res.status !== 200) return { keys, times, error: `${res.status} ${res.json?.code ?? ""} ${res.json?.message ?? ""}`.trim() };
      for (const c of res.json.data as { contactId: string; updatedAt: string }[]) {
        keys.push(keyOf.get(c.contactId) ?? c.contactId);
        times.push(c.updatedAt);
      }
      if (!res.json.pagination.hasMore) return { keys, times };
      cursor = res.json.pagination.nextCursor;
    }
    return { keys, times, error: "more than 100 pages" };
  } catch (error) {
    return { keys, times, error: String(error).split("\n")[0] };
  }
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && new Set(a).size === a.length && a.every((k) => b.includes(k));
const newestFirst = (times: string[]) => times.every((t, i) => i === 0 || Date.parse(times[i - 1]!) >= Date.parse(t));

/**
 * Why `outcome` fails `q` (null: it passes). The default order is updatedAt, most recent
 * first; relevance puts `exactFirst` first, each tier most recently updated first (§11.6).
 */
function verdict(q: Query, outcome: Outcome, relevance: boolean): string | null {
  if (outcome.error) return outcome.error;
  if (!sameSet(outcome.keys, q.expect)) return "wrong set";
  const tier = relevance && q.exactFirst ? q.exactFirst.length : 0;
  if (tier && !sameSet(outcome.keys.slice(0, tier), q.exactFirst!)) return `exact matches not first (exact: ${q.exactFirst!.join(" ")})`;
  if (!newestFirst(outcome.times.slice(0, tier)) || !newestFirst(outcome.times.slice(tier))) return `not most recently updated first: ${outcome.times.join(" ")}`;
  return null;
}

interface Miss {
  q: Query;
  text: string;
  sort: string;
  why: string;
  got: string[];
}

describe("search finds people (docs/api.md §11.6)", () => {
  test("every query of the evaluation set finds all and only its contacts, in the default order and with sort=relevance (exact matches first)", async () => {
    const misses: Miss[] = [];
    const score = new Map<string, { total: number; updatedAt: number; relevance: number }>();
    const queue = [...QUERIES];
    const worker = async () => {
      for (let q = queue.shift(); q; q = queue.shift()) {
        const text = queryText(q.query);
        const row = score.get(q.kind) ?? { total: 0, updatedAt: 0, relevance: 0 };
        score.set(q.kind, row);
        row.total++;
        for (const sort of ["updatedAt", "relevance"] as const) {
          const outcome = await search(text, sort === "relevance" ? "relevance" : undefined);
          let why = verdict(q, outcome, sort === "relevance");
          // Pages of 3 walked with nextCursor give the same list in the same order (§11.6, §5).
          if (why === null && q.expect.length > PAGE) {
            const paged = await search(text, sort === "relevance" ? "relevance" : undefined, PAGE);
            if (paged.error || paged.keys.join(" ") !== outcome.keys.join(" ")) {
              why = `pages of ${PAGE} differ: ${paged.error ?? paged.keys.join(" ")}`;
            }
          }
          if (why === null) row[sort]++;
          else misses.push({ q, text, sort, why, got: outcome.keys });
        }
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));

    const lines = ["", `search evaluation: ${PEOPLE.length} contacts, ${QUERIES.length} queries`, "kind                 default   relevance"];
    let passed = 0;
    for (const [kind, row] of [...score].sort(([a], [b]) => a.localeCompare(b))) {
      lines.push(`${kind.padEnd(20)} ${`${row.updatedAt}/${row.total}`.padStart(7)}   ${`${row.relevance}/${row.total}`.padStart(9)}`);
    }
    const total = QUERIES.length * 2;
    passed = [...score.values()].reduce((n, row) => n + row.updatedAt + row.relevance, 0);
    lines.push(`total (both orders)  ${passed}/${total} (${((100 * passed) / total).toFixed(1)} %)`);
    for (const m of misses.sort((a, b) => a.q.kind.localeCompare(b.q.kind) || a.text.localeCompare(b.text) || a.sort.localeCompare(b.sort))) {
      const extra = m.got.filter((k) => !m.q.expect.includes(k));
      const missing = m.q.expect.filter((k) => !m.got.includes(k));
      lines.push(
        `MISS [${m.q.kind}] ${JSON.stringify(m.text)} (${m.sort}): ${m.why}\n` +
          `  expected: ${m.q.expect.join(" ") || "(nothing)"}\n` +
          `  got:      ${m.got.join(" ") || "(nothing)"}` +
          (m.why === "wrong set" ? `\n  extra: ${extra.join(" ") || "-"}   missing: ${missing.join(" ") || "-"}` : ""),
      );
    }
    console.log(lines.join("\n"));
    expect(misses.map((m) => `[${m.q.kind}] ${m.text} (${m.sort}): ${m.why}`)).toEqual([]);
    expect(passed).toBe(total);
  }, 300_000);
});
