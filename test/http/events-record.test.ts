/**
 * The event record (docs/webhooks.md §1): every change that fires an event writes
 * it to the event log in the same transaction, so it is there when the answer leaves. Read
 * through GET /events (the log the dispatcher delivers from), oldest first: the same on
 * every storage backend.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readEvents } from "../helpers/events.ts";
import { ISO_RE } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;

interface EventBody {
  id: string;
  event: string;
  apiVersion: string;
  projectId: string;
  createdAt: string;
  data: any;
}

/** Every event of the default project, oldest first. */
const events = async (): Promise<EventBody[]> => (await readEvents(server.api)) as unknown as EventBody[];

/** The ids of every event now: what a step adds is what is not among them (events of one millisecond may list in any order). */
const snapshot = async () => new Set((await events()).map((e) => e.id));
const addedSince = async (before: Set<string>) => (await events()).filter((e) => !before.has(e.id));

beforeAll(async () => {
  server = await startServer();
}, 30_000);
afterAll(async () => {
  await server.stop();
}, 30_000);

describe("events recorded with the change", () => {
  test("POST /contacts records contact.created with the contact exactly as answered, no duplicateSignal", async () => {
    const before = await snapshot();
    const sentAt = Date.now();
    const res = await server.api("POST", "/contacts", { body: { firstName: "Eve", email: "eve@example.com" } });
    const answeredAt = Date.now();
    expect(res.status).toBe(201);
    const added = await addedSince(before);
    expect(added).toHaveLength(1);
    const e = added[0]!;
    expect(e).toMatchObject({ event: "contact.created", apiVersion: "v1", projectId: server.projectId });
    expect(e.id).toMatch(/^evt_/);
    // Stamped while the request ran (one clock: this machine's).
    expect(e.createdAt).toMatch(ISO_RE);
    expect(Date.parse(e.createdAt)).toBeGreaterThanOrEqual(sentAt);
    expect(Date.parse(e.createdAt)).toBeLessThanOrEqual(answeredAt);
    expect(e.data).toEqual({ contact: res.json });
    expect(e.data.contact.duplicateSignal).toBeUndefined();
  });

  test("PATCH records contact.updated with changedFields; a relabel adds previousContactId", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Finn" } });
    const before = await snapshot();
    const res = await server.api("PATCH", `/contacts/${created.json.contactId}`, {
      body: { lastName: "Gray", contactId: "CR-5000" },
    });
    expect(res.status).toBe(200);
    const [e, ...rest] = await addedSince(before);
    expect(rest).toHaveLength(0);
    expect(e!.event).toBe("contact.updated");
    expect(e!.data.contact).toEqual(res.json);
    expect([...e!.data.changedFields].sort()).toEqual(["contactId", "lastName"]);
    expect(e!.data.previousContactId).toBe(created.json.contactId);
  });

  test("a PATCH that changes nothing records no event", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Gus", tags: ["a", "b"] } });
    const before = await snapshot();
    const res = await server.api("PATCH", `/contacts/${created.json.contactId}`, {
      body: { firstName: "Gus", tags: ["B", "a"] },
    });
    expect(res.status).toBe(200);
    expect(res.json.updatedAt).toBe(created.json.updatedAt);
    expect(await addedSince(before)).toEqual([]);
  });

  test("POST interactions records interaction_log.created with the log and a contact summary; a replay records nothing", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Hal", lastName: "Ito", email: "hal@example.com" } });
    const before = await snapshot();
    const body = { type: "note", note: "called", uniqueIdentifier: "once" };
    const first = await server.api("POST", `/contacts/${created.json.contactId}/interactions`, { body });
    expect(first.status).toBe(201);
    const again = await server.api("POST", `/contacts/${created.json.contactId}/interactions`, { body });
    expect(again.status).toBe(200);
    const added = await addedSince(before);
    expect(added).toHaveLength(1);
    expect(added[0]!.event).toBe("interaction_log.created");
    expect(added[0]!.data).toEqual({
      interactionLog: first.json,
      contact: { contactId: created.json.contactId, firstName: "Hal", lastName: "Ito", email: "hal@example.com" },
    });
  });

  test("an Idempotency-Key replay records no second event", async () => {
    const before = await snapshot();
    const opts = { body: { firstName: "Ida" }, headers: { "Idempotency-Key": "evt-replay-1" } };
    const key = await server.newKey(["contacts:write"]);
    const a = await server.api("POST", "/contacts", { ...opts, key });
    const b = await server.api("POST", "/contacts", { ...opts, key });
    expect(a.status).toBe(201);
    expect(b.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await addedSince(before)).toHaveLength(1);
  });

  test("a failed request records nothing", async () => {
    const before = await snapshot();
    const res = await server.api("POST", "/contacts", { body: { firstName: "Jo", tags: ["fresh-tag"], contactTypeId: "ct_nope" } });
    expect(res.status).toBe(422);
    expect(await addedSince(before)).toEqual([]);
    const tags = await server.api("GET", "/tags");
    expect(tags.json.data.map((t: { name: string }) => t.name)).not.toContain("fresh-tag");
  });
});
