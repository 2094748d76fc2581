/**
 * Undoing a merge (docs/api.md §20.4), black box: POST /merges/{mergeId}/undo within 30 days
 * brings the merged contacts back with their ids, fields, tags and logs (logs added to the
 * survivor since stay with it); the survivor's fields the merge set and nobody changed since
 * go back, fields changed since keep their value. contact.restored for each,
 * contact.updated for the survivor. 409 once undone, or when a contact was since deleted,
 * erased or merged again; 410 ERR_UNDO_EXPIRED after 30 days (the real service in this
 * process with a ManualClock, as test/http/change-retention.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY, ManualClock } from "../helpers/clock.ts";
import { readEvents } from "../helpers/events.ts";
import { expectContactShape, expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "../helpers/in-process.ts";
import { sleep, startServer, walk, type Api, type ApiResponse, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function contactIn(p: { api: Api }, body: Record<string, unknown>): Promise<string> {
  await sleep(3);
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json.contactId;
}

async function get(p: ProjectInfo, id: string) {
  const res = await p.api("GET", `/contacts/${id}`);
  expectStatus(res, 200);
  const { duplicateSignal, ...contact } = res.json;
  return contact;
}

async function merge(p: { api: Api }, survivor: string, body: Record<string, unknown>) {
  await sleep(3);
  const res = await p.api("POST", `/contacts/${survivor}/merge`, { body });
  expectStatus(res, 200);
  return res.json;
}

const undo = (p: { api: Api }, mergeId: string, key?: string) => p.api("POST", `/merges/${mergeId}/undo`, { key });

async function logsOf(p: ProjectInfo, id: string) {
  return (await walk(p.api, `/contacts/${id}/interactions`)).items.sort((a: any, b: any) => (a.id < b.id ? -1 : 1));
}

async function log(p: ProjectInfo, id: string, body: Record<string, unknown>) {
  const res = await p.api("POST", `/contacts/${id}/interactions`, { body });
  expectStatus(res, 201);
  return res.json;
}

async function customField(p: ProjectInfo, title: string): Promise<string> {
  return (await srv.cli(["custom-field", "create", "--project", p.id, "--title", title, "--type", "text", "--json"])).id;
}

/** A contact as it stands, without what every write moves. */
const settled = ({ version, updatedAt, ...rest }: any) => rest;

async function changes(p: ProjectInfo): Promise<any[]> {
  const records: any[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await p.api("GET", "/changes", { query: after ? { after, limit: 1000 } : { limit: 1000 } });
    expectStatus(res, 200);
    records.push(...res.json.data);
    after = res.json.pagination.nextCursor;
    if (!res.json.pagination.hasMore) return records;
  }
}

describe("POST /merges/{mergeId}/undo", () => {
  test("the merged contacts come back with their ids, fields, tags, custom values and logs; the survivor as it was before", async () => {
    const p = await srv.newProject();
    const ref = await customField(p, "Ref");
    const s = await contactIn(p, { firstName: "Sam", tags: ["s-tag"], customFields: { Ref: "s-ref" } });
    const a = await contactIn(p, { firstName: "Ann", lastName: "Able", email: "ann@example.com", tags: ["a-tag", "shared"], address: { city: "Oslo" } });
    const b = await contactIn(p, { firstName: "Bob", phone: "+14155550100", website: "https://bob.example", tags: ["shared"], customFields: { Ref: "b-ref" } });
    const sLog = await log(p, s, { type: "note", note: "survivor's" });
    const aLog = await log(p, a, { type: "note", note: "ann's", uniqueIdentifier: "u-a" });
    const bLog = await log(p, b, { type: "note", note: "bob's" });
    const before = { s: await get(p, s), a: await get(p, a), b: await get(p, b) };
    const merged = await merge(p, s, { contactIds: [a, b] });
    expect(merged.contact.lastName).toBe("Able");
    expect((await logsOf(p, s)).map((l: any) => l.id).sort()).toEqual([sLog.id, aLog.id, bLog.id].sort());

    const res = await undo(p, merged.merge.id);
    expectStatus(res, 200);
    expect(Object.keys(res.json).sort()).toEqual(["contact", "merge", "restoredContacts"]);
    expect(res.json.merge).toEqual({ ...merged.merge, mergedContactIds: expect.any(Array), undoneAt: expect.stringMatching(ISO_RE) });
    expect([...res.json.merge.mergedContactIds].sort()).toEqual([a, b].sort());
    expectContactShape(res.json.contact);
    for (const c of res.json.restoredContacts) expectContactShape(c);
    expect(res.json.restoredContacts.map((c: any) => c.contactId).sort()).toEqual([a, b].sort());

    for (const id of [s, a, b] as const) {
      const now = await get(p, id);
      const was = before[id === s ? "s" : id === a ? "a" : "b"];
      expect(settled(now)).toEqual(settled(was));
      expect(now.version).toBeGreaterThan(was.version);
    }
    expect(settled(res.json.contact)).toEqual(settled(before.s));
    expect((await get(p, s)).customFields).toEqual({ [ref]: "s-ref" });
    expect(await logsOf(p, s)).toEqual([sLog]);
    expect(await logsOf(p, a)).toEqual([aLog]);
    expect(await logsOf(p, b)).toEqual([bLog]);
    // They are found again everywhere.
    const listed = (await walk(p.api, "/contacts")).items.map((c: any) => c.contactId).sort();
    expect(listed).toEqual([s, a, b].sort());
    expect((await walk(p.api, "/contacts", { search: "ann" })).items.map((c: any) => c.contactId)).toEqual([a]);
    expect((await walk(p.api, "/contacts", { tag: "a-tag" })).items.map((c: any) => c.contactId)).toEqual([a]);
    // And they take writes again.
    expectStatus(await p.api("PATCH", `/contacts/${a}`, { body: { notes: "back" } }), 200);
  });

  test("logs added to the survivor since the merge stay with it; the moved logs go back", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const moved = await log(p, o, { type: "note", note: "other's" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    const since = await log(p, s, { type: "note", note: "added since" });
    expectStatus(await undo(p, m.id), 200);
    expect(await logsOf(p, s)).toEqual([since]);
    expect(await logsOf(p, o)).toEqual([moved]);
  });

  test("a log that gave up its uniqueIdentifier in the merge gets it back", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const mine = await log(p, s, { type: "note", note: "survivor's", uniqueIdentifier: "order-1" });
    const theirs = await log(p, o, { type: "note", note: "other's", uniqueIdentifier: "order-1" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    expect((await logsOf(p, s)).find((l: any) => l.id === theirs.id).uniqueIdentifier).toBeNull();
    expectStatus(await undo(p, m.id), 200);
    expect(await logsOf(p, s)).toEqual([mine]);
    expect(await logsOf(p, o)).toEqual([theirs]);
    const replay = await p.api("POST", `/contacts/${o}/interactions`, { body: { type: "note", note: "again", uniqueIdentifier: "order-1" } });
    expectStatus(replay, 200);
    expect(replay.json.id).toBe(theirs.id);
  });

  test("the survivor's fields changed since the merge keep their new value; the ones the merge set and nobody changed go back", async () => {
    const p = await srv.newProject();
    const one = await customField(p, "One");
    const two = await customField(p, "Two");
    const s = await contactIn(p, { firstName: "Sam", tags: ["a"] });
    const o = await contactIn(p, {
      firstName: "Olly",
      lastName: "Other",
      email: "olly@example.com",
      website: "https://olly.example",
      tags: ["b"],
      customFields: { One: "o-one", Two: "o-two" },
    });
    const { merge: m, contact: after } = await merge(p, s, { contactIds: [o], fields: { firstName: o } });
    expect(after).toMatchObject({ firstName: "Olly", lastName: "Other", email: "olly@example.com", website: "https://olly.example" });
    await sleep(3);
    const patched = await p.api("PATCH", `/contacts/${s}`, {
      body: { firstName: "Samuel", website: "https://sam.example", tags: ["a", "b", "c"], customFields: { Two: "changed" } },
    });
    expectStatus(patched, 200);
    const res = await undo(p, m.id);
    expectStatus(res, 200);
    const back = await get(p, s);
    expect(back.firstName).toBe("Samuel");
    expect(back.website).toBe("https://sam.example");
    expect(back.lastName).toBeNull();
    expect(back.email).toBeNull();
    // b came with the merge and goes; c was added since and stays.
    expect(back.tags.map((t: any) => t.name).sort()).toEqual(["a", "c"]);
    expect(back.customFields).toEqual({ [two]: "changed" });
    expect(back.customFields[one]).toBeUndefined();
    expect(res.json.contact).toEqual(back);
    const other = await get(p, o);
    expect(other).toMatchObject({ firstName: "Olly", lastName: "Other", email: "olly@example.com", customFields: { [one]: "o-one", [two]: "o-two" } });
  });

  test("events: contact.restored with each contact back, contact.updated for the survivor", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const a = await contactIn(p, { firstName: "A", email: "a@example.com" });
    const b = await contactIn(p, { firstName: "B" });
    const { merge: m } = await merge(p, s, { contactIds: [a, b] });
    const seen = (await readEvents(p.api)).length;
    const res = await undo(p, m.id);
    expectStatus(res, 200);
    const events = (await readEvents(p.api)).slice(seen);
    expect(events.map((e) => e.event).sort()).toEqual(["contact.restored", "contact.restored", "contact.updated"]);
    const restored = events.filter((e) => e.event === "contact.restored").map((e) => e.data);
    for (const data of restored) expect(Object.keys(data)).toEqual(["contact"]);
    expect(restored.map((d) => d.contact).sort((x: any, y: any) => (x.contactId < y.contactId ? -1 : 1))).toEqual(
      [...res.json.restoredContacts].sort((x: any, y: any) => (x.contactId < y.contactId ? -1 : 1)),
    );
    const updated = events.find((e) => e.event === "contact.updated")!.data;
    expect(updated.contact).toEqual(res.json.contact);
    expect(updated.changedFields).toContain("email");
    expect(updated.previous.email).toBe("a@example.com");
  });

  test("change records: restored for each contact, the moved logs back to them, updated for the survivor", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O", email: "o@example.com" });
    const moved = await log(p, o, { type: "note", note: "n" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    const seen = (await changes(p)).length;
    expectStatus(await undo(p, m.id), 200);
    const records = (await changes(p)).slice(seen);
    expect(records.map((r) => `${r.object} ${r.id} ${r.action}`).sort()).toEqual(
      [`contact ${o} restored`, `contact ${s} updated`, `interaction_log ${moved.id} updated`].sort(),
    );
    expect(records.find((r) => r.object === "interaction_log").changes).toEqual([{ field: "contactId", from: s, to: o }]);
    expect(records.find((r) => r.id === s).changes).toContainEqual({ field: "email", from: "o@example.com", to: null });
    expect(records.map((r) => r.seq)).toEqual([seen + 1, seen + 2, seen + 3]);
    expect((await p.api("GET", `/contacts/${o}/history`)).json.data[0].action).toBe("restored");
  });

  test("the duplicate groups the merge ended are back", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S", email: "same@example.com" });
    const a = await contactIn(p, { firstName: "Cleo", lastName: "Park", businessName: "Acme", email: "same@example.com", phone: "+14155550100" });
    const b = await contactIn(p, { firstName: "Cleo", lastName: "Park", businessName: "acme", phone: "+1 415 555 0100" });
    const before = (await walk(p.api, "/duplicates")).items;
    expect(before).toHaveLength(2);
    const { merge: m } = await merge(p, s, { contactIds: [a, b] });
    expect((await walk(p.api, "/duplicates")).items).toEqual([]);
    expectStatus(await undo(p, m.id), 200);
    const after = (await walk(p.api, "/duplicates", { limit: 50 })).items;
    const norm = (gs: any[]) => gs.map((g) => ({ reasons: g.reasons, contactIds: [...g.contactIds].sort() })).sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
    expect(norm(after)).toEqual(norm(before));
    // One group a page finds the same groups, each once.
    expect((await walk(p.api, "/duplicates", { limit: 1 })).items).toEqual(after);
  });

  test("the undo counts the contacts back toward the quota: 402 when they would pass it, and nothing moves", async () => {
    const p = await srv.newProject({ contactQuota: 2 });
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    const third = await contactIn(p, { firstName: "Third" });
    expectError(await undo(p, m.id), "ERR_QUOTA_EXCEEDED");
    expectStatus(await p.api("GET", `/contacts/${o}`), 308);
    expectStatus(await p.api("DELETE", `/contacts/${third}`), 204);
    expectStatus(await undo(p, m.id), 200);
    expectStatus(await p.api("GET", `/contacts/${o}`), 200);
  });
});

describe("when an undo is refused", () => {
  test("a second undo is 409 ERR_CONFLICT", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    expectStatus(await undo(p, m.id), 200);
    expectError(await undo(p, m.id), "ERR_CONFLICT");
    expectStatus(await p.api("GET", `/contacts/${o}`), 200);
  });

  test("409 once the survivor was deleted (to the trash), and nothing moves", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    expectStatus(await p.api("DELETE", `/contacts/${s}`), 204);
    expectError(await undo(p, m.id), "ERR_CONFLICT");
    expect((await walk(p.api, "/contacts")).items).toEqual([]);
    expect((await p.api("GET", `/contacts/${o}`)).status).not.toBe(200);
  });

  test("409 once the survivor was merged into another contact", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const t = await contactIn(p, { firstName: "T" });
    const first = await merge(p, s, { contactIds: [o] });
    await merge(p, t, { contactIds: [s] });
    expectError(await undo(p, first.merge.id), "ERR_CONFLICT");
    expect((await p.api("GET", `/contacts/${o}`)).headers.get("location")).toBe(`/v1/contacts/${t}`);
  });

  test("409 once the survivor or a merged contact was erased", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const one = await merge(p, s, { contactIds: [o] });
    await srv.cli(["contact", "erase", "--project", p.id, s, "--json"]);
    expectError(await undo(p, one.merge.id), "ERR_CONFLICT");

    const s2 = await contactIn(p, { firstName: "S2" });
    const o2 = await contactIn(p, { firstName: "O2" });
    const two = await merge(p, s2, { contactIds: [o2] });
    await srv.cli(["contact", "erase", "--project", p.id, o2, "--json"]);
    expectError(await undo(p, two.merge.id), "ERR_CONFLICT");
    expectStatus(await p.api("GET", `/contacts/${s2}`), 200);
  });

  test("404 for an unknown mergeId or another project's", async () => {
    const p = await srv.newProject();
    const q = await srv.newProject();
    expectError(await undo(p, "mrg_unknown"), "ERR_NOT_FOUND");
    expectError(await undo(p, "nope"), "ERR_NOT_FOUND");
    const s = await contactIn(q, { firstName: "S" });
    const o = await contactIn(q, { firstName: "O" });
    const { merge: m } = await merge(q, s, { contactIds: [o] });
    expectError(await undo(p, m.id), "ERR_NOT_FOUND");
    expectStatus(await undo(q, m.id), 200);
  });

  test("needs contacts:write (403); a key without contacts:read gets receipts", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const { merge: m } = await merge(p, s, { contactIds: [o] });
    const reader = await srv.newKey(["contacts:read"], p.id);
    expectError(await undo(p, m.id, reader), "ERR_FORBIDDEN");
    const writer = await srv.newKey(["contacts:write"], p.id);
    const res = await undo(p, m.id, writer);
    expectStatus(res, 200);
    const receiptKeys = ["contactId", "createdAt", "updatedAt", "version"];
    expect(Object.keys(res.json.contact).sort()).toEqual(receiptKeys);
    expect(res.json.contact.contactId).toBe(s);
    expect(res.json.restoredContacts.map((c: any) => Object.keys(c).sort())).toEqual([receiptKeys]);
    expect(res.json.restoredContacts[0].contactId).toBe(o);
  });
});

describe("30 days to undo", () => {
  const clock = new ManualClock();
  let local: InProcessServer;

  beforeAll(async () => {
    local = await startInProcess({ env: { CRM_ENV: "sandbox" }, overrides: { clock } });
  }, 60_000);

  afterAll(async () => {
    await local?.stop();
  }, 60_000);

  /** 410 ERR_UNDO_EXPIRED in the envelope of docs/api.md §4. */
  function expectExpired(res: ApiResponse) {
    expect(res.status, res.text).toBe(410);
    const { message, ...rest } = res.json;
    expect(typeof message).toBe("string");
    expect(rest).toEqual({ success: false, statusCode: 410, error: "Gone", code: "ERR_UNDO_EXPIRED" });
  }

  test("undoUntil is 30 days after the merge: an undo on day 29 works, one after undoUntil is 410 ERR_UNDO_EXPIRED and nothing moves", async () => {
    const p: InProcessProject = await local.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const a = await contactIn(p, { firstName: "A" });
    const b = await contactIn(p, { firstName: "B" });
    clock.advance(1000);
    const early = await merge(p, s, { contactIds: [a] });
    expect(Date.parse(early.merge.undoUntil) - Date.parse(early.merge.at)).toBe(30 * DAY);
    clock.advance(1 * DAY);
    const late = await merge(p, s, { contactIds: [b] });
    clock.advance(29 * DAY + 60_000); // early: 30 days and a minute ago; late: 29 days and a minute
    expectExpired(await undo(p, early.merge.id));
    expect((await p.api("GET", `/contacts/${a}`)).status).toBe(308);
    const res = await undo(p, late.merge.id);
    expectStatus(res, 200);
    expect(res.json.restoredContacts.map((c: any) => c.contactId)).toEqual([b]);
    expectExpired(await undo(p, early.merge.id));
    // Once the retention job has dropped what the undo needed, the undo is still 410 and the id still leads to the survivor.
    await local.service.runJob("retention");
    expectExpired(await undo(p, early.merge.id));
    const moved = await p.api("GET", `/contacts/${a}`);
    expect(moved.status).toBe(308);
    expect(moved.headers.get("location")).toBe(`/v1/contacts/${s}`);
    const write = await p.api("PATCH", `/contacts/${a}`, { body: { firstName: "Z" } });
    expect(write.status).toBe(409);
    expect(write.json).toMatchObject({ code: "ERR_CONTACT_MERGED", mergedInto: s });
  });
});
