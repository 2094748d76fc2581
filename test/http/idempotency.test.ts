/**
 * Idempotency-Key on every POST (docs/api.md §8; docs/decisions.md: only successful answers
 * are stored). Most rules run against a spawned server; the in-flight 409 runs against the
 * service in this process, whose DNS resolver holds a webhook URL's lookup open so the
 * first request is provably still running when the repeat arrives.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { heldResolver, startInProcess, type InProcessServer } from "../helpers/in-process.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let key: string;
let n = 0;
const uniq = () => `idem-${process.pid}-${Date.now()}-${++n}`;

beforeAll(async () => {
  srv = await startServer();
  key = await srv.newKey(ALL_SCOPES);
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const post = (path: string, body: unknown, idem: string | undefined, k = key) =>
  srv.api("POST", path, { key: k, body, headers: idem === undefined ? {} : { "Idempotency-Key": idem } });

async function countByEmail(email: string) {
  const res = await srv.api("GET", "/contacts", { query: { email } });
  return res.json.data.length as number;
}

describe("Idempotency-Key on POST /contacts", () => {
  test("the first request with an Idempotency-Key runs and is not marked as replayed", async () => {
    const res = await post("/contacts", { firstName: "Idem", email: `${uniq()}@example.com` }, uniq());
    expectStatus(res, 201);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
  });

  test("a repeat with the same key and body answers the stored status and body with Idempotent-Replayed: true and creates nothing", async () => {
    const idem = uniq();
    const email = `${uniq()}@example.com`;
    const body = { firstName: "Idem", email };
    const first = await post("/contacts", body, idem);
    expectStatus(first, 201);
    const again = await post("/contacts", body, idem);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    expect(await countByEmail(email)).toBe(1);
  });

  test("a replay also returns the stored Location header", async () => {
    const idem = uniq();
    const body = { firstName: "Loc" };
    const first = await post("/contacts", body, idem);
    const again = await post("/contacts", body, idem);
    expect(again.headers.get("location")).toBe(first.headers.get("location"));
  });

  test("a replay returns the stored answer even after the contact changed", async () => {
    const idem = uniq();
    const body = { firstName: "Stored" };
    const first = await post("/contacts", body, idem);
    expectStatus(await srv.api("PATCH", `/contacts/${first.json.contactId}`, { body: { firstName: "Changed" } }), 200);
    const again = await post("/contacts", body, idem);
    expect(again.json).toEqual(first.json);
  });

  test("the same key with another body is 422 ERR_IDEMPOTENCY_KEY_REUSED", async () => {
    const idem = uniq();
    expectStatus(await post("/contacts", { firstName: "One" }, idem), 201);
    const res = await post("/contacts", { firstName: "Two" }, idem);
    expectError(res, "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key");
  });

  test("the same key on another path is 422 ERR_IDEMPOTENCY_KEY_REUSED, even with the same body", async () => {
    const idem = uniq();
    const c = await post("/contacts", { firstName: "Path" }, idem);
    expectStatus(c, 201);
    const res = await post(`/contacts/${c.json.contactId}/interactions`, { firstName: "Path" }, idem);
    expectError(res, "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key");
  });

  test("a key used on POST /contacts is 422 ERR_IDEMPOTENCY_KEY_REUSED on POST /contacts/{id}/interactions with a body valid there, and no log is written", async () => {
    const idem = uniq();
    const c = await post("/contacts", { firstName: "Reused" }, idem);
    expectStatus(c, 201);
    const path = `/contacts/${c.json.contactId}/interactions`;
    expectError(await post(path, { type: "note", note: "valid here" }, idem), "ERR_IDEMPOTENCY_KEY_REUSED", "Idempotency-Key");
    expect((await srv.api("GET", path)).json.data).toEqual([]);
    // The key was never taken on that path: without it, the same body is written.
    expectStatus(await post(path, { type: "note", note: "valid here" }, undefined), 201);
  });

  test("the same key value from another API key of the same project runs anew", async () => {
    const idem = uniq();
    const body = { firstName: "Other key" };
    const first = await post("/contacts", body, idem);
    const otherKey = await srv.newKey(ALL_SCOPES);
    const second = await post("/contacts", body, idem, otherKey);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(second.json.contactId).not.toBe(first.json.contactId);
  });

  test("the same key value from an API key of another project runs anew", async () => {
    const idem = uniq();
    const body = { firstName: "Other project" };
    const first = await post("/contacts", body, idem);
    const p = await srv.newProject();
    const second = await post("/contacts", body, idem, p.key);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expectStatus(await srv.api("GET", `/contacts/${second.json.contactId}`, { key: p.key }), 200);
    expect(first.status).toBe(201);
  });

  test("an Idempotency-Key of exactly 255 printable characters is accepted", async () => {
    expectStatus(await post("/contacts", { firstName: "Long" }, "k".repeat(250) + uniq().slice(-5)), 201);
  });

  test.each([
    ["empty", ""],
    ["256 characters long", "k".repeat(256)],
    ["not printable ASCII", "clé-ü"],
  ])("an Idempotency-Key that is %s is 422 ERR_FORM_VALIDATION naming Idempotency-Key, and nothing is created", async (_name, value) => {
    const email = `${uniq()}@example.com`;
    const res = await post("/contacts", { firstName: "Bad", email }, value);
    expectError(res, "ERR_FORM_VALIDATION", "Idempotency-Key");
    expect(await countByEmail(email)).toBe(0);
  });

  test("concurrent repeats of one Idempotency-Key run once: the others replay (201, Idempotent-Replayed) or are 409 ERR_CONFLICT while the first runs", async () => {
    const idem = uniq();
    const email = `${uniq()}@example.com`;
    const body = { firstName: "Concurrent", email };
    const answers = await Promise.all(Array.from({ length: 10 }, () => post("/contacts", body, idem)));
    const fresh = answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") !== "true");
    expect(fresh).toHaveLength(1);
    for (const a of answers) {
      if (a === fresh[0]) continue;
      if (a.status === 201) {
        expect(a.headers.get("idempotent-replayed")).toBe("true");
        expect(a.json).toEqual(fresh[0].json);
      } else expectError(a, "ERR_CONFLICT");
    }
    expect(await countByEmail(email)).toBe(1);
  });

  test("a refused request stores nothing: the 402 is answered again (not replayed), and once the quota allows it the same request runs anew and is then replayed", async () => {
    const p = await srv.newProject({ contactQuota: 0 });
    const idem = uniq();
    const email = `${uniq()}@example.com`;
    const body = { firstName: "Quota", email };
    const refused = await post("/contacts", body, idem, p.key);
    expectError(refused, "ERR_QUOTA_EXCEEDED");
    const again = await post("/contacts", body, idem, p.key);
    expectError(again, "ERR_QUOTA_EXCEEDED");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    await srv.cli(["project", "update", p.id, "--contact-quota", "1"]);
    // Every try until the new quota is seen is another 402 that stores nothing.
    const ran = await until(
      async () => {
        const res = await post("/contacts", body, idem, p.key);
        return res.status === 402 ? undefined : res;
      },
      { timeoutMs: 5_000, what: "the raised quota to let the create run" },
    );
    expectStatus(ran, 201);
    expect(ran.headers.get("idempotent-replayed")).toBeNull();
    const replayed = await post("/contacts", body, idem, p.key);
    expectStatus(replayed, 201);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.json).toEqual(ran.json);
    const listed = await srv.api("GET", "/contacts", { key: p.key, query: { email } });
    expect(listed.json.data.map((c: { contactId: string }) => c.contactId)).toEqual([ran.json.contactId]);
  });

  test("a refused request (422) stores nothing: the same key and body are answered 422 again, never replayed", async () => {
    const idem = uniq();
    const body = { firstName: "Bad email", email: "not-an-email" };
    expectError(await post("/contacts", body, idem), "ERR_FORM_VALIDATION", "email");
    const again = await post("/contacts", body, idem);
    expectError(again, "ERR_FORM_VALIDATION", "email");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    // The key is still free for a request of another body.
    const ok = await post("/contacts", { firstName: "Good email", email: `${uniq()}@example.com` }, idem);
    expectStatus(ok, 201);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
  });

  test("requests without an Idempotency-Key are never replayed", async () => {
    const body = { firstName: "Plain" };
    const a = await post("/contacts", body, undefined);
    const b = await post("/contacts", body, undefined);
    expect(a.json.contactId).not.toBe(b.json.contactId);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
  });
});

describe("Idempotency-Key on POST /contacts/{contactId}/interactions", () => {
  test("a repeat with the same key and body replays the log with Idempotent-Replayed: true and creates nothing", async () => {
    const c = await post("/contacts", { firstName: "Logs" }, undefined);
    const path = `/contacts/${c.json.contactId}/interactions`;
    const idem = uniq();
    const first = await post(path, { type: "note", note: "idempotent" }, idem);
    expectStatus(first, 201);
    const again = await post(path, { type: "note", note: "idempotent" }, idem);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    const l = await srv.api("GET", path);
    expect(l.json.data).toHaveLength(1);
  });

  test("the same key with another body on the interactions route is 422 ERR_IDEMPOTENCY_KEY_REUSED", async () => {
    const c = await post("/contacts", { firstName: "Logs" }, undefined);
    const path = `/contacts/${c.json.contactId}/interactions`;
    const idem = uniq();
    expectStatus(await post(path, { type: "note", note: "a" }, idem), 201);
    expectError(await post(path, { type: "note", note: "b" }, idem), "ERR_IDEMPOTENCY_KEY_REUSED");
  });

  test("the same key on another contact's interactions path is 422 ERR_IDEMPOTENCY_KEY_REUSED", async () => {
    const a = await post("/contacts", { firstName: "A" }, undefined);
    const b = await post("/contacts", { firstName: "B" }, undefined);
    const idem = uniq();
    expectStatus(await post(`/contacts/${a.json.contactId}/interactions`, { type: "note" }, idem), 201);
    expectError(await post(`/contacts/${b.json.contactId}/interactions`, { type: "note" }, idem), "ERR_IDEMPOTENCY_KEY_REUSED");
  });
});

describe("Idempotency-Key while the first request is still running (service in this process)", () => {
  let server: InProcessServer;
  // Only the first lookup is held: a repeat that ran (instead of being refused) would answer.
  const held = heldResolver("held.example.com", { holdFirst: 1 });

  beforeAll(async () => {
    // Production: POST /webhooks resolves its URL in the route's prepare step, inside the
    // Idempotency-Key's hold and before the transaction (src/http/transaction.ts).
    server = await startInProcess({
      env: { CRM_ENV: "production" },
      overrides: { resolve: held.resolve },
    });
  }, 30_000);

  afterAll(async () => {
    held.release();
    await server?.stop();
  });

  test("a repeat while the first request with the key is still running is 409 ERR_CONFLICT with Retry-After: 1; once the first answered 201, a repeat replays it", async () => {
    const p = await server.newProject();
    const idem = uniq();
    const headers = { "Idempotency-Key": idem };
    const body = { url: "https://held.example.com/hook", events: ["*"], description: "held" };
    let firstAnswered = false;
    const first = p.api("POST", "/webhooks", { body, headers }).then((res) => {
      firstAnswered = true;
      return res;
    });
    await held.started; // the first request is inside its DNS lookup: running, not answered
    const repeat = await p.api("POST", "/webhooks", { body, headers });
    expectError(repeat, "ERR_CONFLICT");
    expect(repeat.json.fieldName).toBeUndefined();
    expect(repeat.headers.get("idempotent-replayed")).toBeNull();
    expect(repeat.headers.get("retry-after")).toBe("1"); // a retry in a moment gets the stored answer
    // Whatever the body: the key is taken while the first runs.
    expectError(await p.api("POST", "/webhooks", { body: { ...body, description: "other" }, headers }), "ERR_CONFLICT");
    expect(firstAnswered).toBe(false);

    held.release();
    const answered = await first;
    expectStatus(answered, 201);
    expect(answered.headers.get("idempotent-replayed")).toBeNull();
    expect(answered.json.secret).toMatch(/^whsec_/);
    const replayed = await p.api("POST", "/webhooks", { body, headers });
    expectStatus(replayed, 201);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.json).toEqual(answered.json);
    // The refused repeats wrote nothing: one subscription.
    const list = await p.api("GET", "/webhooks");
    expect(list.json.data.map((w: { id: string }) => w.id)).toEqual([answered.json.id]);
  }, 30_000);
});
