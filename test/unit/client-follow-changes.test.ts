/**
 * The typed client's `followChanges` (docs/api.md §16.3, §19.2) over a scripted fetch: the
 * answers the real server gives only with effort (a 410, a 429 beyond the client's own retry
 * policy, a 429 without Retry-After), and where each yielded cursor points.
 */
import { describe, expect, test } from "bun:test";
import { createClient, CrmApiError, type FetchLike, type FollowedChange } from "@crm-service/client";

type Scripted = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that answers the scripted responses in turn (the last one again once they run out) and records each request. */
function scripted(answers: Scripted[]) {
  const requests: Array<{ url: URL; at: number }> = [];
  const fetch: FetchLike = async (request) => {
    requests.push({ url: new URL(request.url), at: Date.now() });
    const a = answers[Math.min(requests.length - 1, answers.length - 1)]!;
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), {
      status: a.status,
      headers: { "Content-Type": "application/json", ...a.headers },
    });
  };
  return { fetch, requests };
}

const record = (seq: number) => ({ seq, at: "2026-01-15T09:30:00.000Z", object: "contact", id: `CR-${seq}`, action: "created" });
const page = (seqs: number[], nextCursor: string, hasMore = false) => ({ status: 200, body: { data: seqs.map(record), pagination: { nextCursor, hasMore } } });
const envelope = (statusCode: number, code: string, message: string) => ({ success: false, statusCode, error: "x", code, message });

async function drain<C extends string | undefined>(feed: AsyncIterable<FollowedChange<C>>): Promise<FollowedChange<C>[]> {
  const out: FollowedChange<C>[] = [];
  for await (const item of feed) out.push(item);
  return out;
}

const client = (fetch: FetchLike, retry: false | { maxAttempts: number; baseDelayMs: number; maxDelayMs: number } = false) =>
  createClient({ baseUrl: "http://crm.test", apiKey: "crm_test_x", fetch, retry });

describe("followChanges over a scripted fetch", () => {
  test("each change carries the cursor its page was read from, the page's last one nextCursor; the query holds what was given", async () => {
    const { fetch, requests } = scripted([page([1, 2, 3], "c3", true), page([4], "c4"), page([], "c4")]);
    const feed = client(fetch).followChanges({ after: "c0", limit: 3, object: ["contact", "interaction_log"], stop: "when-caught-up" });
    const got = await drain(feed);
    expect(got.map((g) => [g.change.seq, g.cursor])).toEqual([
      [1, "c0"],
      [2, "c0"],
      [3, "c3"],
      [4, "c4"],
    ]);
    expect(feed.cursor).toBe("c4");
    // Started with `after`, the cursors are typed string (checked by tsc).
    const typed: string = got[0]!.cursor;
    expect(typed).toBe("c0");
    expect(requests.map((r) => r.url.search)).toEqual([
      "?after=c0&limit=3&object=contact&object=interaction_log",
      "?after=c3&limit=3&object=contact&object=interaction_log",
    ]);
  });

  test("a break mid-page leaves feed.cursor where resuming replays the rest of the page, never past it", async () => {
    const { fetch } = scripted([page([1, 2, 3], "c3")]);
    const feed = client(fetch).followChanges({ after: "c0", stop: "when-caught-up" });
    for await (const { change } of feed) if (change.seq === 2) break;
    expect(feed.cursor).toBe("c0");
  });

  test("410 ERR_CURSOR_EXPIRED is thrown as CrmApiError", async () => {
    const { fetch } = scripted([{ status: 410, body: envelope(410, "ERR_CURSOR_EXPIRED", "past retention") }]);
    const error = await drain(client(fetch).followChanges({ after: "old", stop: "when-caught-up" })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 410, code: "ERR_CURSOR_EXPIRED" });
  });

  test("a 429 whose Retry-After is past the client's maxDelayMs is waited out in full by the feed, then it goes on", async () => {
    const limited = { status: 429, body: envelope(429, "ERR_RATE_LIMITED", "slow down"), headers: { "Retry-After": "1" } };
    const { fetch, requests } = scripted([limited, page([1], "c1")]);
    // The client's own retries give up on a Retry-After over 100 ms; the feed does not.
    const got = await drain(client(fetch, { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 100 }).followChanges({ stop: "when-caught-up", pollIntervalMs: 1 }));
    expect(got.map((g) => g.change.seq)).toEqual([1]);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(995);
  });

  test("a 429 without Retry-After waits the poll interval", async () => {
    const { fetch, requests } = scripted([{ status: 429, body: envelope(429, "ERR_RATE_LIMITED", "slow down") }, page([], "c0")]);
    await drain(client(fetch).followChanges({ stop: "when-caught-up", pollIntervalMs: 300 }));
    expect(requests).toHaveLength(2);
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(295);
  });

  test("an abort during a Retry-After wait ends the feed at once, without an error", async () => {
    const limited = { status: 429, body: envelope(429, "ERR_RATE_LIMITED", "slow down"), headers: { "Retry-After": "3600" } };
    const { fetch, requests } = scripted([limited]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    expect(await drain(client(fetch).followChanges({ signal: controller.signal }))).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(requests).toHaveLength(1);
  });

  test("an already aborted signal sends nothing; a negative pollIntervalMs is a RangeError", async () => {
    const { fetch, requests } = scripted([page([1], "c1")]);
    expect(await drain(client(fetch).followChanges({ signal: AbortSignal.abort() }))).toEqual([]);
    expect(requests).toHaveLength(0);
    expect(() => client(fetch).followChanges({ pollIntervalMs: -1 })).toThrow(RangeError);
  });
});
