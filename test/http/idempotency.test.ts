import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ALL_SCOPES, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";

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
    expect(res.headers.get("idempotent-replayed")).not.toBe("true");
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
    expectError(res, "ERR_IDEMPOTENCY_KEY_REUSED");
  });

  test("the same key on another path is 422 ERR_IDEMPOTENCY_KEY_REUSED", async () => {
    const idem = uniq();
    const c = await post("/contacts", { firstName: "Path" }, idem);
    expectStatus(c, 201);
    const res = await post(`/contacts/${c.json.contactId}/interactions`, { firstName: "Path" }, idem);
    expectError(res, "ERR_IDEMPOTENCY_KEY_REUSED");
  });

  test("the same key value from another API key of the same project runs anew", async () => {
    const idem = uniq();
    const body = { firstName: "Other key" };
    const first = await post("/contacts", body, idem);
    const otherKey = await srv.newKey(ALL_SCOPES);
    const second = await post("/contacts", body, idem, otherKey);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).not.toBe("true");
    expect(second.json.contactId).not.toBe(first.json.contactId);
  });

  test("the same key value from an API key of another project runs anew", async () => {
    const idem = uniq();
    const body = { firstName: "Other project" };
    const first = await post("/contacts", body, idem);
    const p = await srv.newProject();
    const second = await post("/contacts", body, idem, p.key);
    expectStatus(second, 201);
    expect(second.headers.get("idempotent-replayed")).not.toBe("true");
    expectStatus(await srv.api("GET", `/contacts/${second.json.contactId}`, { key: p.key }), 200);
    expect(first.status).toBe(201);
  });

  test("an Idempotency-Key of exactly 255 printable characters is accepted", async () => {
    expectStatus(await post("/contacts", { firstName: "Long" }, "k".repeat(250) + uniq().slice(-5)), 201);
  });

  test.each([
    ["empty", ""],
    ["256 characters long", "k".repeat(256)],
  ])("an Idempotency-Key that is %s is 422", async (_name, value) => {
    const res = await post("/contacts", { firstName: "Bad" }, value);
    expect(res.status).toBe(422);
    expect(res.json.success).toBe(false);
    expect(["ERR_FORM_VALIDATION", "ERR_IDEMPOTENCY_KEY_REUSED"]).toContain(res.json.code);
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
