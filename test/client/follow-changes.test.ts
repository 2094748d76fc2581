/**
 * The client's `followChanges` against the real server (docs/api.md §19.2, §16.3): it walks
 * `GET /changes` from a stored cursor, yields each record with the cursor to store once it is
 * applied, keeps polling when caught up (or stops, if asked), waits out a 429's Retry-After,
 * and ends quietly when its signal aborts. Resuming from any yielded cursor never skips a change.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, CrmApiError, unwrap, type CrmClient, type FollowedChange } from "@crm-service/client";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { recordingFetch } from "./recording-fetch.ts";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 30_000);
afterAll(async () => {
  await srv?.stop();
}, 30_000);

async function projectClient(options: { rateLimitPerMinute?: number } = {}) {
  const project = await srv.newProject(options);
  const recorder = recordingFetch();
  const crm: CrmClient = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch: recorder.fetch, retry: false });
  return { project, crm, sent: recorder.sent };
}

async function create(crm: CrmClient, firstName: string): Promise<string> {
  return unwrap(await crm.POST("/contacts", { body: { firstName } })).contactId;
}

/** The list's Changes-Cursor: where a new copy starts following. */
async function listCursor(crm: CrmClient): Promise<string> {
  const { response } = await crm.GET("/contacts", { params: { query: { limit: 1 } } });
  return response.headers.get("changes-cursor")!;
}

async function drain<C extends string | undefined>(feed: AsyncIterable<FollowedChange<C>>): Promise<FollowedChange<C>[]> {
  const out: FollowedChange<C>[] = [];
  for await (const item of feed) out.push(item);
  return out;
}

describe("followChanges", () => {
  test("from a list's Changes-Cursor: every later change in seq order, paged by limit; the last of each page carries nextCursor", async () => {
    const { crm, sent } = await projectClient();
    await create(crm, "Before");
    const start = await listCursor(crm);
    const ids = [await create(crm, "A"), await create(crm, "B"), await create(crm, "C")];
    unwrap(await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: ids[0]! } }, body: { lastName: "Lovelace" } }));
    await crm.DELETE("/contacts/{contactId}", { params: { path: { contactId: ids[1]! } } });

    const feed = crm.followChanges({ after: start, limit: 2, stop: "when-caught-up" });
    const got = await drain(feed);
    expect(got.map((g) => [g.change.seq, g.change.id, g.change.action])).toEqual([
      [2, ids[0], "created"],
      [3, ids[1], "created"],
      [4, ids[2], "created"],
      [5, ids[0], "updated"],
      [6, ids[1], "deleted"],
    ]);
    expect(got[3]!.change.changes).toEqual([{ field: "lastName", from: null, to: "Lovelace" }]);
    // Three pages of at most 2: the mid-page change carries the cursor its page was read from.
    const feedCalls = sent.filter((s) => s.url.pathname === "/v1/changes");
    expect(feedCalls.map((s) => s.url.searchParams.get("limit"))).toEqual(["2", "2", "2"]);
    expect(feedCalls[0]!.url.searchParams.get("after")).toBe(start);
    expect(got[0]!.cursor).toBe(start);
    expect(got[1]!.cursor).toBe(feedCalls[1]!.url.searchParams.get("after")!);
    expect(got[2]!.cursor).toBe(got[1]!.cursor);
    expect(feed.cursor).toBe(got[4]!.cursor);

    // Resuming from any yielded cursor never skips a change: it starts at or before the next one.
    for (const [i, item] of got.entries()) {
      const resumed = await drain(crm.followChanges({ after: item.cursor, stop: "when-caught-up" }));
      const seqs = resumed.map((r) => r.change.seq);
      if (i === got.length - 1) {
        expect(seqs).toEqual([]);
        continue;
      }
      expect(seqs.at(-1)).toBe(6);
      expect(seqs[0]!).toBeLessThanOrEqual(got[i + 1]!.change.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, k) => seqs[0]! + k));
    }
  });

  test("caught up: nothing yielded, the cursor stays usable; iterating the feed again resumes from where it stands", async () => {
    const { crm } = await projectClient();
    const feed = crm.followChanges({ after: await listCursor(crm), stop: "when-caught-up" });
    expect(await drain(feed)).toEqual([]);
    const idle = feed.cursor;
    expect(typeof idle).toBe("string");
    const id = await create(crm, "Later");
    const next = await drain(feed);
    expect(next.map((n) => [n.change.id, n.change.action])).toEqual([[id, "created"]]);
    expect(feed.cursor).not.toBe(idle);
    expect(await drain(feed)).toEqual([]);
  });

  test("without after: from the oldest change kept; the first page's mid-page cursors are undefined (resume without after)", async () => {
    const { crm } = await projectClient();
    await create(crm, "One");
    await create(crm, "Two");
    const got = await drain(crm.followChanges({ stop: "when-caught-up" }));
    expect(got.map((g) => g.change.seq)).toEqual([1, 2]);
    expect(got[0]!.cursor).toBeUndefined();
    expect(typeof got[1]!.cursor).toBe("string");
  });

  test("object filter: one object or several", async () => {
    const { crm } = await projectClient();
    const start = await listCursor(crm);
    const id = await create(crm, "Logged");
    unwrap(await crm.POST("/contacts/{contactId}/interactions", { params: { path: { contactId: id } }, body: { type: "note", note: "hi" } }));
    const contacts = await drain(crm.followChanges({ after: start, object: "contact", stop: "when-caught-up" }));
    expect(contacts.map((c) => c.change.object)).toEqual(["contact"]);
    const logs = await drain(crm.followChanges({ after: start, object: ["interaction_log"], stop: "when-caught-up" }));
    expect(logs.map((c) => c.change.object)).toEqual(["interaction_log"]);
    const both = await drain(crm.followChanges({ after: start, object: ["contact", "interaction_log"], stop: "when-caught-up" }));
    expect(both.map((c) => c.change.object)).toEqual(["contact", "interaction_log"]);
  });

  test("keeps polling once caught up and yields changes as they are made; aborting the signal ends the loop without an error", async () => {
    const { crm, sent } = await projectClient();
    const controller = new AbortController();
    const feed = crm.followChanges({ after: await listCursor(crm), pollIntervalMs: 50, signal: controller.signal });
    const seen: string[] = [];
    const following = (async () => {
      for await (const { change } of feed) {
        seen.push(change.id);
        if (seen.length === 3) controller.abort();
      }
    })();
    const made: string[] = [];
    for (const name of ["P1", "P2", "P3"]) {
      made.push(await create(crm, name));
      await Bun.sleep(120);
    }
    await following;
    expect(seen).toEqual(made);
    // Empty polls in between: it waited and asked again.
    expect(sent.filter((s) => s.url.pathname === "/v1/changes").length).toBeGreaterThan(3);
    expect(typeof feed.cursor).toBe("string");
  });

  test("an abort during the wait between polls ends it at once", async () => {
    const { crm } = await projectClient();
    const controller = new AbortController();
    const feed = crm.followChanges({ after: await listCursor(crm), pollIntervalMs: 60_000, signal: controller.signal });
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    expect(await drain(feed)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  test("a 429 is waited out for its Retry-After, then the feed goes on (the client's retries off)", async () => {
    // 30 a minute: a token every 2 s, so the first poll after the bucket is spent is refused.
    const { crm, sent, project } = await projectClient({ rateLimitPerMinute: 30 });
    const start = await listCursor(crm);
    const id = await create(crm, "Limited");
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${srv.baseUrl}/ping`, { headers: { Authorization: `Bearer ${project.key}` } });
      await res.body?.cancel();
      if (res.status === 429) break;
    }
    const got = await drain(crm.followChanges({ after: start, stop: "when-caught-up", pollIntervalMs: 1 }));
    expect(got.map((g) => g.change.id)).toEqual([id]);
    const polls = sent.filter((s) => s.url.pathname === "/v1/changes");
    expect(polls[0]!.status).toBe(429);
    expect(polls.at(-1)!.status).toBe(200);
    const retryAfter = Number(polls[0]!.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // Not the 1 ms poll interval: the service's Retry-After.
    expect(polls[1]!.at - polls[0]!.at).toBeGreaterThanOrEqual(retryAfter * 1000 - 5);
  }, 30_000);

  test("other failures throw CrmApiError: a cursor the service never issued is 422 after", async () => {
    const { crm } = await projectClient();
    const error = await drain(crm.followChanges({ after: "not-a-cursor", stop: "when-caught-up" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 422, code: "ERR_FORM_VALIDATION", fieldName: "after" });
  });
});
