/**
 * The trash (docs/api.md §19.3–§19.4), black box: DELETE sends a contact to the trash for
 * 30 days, where it answers 404 everywhere and leaves lists, search, duplicateSignal,
 * upsert, forms and the quota, while its contactId stays reserved; restore brings it back
 * with its logs; the events told; and If-Match on DELETE.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readEvents } from "../helpers/events.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function contactIn(p: ProjectInfo, body: Record<string, unknown>): Promise<string> {
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json.contactId;
}

describe("DELETE /contacts/{contactId}", () => {
  test("answers 204; the contact is then 404 on GET, PATCH, DELETE, its interactions and history stays readable", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Gone" });
    const res = await p.api("DELETE", `/contacts/${id}`);
    expectStatus(res, 204);
    expect(res.text).toBe("");
    expectError(await p.api("GET", `/contacts/${id}`), "ERR_NOT_FOUND");
    expectError(await p.api("PATCH", `/contacts/${id}`, { body: { firstName: "X" } }), "ERR_NOT_FOUND");
    expectError(await p.api("DELETE", `/contacts/${id}`), "ERR_NOT_FOUND");
    expectError(await p.api("GET", `/contacts/${id}/interactions`), "ERR_NOT_FOUND");
    expectError(await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: "n" } }), "ERR_NOT_FOUND");
    expectError(await p.api("DELETE", "/contacts/CR-999"), "ERR_NOT_FOUND");
    expectError(await p.api("DELETE", "/contacts/nope"), "ERR_NOT_FOUND");
  });

  test("lists, filters, search and the other contacts' duplicateSignal leave it out", async () => {
    const p = await srv.newProject();
    const gone = await contactIn(p, { firstName: "Zelda", email: "same@example.com", phone: "+14155550100", tags: ["vip"] });
    const kept = await contactIn(p, { firstName: "Kept", email: "same@example.com", phone: "+14155550100", tags: ["vip"] });
    expect((await p.api("GET", `/contacts/${kept}`)).json.duplicateSignal).toEqual({ emailMatches: 1, phoneMatches: 1 });
    expectStatus(await p.api("DELETE", `/contacts/${gone}`), 204);
    const ids = async (query: Record<string, any>) => (await walk(p.api, "/contacts", query)).items.map((c: any) => c.contactId);
    expect(await ids({})).toEqual([kept]);
    expect(await ids({ email: "same@example.com" })).toEqual([kept]);
    expect(await ids({ phone: "+1 415 555 0100" })).toEqual([kept]);
    expect(await ids({ tag: "vip" })).toEqual([kept]);
    expect(await ids({ search: "zelda" })).toEqual([]);
    expect(await ids({ search: gone })).toEqual([]);
    expect(await ids({ updatedSince: "2000-01-01T00:00:00Z" })).toEqual([kept]);
    expect((await p.api("GET", `/contacts/${kept}`)).json.duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 0 });
  });

  test("crm export leaves it out", async () => {
    const p = await srv.newProject();
    const gone = await contactIn(p, { firstName: "Exported-not" });
    const kept = await contactIn(p, { firstName: "Exported" });
    expectStatus(await p.api("DELETE", `/contacts/${gone}`), 204);
    const out = await srv.cliRaw(["export", "--project", p.id, "--format", "jsonl"]);
    expect(out.exitCode).toBe(0);
    const lines = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((c) => c.contactId)).toEqual([kept]);
  });

  test("it stops counting toward the quota; restoring it counts again (402 when full)", async () => {
    const p = await srv.newProject({ contactQuota: 1 });
    const id = await contactIn(p, { firstName: "One" });
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Two" } }), "ERR_QUOTA_EXCEEDED");
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    await contactIn(p, { firstName: "Two" });
    expectError(await p.api("POST", `/contacts/${id}/restore`), "ERR_QUOTA_EXCEEDED");
    expectError(await p.api("GET", `/contacts/${id}`), "ERR_NOT_FOUND");
  });

  test("its contactId stays reserved: no relabel takes it and new contacts never get it", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Reserved" });
    const other = await contactIn(p, { firstName: "Other" });
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    expectError(await p.api("PATCH", `/contacts/${other}`, { body: { contactId: id } }), "ERR_CONFLICT", "contactId");
    const fresh = await contactIn(p, { firstName: "Fresh" });
    expect(fresh).not.toBe(id);
  });

  test("an upsert by email and a form submission do not match it: they create a new contact", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Old", email: "match@example.com" });
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    const upserted = await p.api("PUT", "/contacts", { query: { matchOn: "email" }, body: { email: "match@example.com", firstName: "New" } });
    expectStatus(upserted, 201);
    const form = await srv.cli(["form", "create", "--project", p.id, "--name", "F", "--fields", "email,firstName", "--json"]);
    expectStatus(await p.api("DELETE", `/contacts/${upserted.json.contactId}`), 204);
    const submitted = await fetch(`${srv.baseUrl}/forms/${form.id}/submissions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ email: "match@example.com", firstName: "Formed" }),
    });
    expect(submitted.status).toBe(201);
    const live = (await walk(p.api, "/contacts", {})).items;
    expect(live.map((c: any) => c.firstName)).toEqual(["Formed"]);
  });

  test("If-Match: a stale version is 412 and nothing moves; the current one deletes", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "V1" });
    expectStatus(await p.api("PATCH", `/contacts/${id}`, { body: { firstName: "V2" } }), 200);
    expectError(await p.api("DELETE", `/contacts/${id}`, { headers: { "If-Match": '"1"' } }), "ERR_PRECONDITION_FAILED");
    expectStatus(await p.api("GET", `/contacts/${id}`), 200);
    expectStatus(await p.api("DELETE", `/contacts/${id}`, { headers: { "If-Match": '"2"' } }), 204);
  });

  test("needs contacts:write", async () => {
    const key = await srv.newKey(["contacts:read"]);
    expectError(await srv.api("DELETE", "/contacts/CR-1", { key }), "ERR_FORBIDDEN");
    expectError(await srv.api("POST", "/contacts/CR-1/restore", { key }), "ERR_FORBIDDEN");
  });
});

describe("POST /contacts/{contactId}/restore", () => {
  test("brings it back with its fields, tags, custom values and interaction logs, as a new version, findable again", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Phoenix", email: "phoenix@example.com", tags: ["vip", "beta"] });
    expectStatus(await p.api("POST", `/contacts/${id}/interactions`, { body: { type: "note", note: "Spoke" } }), 201);
    const before = (await p.api("GET", `/contacts/${id}`)).json;
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    const restored = await p.api("POST", `/contacts/${id}/restore`);
    expectStatus(restored, 200);
    const { version, updatedAt, duplicateSignal, ...rest } = before;
    expect(restored.json).toMatchObject(rest);
    expect(restored.json.version).toBe(before.version + 1);
    const again = (await p.api("GET", `/contacts/${id}`)).json;
    expect(again.tags.map((t: any) => t.name)).toEqual(["beta", "vip"]);
    expect((await p.api("GET", `/contacts/${id}/interactions`)).json.data.map((l: any) => l.note)).toEqual(["Spoke"]);
    expect((await walk(p.api, "/contacts", { search: "phoenix" })).items.map((c: any) => c.contactId)).toEqual([id]);
    expect((await walk(p.api, "/contacts", { tag: "vip" })).items.map((c: any) => c.contactId)).toEqual([id]);
    expect((await walk(p.api, "/contacts", { email: "phoenix@example.com" })).items.map((c: any) => c.contactId)).toEqual([id]);
  });

  test("409 for a contact not in the trash; 404 for one that never existed or was erased", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Live" });
    expectError(await p.api("POST", `/contacts/${id}/restore`), "ERR_CONFLICT");
    expectError(await p.api("POST", "/contacts/CR-999/restore"), "ERR_NOT_FOUND");
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    await srv.cli(["contact", "erase", "--project", p.id, id, "--json"]);
    expectError(await p.api("POST", `/contacts/${id}/restore`), "ERR_NOT_FOUND");
  });

  test("a unique value another contact took meanwhile is 409 naming the field, and the contact stays in the trash", async () => {
    const p = await srv.newProject();
    const field = await srv.cli(["custom-field", "create", "--project", p.id, "--title", "Account", "--type", "text", "--unique", "--json"]);
    const id = await contactIn(p, { firstName: "A", customFields: { Account: "ACC-1" } });
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    await contactIn(p, { firstName: "B", customFields: { Account: "ACC-1" } });
    expectError(await p.api("POST", `/contacts/${id}/restore`), "ERR_CONFLICT", `customFields.${field.id}`);
    expectError(await p.api("GET", `/contacts/${id}`), "ERR_NOT_FOUND");
  });
});

describe("events", () => {
  test("contact.deleted carries the contactId and reason deleted; contact.restored the contact; erasing fires contact.erased with the contactId only", async () => {
    const p = await srv.newProject();
    const id = await contactIn(p, { firstName: "Evented", email: "ev@example.com" });
    expectStatus(await p.api("DELETE", `/contacts/${id}`), 204);
    const restored = (await p.api("POST", `/contacts/${id}/restore`)).json;
    await srv.cli(["contact", "erase", "--project", p.id, id, "--json"]);
    const events = await readEvents(p.api);
    expect(events.map((e) => e.event)).toEqual(["contact.created", "contact.deleted", "contact.restored", "contact.erased"]);
    expect(events[1]!.data).toEqual({ contactId: id, reason: "deleted" });
    expect(events[3]!.data).toEqual({ contactId: id });
    // The restored contact's event was scrubbed by the erase like every other about the person.
    expect(events[2]!.data.contact.contactId).toBe(id);
    expect(events[2]!.data.contact.firstName).toBeNull();
    expect(restored.firstName).toBe("Evented");
  });
});
