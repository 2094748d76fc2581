/**
 * The event record (interface §6, decisions §7): every change that fires an event writes
 * it to the `events` table in the same transaction. Read here straight from the database
 * file, as the dispatcher will.
 */
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let server: ServerHandle;
let db: Database;

interface EventBody {
  id: string;
  event: string;
  apiVersion: string;
  projectId: string;
  createdAt: string;
  data: any;
}

const events = (): EventBody[] =>
  (db.query("SELECT body FROM events ORDER BY rowid").all() as Array<{ body: string }>).map((r) => JSON.parse(r.body));

beforeAll(async () => {
  server = await startServer();
  db = new Database(server.env.CRM_DB_PATH!, { readonly: true });
});
afterAll(async () => {
  db.close();
  await server.stop();
});

describe("events recorded with the change", () => {
  test("POST /contacts records contact.created with the contact exactly as answered, no duplicateSignal", async () => {
    const before = events().length;
    const res = await server.api("POST", "/contacts", { body: { firstName: "Eve", email: "eve@example.com" } });
    expect(res.status).toBe(201);
    const added = events().slice(before);
    expect(added).toHaveLength(1);
    const e = added[0]!;
    expect(e).toMatchObject({ event: "contact.created", apiVersion: "v1", projectId: server.projectId });
    expect(e.id).toMatch(/^evt_/);
    expect(Number.isNaN(Date.parse(e.createdAt))).toBe(false);
    expect(e.data).toEqual({ contact: res.json });
    expect(e.data.contact.duplicateSignal).toBeUndefined();
  });

  test("PATCH records contact.updated with changedFields; a relabel adds previousContactId", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Finn" } });
    const before = events().length;
    const res = await server.api("PATCH", `/contacts/${created.json.contactId}`, {
      body: { lastName: "Gray", contactId: "CR-5000" },
    });
    expect(res.status).toBe(200);
    const [e, ...rest] = events().slice(before);
    expect(rest).toHaveLength(0);
    expect(e!.event).toBe("contact.updated");
    expect(e!.data.contact).toEqual(res.json);
    expect([...e!.data.changedFields].sort()).toEqual(["contactId", "lastName"]);
    expect(e!.data.previousContactId).toBe(created.json.contactId);
  });

  test("a PATCH that changes nothing records no event", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Gus", tags: ["a", "b"] } });
    const before = events().length;
    const res = await server.api("PATCH", `/contacts/${created.json.contactId}`, {
      body: { firstName: "Gus", tags: ["B", "a"] },
    });
    expect(res.status).toBe(200);
    expect(res.json.updatedAt).toBe(created.json.updatedAt);
    expect(events().length).toBe(before);
  });

  test("POST interactions records interaction_log.created with the log and a contact summary; a replay records nothing", async () => {
    const created = await server.api("POST", "/contacts", { body: { firstName: "Hal", lastName: "Ito", email: "hal@example.com" } });
    const before = events().length;
    const body = { type: "note", note: "called", uniqueIdentifier: "once" };
    const first = await server.api("POST", `/contacts/${created.json.contactId}/interactions`, { body });
    expect(first.status).toBe(201);
    const again = await server.api("POST", `/contacts/${created.json.contactId}/interactions`, { body });
    expect(again.status).toBe(200);
    const added = events().slice(before);
    expect(added).toHaveLength(1);
    expect(added[0]!.event).toBe("interaction_log.created");
    expect(added[0]!.data).toEqual({
      interactionLog: first.json,
      contact: { contactId: created.json.contactId, firstName: "Hal", lastName: "Ito", email: "hal@example.com" },
    });
  });

  test("an Idempotency-Key replay records no second event", async () => {
    const before = events().length;
    const opts = { body: { firstName: "Ida" }, headers: { "Idempotency-Key": "evt-replay-1" } };
    const key = await server.newKey(["contacts:write"]);
    const a = await server.api("POST", "/contacts", { ...opts, key });
    const b = await server.api("POST", "/contacts", { ...opts, key });
    expect(a.status).toBe(201);
    expect(b.headers.get("Idempotent-Replayed")).toBe("true");
    expect(events().length).toBe(before + 1);
  });

  test("a failed request records nothing", async () => {
    const before = events().length;
    const res = await server.api("POST", "/contacts", { body: { firstName: "Jo", tags: ["fresh-tag"], contactTypeId: "ct_nope" } });
    expect(res.status).toBe(422);
    expect(events().length).toBe(before);
    const tags = await server.api("GET", "/tags");
    expect(tags.json.data.map((t: { name: string }) => t.name)).not.toContain("fresh-tag");
  });
});
