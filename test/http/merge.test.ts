/**
 * Merge (docs/api.md §20.2–§20.3), black box: POST /contacts/{contactId}/merge keeps the
 * path's contact with its contactId; per field the survivor's non-empty value, else the most
 * recently updated other's, unless `fields` chooses; tags the union, customFields key by
 * key, subscribed and smsSubscribed the survivor's; interaction logs move. `dryRun` writes
 * nothing. A merged-away contactId answers 308 to its survivor on GET and 409
 * ERR_CONTACT_MERGED on writes, and leaves lists, search, duplicateSignal and the quota.
 * Events (§19.4), change records (§19.1) and receipts for keys without contacts:read
 * (docs/security.md §3). Every answer is held to the OpenAPI document by the test helper.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readEvents } from "../helpers/events.ts";
import { expectContactShape, expectError, expectStatus, ISO_RE } from "../helpers/expect.ts";
import { sleep, startServer, walk, type ApiResponse, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function contactIn(p: ProjectInfo, body: Record<string, unknown>): Promise<string> {
  // Each write its own millisecond: "the most recently updated" is never a tie.
  await sleep(3);
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json.contactId;
}

async function get(p: ProjectInfo, id: string) {
  const res = await p.api("GET", `/contacts/${id}`);
  expectStatus(res, 200);
  return res.json;
}

async function patch(p: ProjectInfo, id: string, body: Record<string, unknown>) {
  await sleep(3);
  const res = await p.api("PATCH", `/contacts/${id}`, { body });
  expectStatus(res, 200);
  return res.json;
}

async function merge(p: ProjectInfo, survivor: string, body: Record<string, unknown>) {
  await sleep(3);
  const res = await p.api("POST", `/contacts/${survivor}/merge`, { body });
  expectStatus(res, 200);
  return res.json;
}

async function customField(p: ProjectInfo, title: string, extra: string[] = []): Promise<string> {
  const field = await srv.cli(["custom-field", "create", "--project", p.id, "--title", title, "--type", "text", ...extra, "--json"]);
  return field.id;
}

/** Every change record of the project. */
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

/** 409 ERR_CONTACT_MERGED naming the survivor in `mergedInto` (docs/api.md §20.3). */
function expectMerged(res: ApiResponse, mergedInto: string, fieldName?: string) {
  const summary = `${res.status} ${res.text.slice(0, 400)}`;
  expect({ status: res.status, code: res.json?.code }, summary).toEqual({ status: 409, code: "ERR_CONTACT_MERGED" });
  const { message, ...rest } = res.json;
  expect(typeof message).toBe("string");
  expect(rest).toEqual({ success: false, statusCode: 409, error: "Conflict", code: "ERR_CONTACT_MERGED", mergedInto, ...(fieldName ? { fieldName } : {}) });
}

const tagNames = (c: any) => c.tags.map((t: any) => t.name).sort();
const ids = async (p: ProjectInfo, query: Record<string, any> = {}) => (await walk(p.api, "/contacts", query)).items.map((c: any) => c.contactId);

describe("POST /contacts/{contactId}/merge: the survivor", () => {
  test("keeps its contactId and createdAt; its version goes up by one; the answer is the contact and the merge", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam" });
    const o = await contactIn(p, { firstName: "Other" });
    const before = await get(p, s);
    const res = await merge(p, s, { contactIds: [o] });
    expect(Object.keys(res).sort()).toEqual(["contact", "merge"]);
    expectContactShape(res.contact);
    expect(res.contact.contactId).toBe(s);
    expect(res.contact.version).toBe(before.version + 1);
    expect(res.contact.createdAt).toBe(before.createdAt);
    expect(Date.parse(res.contact.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(Object.keys(res.merge).sort()).toEqual(["at", "id", "mergedContactIds", "undoUntil"]);
    expect(res.merge.id).toMatch(/^mrg_/);
    expect(res.merge.mergedContactIds).toEqual([o]);
    expect(res.merge.at).toMatch(ISO_RE);
    expect(Date.parse(res.merge.undoUntil) - Date.parse(res.merge.at)).toBe(30 * 86_400_000);
    const { duplicateSignal, ...after } = await get(p, s);
    expect(after).toEqual(res.contact);
  });

  test("per field: the survivor's non-empty value, else the most recently updated other's non-empty value", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam", phone: "+14155550100", businessName: "", identityType: "business" });
    const older = await contactIn(p, {
      firstName: "Olga",
      lastName: "Older",
      email: "older@example.com",
      website: "https://older.example",
      notes: "older notes",
      businessName: "Older Inc",
      address: { city: "Paris", country: "FR" },
    });
    const newer = await contactIn(p, { firstName: "Nora", lastName: "Newer", website: "https://newer.example", phone: "+14155550199" });
    // `older` was created last but is written to last: it is the most recently updated.
    await sleep(3);
    const touched = await patch(p, older, { notes: "older notes, updated" });
    expect(Date.parse(touched.updatedAt)).toBeGreaterThan(Date.parse((await get(p, newer)).updatedAt));
    const { contact } = await merge(p, s, { contactIds: [newer, older] });
    expect(contact.firstName).toBe("Sam");
    expect(contact.phone).toBe("+14155550100");
    expect(contact.lastName).toBe("Older");
    expect(contact.website).toBe("https://older.example");
    expect(contact.email).toBe("older@example.com");
    expect(contact.notes).toBe("older notes, updated");
    expect(contact.businessName).toBe("Older Inc");
    expect(contact.address).toEqual({ line1: null, line2: null, city: "Paris", state: null, zip: null, country: "FR" });
  });

  test("a field only a less recently updated other has is taken from it", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam" });
    const older = await contactIn(p, { firstName: "Olga", website: "https://only-older.example" });
    const newer = await contactIn(p, { firstName: "Nora", lastName: "Newer" });
    const { contact } = await merge(p, s, { contactIds: [older, newer] });
    expect(contact.website).toBe("https://only-older.example");
    expect(contact.lastName).toBe("Newer");
  });

  test("the merged contact obeys the contact rules: a personal survivor that takes a businessName is not left personal with it", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam" });
    const o = await contactIn(p, { firstName: "Olga", businessName: "Older Inc" });
    expect((await get(p, s)).identityType).toBe("personal");
    // PATCH refuses that state (docs/api.md §11.2: personal together with a businessName is 422).
    expectError(await p.api("PATCH", `/contacts/${s}`, { body: { businessName: "Older Inc", identityType: "personal" } }), "ERR_FORM_VALIDATION", "identityType");
    const res = await p.api("POST", `/contacts/${s}/merge`, { body: { contactIds: [o] } });
    if (res.status === 200) {
      expect(res.json.contact.businessName).toBe("Older Inc");
      expect(res.json.contact.identityType).toBe("business");
    } else {
      expectError(res, "ERR_FORM_VALIDATION", /^(identityType|businessName|fields\.identityType)$/);
      expectStatus(await p.api("GET", `/contacts/${o}`), 200);
    }
  });

  test("tags: the union of every contact's tags", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S", tags: ["vip", "alpha"] });
    const a = await contactIn(p, { firstName: "A", tags: ["beta", "vip"] });
    const b = await contactIn(p, { firstName: "B", tags: ["gamma"] });
    const c = await contactIn(p, { firstName: "C" });
    const { contact } = await merge(p, s, { contactIds: [a, b, c] });
    expect(tagNames(contact)).toEqual(["alpha", "beta", "gamma", "vip"]);
    expect((await walk(p.api, "/contacts", { tag: "gamma" })).items.map((x: any) => x.contactId)).toEqual([s]);
  });

  test("customFields key by key: the survivor's non-empty value, else the most recently updated other's", async () => {
    const p = await srv.newProject();
    const one = await customField(p, "One");
    const two = await customField(p, "Two");
    const three = await customField(p, "Three");
    const s = await contactIn(p, { firstName: "S", customFields: { One: "s-one" } });
    const older = await contactIn(p, { firstName: "O", customFields: { One: "o-one", Two: "o-two", Three: "o-three" } });
    const newer = await contactIn(p, { firstName: "N", customFields: { Two: "n-two" } });
    const { contact } = await merge(p, s, { contactIds: [older, newer] });
    expect(contact.customFields).toEqual({ [one]: "s-one", [two]: "n-two", [three]: "o-three" });
  });

  test("subscribed and smsSubscribed stay the survivor's, whatever the others say", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S", subscribed: false, smsSubscribed: true });
    const o = await contactIn(p, { firstName: "O", subscribed: true, smsSubscribed: false });
    const { contact } = await merge(p, s, { contactIds: [o] });
    expect(contact.subscribed).toBe(false);
    expect(contact.smsSubscribed).toBe(true);
  });

  test("merges up to 10 others in one call", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const others: string[] = [];
    for (let i = 0; i < 10; i++) others.push(await contactIn(p, { firstName: `O${i}`, tags: [`t${i}`] }));
    const res = await merge(p, s, { contactIds: others });
    expect([...res.merge.mergedContactIds].sort()).toEqual([...others].sort());
    expect(res.contact.tags).toHaveLength(10);
    expect(await ids(p)).toEqual([s]);
  });
});

describe("fields chooses, per field, the contact a value comes from", () => {
  test("scalar fields, contactType, subscribed: the chosen contact's value, even over the survivor's non-empty one", async () => {
    const p = await srv.newProject();
    const types = (await p.api("GET", "/contact-types")).json.data;
    const other = types.find((t: any) => !t.isDefault);
    const s = await contactIn(p, { firstName: "Sam", lastName: "Survivor", email: "sam@example.com", subscribed: false });
    const o = await contactIn(p, { firstName: "Olly", lastName: "Other", email: "olly@example.com", subscribed: true, contactTypeId: other.id });
    const { contact } = await merge(p, s, { contactIds: [o], fields: { firstName: o, email: o, subscribed: o, contactType: o } });
    expect(contact.firstName).toBe("Olly");
    expect(contact.email).toBe("olly@example.com");
    expect(contact.subscribed).toBe(true);
    expect(contact.contactType.id).toBe(other.id);
    expect(contact.lastName).toBe("Survivor");
  });

  test("choosing a contact whose value is empty empties the field (the choice is taken as it is)", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam" });
    const o = await contactIn(p, { firstName: "Olly", email: "olly@example.com" });
    const { contact } = await merge(p, s, { contactIds: [o], fields: { email: s, firstName: o } });
    expect(contact.email).toBeNull();
    expect(contact.firstName).toBe("Olly");
  });

  test("tags: the chosen contact's tags instead of the union", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S", tags: ["s-tag"] });
    const a = await contactIn(p, { firstName: "A", tags: ["a-tag", "shared"] });
    const b = await contactIn(p, { firstName: "B", tags: ["b-tag"] });
    const { contact } = await merge(p, s, { contactIds: [a, b], fields: { tags: a } });
    expect(tagNames(contact)).toEqual(["a-tag", "shared"]);
  });

  test("customFields.<id>: that key from the chosen contact; customFields: every key from it", async () => {
    const p = await srv.newProject();
    const one = await customField(p, "One");
    const two = await customField(p, "Two");
    const s = await contactIn(p, { firstName: "S", customFields: { One: "s-one", Two: "s-two" } });
    const o = await contactIn(p, { firstName: "O", customFields: { One: "o-one" } });
    const keyed = await merge(p, s, { contactIds: [o], fields: { [`customFields.${one}`]: o }, dryRun: true });
    expect(keyed.contact.customFields).toEqual({ [one]: "o-one", [two]: "s-two" });
    const whole = await merge(p, s, { contactIds: [o], fields: { customFields: o } });
    expect(whole.contact.customFields).toEqual({ [one]: "o-one" });
  });
});

describe("dryRun", () => {
  test("answers the contact the merge would make, the same as the merge then makes", async () => {
    const p = await srv.newProject();
    await customField(p, "Ref");
    const s = await contactIn(p, { firstName: "Sam", tags: ["a"] });
    const o = await contactIn(p, { lastName: "Other", email: "o@example.com", tags: ["b"], customFields: { Ref: "r-1" } });
    const dry = await merge(p, s, { contactIds: [o], dryRun: true });
    expect(dry.merge.id).toBeNull();
    expect(dry.merge.undoUntil).toBeNull();
    expect(dry.merge.mergedContactIds).toEqual([o]);
    expect(dry.merge.at).toMatch(ISO_RE);
    const real = await merge(p, s, { contactIds: [o] });
    const { updatedAt: _a, ...wouldBe } = dry.contact;
    const { updatedAt: _b, ...made } = real.contact;
    expect(wouldBe).toEqual(made);
  });

  test("writes nothing: contacts, logs, duplicates, change records and events stay as they were, and no merge exists", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam", email: "same@example.com" });
    const o = await contactIn(p, { firstName: "Olly", email: "same@example.com", website: "https://o.example" });
    expectStatus(await p.api("POST", `/contacts/${o}/interactions`, { body: { type: "note", note: "stays" } }), 201);
    const before = { s: await get(p, s), o: await get(p, o), changes: await changes(p), events: await readEvents(p.api), dups: (await p.api("GET", "/duplicates")).json };
    const dry = await merge(p, s, { contactIds: [o], dryRun: true });
    expect(dry.contact.website).toBe("https://o.example");
    expect(await get(p, s)).toEqual(before.s);
    expect(await get(p, o)).toEqual(before.o);
    expect((await p.api("GET", `/contacts/${o}/interactions`)).json.data.map((l: any) => l.note)).toEqual(["stays"]);
    expect((await p.api("GET", `/contacts/${s}/interactions`)).json.data).toEqual([]);
    expect(await changes(p)).toEqual(before.changes);
    expect(await readEvents(p.api)).toEqual(before.events);
    expect((await p.api("GET", "/duplicates")).json).toEqual(before.dups);
    expect((await p.api("GET", `/contacts/${s}/history`)).json.data.map((r: any) => r.action)).toEqual(["created"]);
    // The next change takes the next seq: the dry run left no hole.
    await patch(p, s, { notes: "after" });
    expect((await changes(p)).map((r) => r.seq)).toEqual([...before.changes.map((r) => r.seq), before.changes.length + 1]);
  });

  test("a dry run that fails validation answers the same error as the merge would", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    expectError(await p.api("POST", `/contacts/${s}/merge`, { body: { contactIds: ["CR-999"], dryRun: true } }), "ERR_FORM_VALIDATION", "contactIds");
  });
});

describe("a merged-away contactId", () => {
  test("GET answers 308 with Location of the survivor, sub-paths and query kept", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    await merge(p, s, { contactIds: [o] });
    for (const [path, location] of [
      [`/contacts/${o}`, `/v1/contacts/${s}`],
      [`/contacts/${o}/interactions`, `/v1/contacts/${s}/interactions`],
      [`/contacts/${o}/interactions?limit=5`, `/v1/contacts/${s}/interactions?limit=5`],
      [`/contacts/${o}/history`, `/v1/contacts/${s}/history`],
      [`/contacts/${o}/history?field=email&limit=2`, `/v1/contacts/${s}/history?field=email&limit=2`],
    ]) {
      const res = await p.api("GET", path!);
      expect(res.status, `${path}: ${res.status} ${res.text}`).toBe(308);
      expect(res.headers.get("location")).toBe(location!);
    }
    // Following the Location answers the survivor.
    const followed = await p.api("GET", srv.origin + (await p.api("GET", `/contacts/${o}`)).headers.get("location"));
    expectStatus(followed, 200);
    expect(followed.json.contactId).toBe(s);
  });

  test("writes answer 409 ERR_CONTACT_MERGED with mergedInto: PATCH, DELETE, POST interactions, restore, merge into it, merge it again", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const x = await contactIn(p, { firstName: "X" });
    await merge(p, s, { contactIds: [o] });
    expectMerged(await p.api("PATCH", `/contacts/${o}`, { body: { firstName: "Z" } }), s);
    expectMerged(await p.api("DELETE", `/contacts/${o}`), s);
    expectMerged(await p.api("POST", `/contacts/${o}/interactions`, { body: { type: "note", note: "n" } }), s);
    expectMerged(await p.api("POST", `/contacts/${o}/restore`), s);
    expectMerged(await p.api("POST", `/contacts/${o}/merge`, { body: { contactIds: [x] } }), s);
    expectMerged(await p.api("POST", `/contacts/${x}/merge`, { body: { contactIds: [o] } }), s, "contactIds");
    // Nothing moved.
    expect((await get(p, x)).version).toBe(1);
  });

  test("its contactId stays reserved: a relabel to it is 409 and new contacts never get it", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    await merge(p, s, { contactIds: [o] });
    const relabel = await p.api("PATCH", `/contacts/${s}`, { body: { contactId: o } });
    expectStatus(relabel, 409);
    expect(relabel.json.fieldName).toBe("contactId");
    const fresh = await contactIn(p, { firstName: "Fresh" });
    expect(fresh).not.toBe(o);
  });

  test("chains: A merged into B, then B into C: GET A answers 308 to C, a write to A names C", async () => {
    const p = await srv.newProject();
    const a = await contactIn(p, { firstName: "A" });
    const b = await contactIn(p, { firstName: "B" });
    const c = await contactIn(p, { firstName: "C" });
    await merge(p, b, { contactIds: [a] });
    await merge(p, c, { contactIds: [b] });
    const res = await p.api("GET", `/contacts/${a}/interactions`);
    expectStatus(res, 308);
    expect(res.headers.get("location")).toBe(`/v1/contacts/${c}/interactions`);
    expect((await p.api("GET", `/contacts/${b}`)).headers.get("location")).toBe(`/v1/contacts/${c}`);
    expectMerged(await p.api("PATCH", `/contacts/${a}`, { body: { firstName: "Z" } }), c);
    expectMerged(await p.api("POST", `/contacts/${c}/merge`, { body: { contactIds: [a] } }), c, "contactIds");
  });

  test("lists, filters, search and the survivor's duplicateSignal leave it out", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam", email: "same@example.com", phone: "+14155550100", tags: ["vip"] });
    const o = await contactIn(p, { firstName: "Zebulon", email: "same@example.com", phone: "+14155550100", tags: ["vip"] });
    expect((await get(p, s)).duplicateSignal).toEqual({ emailMatches: 1, phoneMatches: 1 });
    await merge(p, s, { contactIds: [o] });
    expect(await ids(p)).toEqual([s]);
    expect(await ids(p, { email: "same@example.com" })).toEqual([s]);
    expect(await ids(p, { phone: "+1 415 555 0100" })).toEqual([s]);
    expect(await ids(p, { tag: "vip" })).toEqual([s]);
    expect(await ids(p, { search: "zebulon" })).toEqual([]);
    expect(await ids(p, { search: o })).toEqual([]);
    expect((await get(p, s)).duplicateSignal).toEqual({ emailMatches: 0, phoneMatches: 0 });
  });

  test("it stops counting toward the contact quota", async () => {
    const p = await srv.newProject({ contactQuota: 2 });
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Third" } }), "ERR_QUOTA_EXCEEDED");
    await merge(p, s, { contactIds: [o] });
    await contactIn(p, { firstName: "Third" });
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Fourth" } }), "ERR_QUOTA_EXCEEDED");
  });
});

describe("interaction logs", () => {
  test("the others' logs move to the survivor with their content", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const mine = (await p.api("POST", `/contacts/${s}/interactions`, { body: { type: "note", note: "mine" } })).json;
    const theirs = (await p.api("POST", `/contacts/${o}/interactions`, { body: { type: "note", note: "theirs", date: "2024-01-02T03:04:05.000Z" } })).json;
    await merge(p, s, { contactIds: [o] });
    const logs = (await walk(p.api, `/contacts/${s}/interactions`)).items;
    expect(logs.map((l: any) => l.id).sort()).toEqual([mine.id, theirs.id].sort());
    const moved = logs.find((l: any) => l.id === theirs.id);
    expect(moved).toEqual({ ...theirs, contactId: s });
  });

  test("a uniqueIdentifier the survivor already uses stays with the survivor's log; the moved log keeps its content without it", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const log = async (id: string, body: Record<string, unknown>) => (await p.api("POST", `/contacts/${id}/interactions`, { body })).json;
    const mine = await log(s, { type: "note", note: "survivor's", uniqueIdentifier: "order-1" });
    const clash = await log(o, { type: "note", note: "other's", uniqueIdentifier: "order-1" });
    const free = await log(o, { type: "note", note: "other's own", uniqueIdentifier: "order-2" });
    await merge(p, s, { contactIds: [o] });
    const logs = (await walk(p.api, `/contacts/${s}/interactions`)).items;
    const byId = new Map(logs.map((l: any) => [l.id, l]));
    expect(byId.get(mine.id)).toEqual(mine);
    expect(byId.get(clash.id)).toEqual({ ...clash, contactId: s, uniqueIdentifier: null });
    expect(byId.get(free.id)).toEqual({ ...free, contactId: s });
    // The identifiers now replay the logs that hold them.
    const again = await p.api("POST", `/contacts/${s}/interactions`, { body: { type: "note", note: "replay", uniqueIdentifier: "order-1" } });
    expectStatus(again, 200);
    expect(again.json.id).toBe(mine.id);
    const replay2 = await p.api("POST", `/contacts/${s}/interactions`, { body: { type: "note", note: "replay", uniqueIdentifier: "order-2" } });
    expectStatus(replay2, 200);
    expect(replay2.json.id).toBe(free.id);
  });
});

describe("events and change records", () => {
  test("contact.merged { contact, mergedContactIds, mergeId } and contact.deleted { contactId, reason: merged, mergedInto } for each other", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const a = await contactIn(p, { firstName: "A" });
    const b = await contactIn(p, { firstName: "B" });
    const res = await merge(p, s, { contactIds: [a, b] });
    const events = (await readEvents(p.api)).filter((e) => e.event !== "contact.created");
    expect(events.map((e) => e.event).sort()).toEqual(["contact.deleted", "contact.deleted", "contact.merged"]);
    const merged = events.find((e) => e.event === "contact.merged")!;
    expect(Object.keys(merged.data).sort()).toEqual(["contact", "mergeId", "mergedContactIds"]);
    expect(merged.data.contact).toEqual(res.contact);
    expect([...merged.data.mergedContactIds].sort()).toEqual([a, b].sort());
    expect(merged.data.mergeId).toBe(res.merge.id);
    const deleted = events.filter((e) => e.event === "contact.deleted").map((e) => e.data);
    expect(deleted).toContainEqual({ contactId: a, reason: "merged", mergedInto: s });
    expect(deleted).toContainEqual({ contactId: b, reason: "merged", mergedInto: s });
  });

  test("change records: deleted with mergedInto for each other, updated for each moved log, merged with the survivor's field changes", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "Sam", tags: ["a"] });
    const o = await contactIn(p, { lastName: "Other", email: "o@example.com", tags: ["b"] });
    const log = (await p.api("POST", `/contacts/${o}/interactions`, { body: { type: "note", note: "n" } })).json;
    const before = (await changes(p)).length;
    await merge(p, s, { contactIds: [o] });
    const records = (await changes(p)).slice(before);
    expect(records.map((r) => `${r.object} ${r.id} ${r.action}`).sort()).toEqual(
      [`contact ${o} deleted`, `contact ${s} merged`, `interaction_log ${log.id} updated`].sort(),
    );
    const byAction = (object: string, action: string) => records.find((r) => r.object === object && r.action === action);
    expect(byAction("contact", "deleted").changes).toEqual([{ field: "mergedInto", from: null, to: s }]);
    expect(byAction("interaction_log", "updated").changes).toEqual([{ field: "contactId", from: o, to: s }]);
    const survivor = byAction("contact", "merged");
    expect(survivor.changes).toContainEqual({ field: "lastName", from: null, to: "Other" });
    expect(survivor.changes).toContainEqual({ field: "email", from: null, to: "o@example.com" });
    expect(survivor.changes).toContainEqual({ field: "tags", from: ["a"], to: ["a", "b"] });
    expect(survivor.changes.map((c: any) => c.field)).not.toContain("firstName");
    for (const r of records) expect(r.actor.type).toBe("api_key");
    // The seqs follow on without a gap.
    expect(records.map((r) => r.seq).sort((x, y) => x - y)).toEqual([before + 1, before + 2, before + 3]);
    // The survivor's history shows the merge.
    const history = (await p.api("GET", `/contacts/${s}/history`)).json.data;
    expect(history[0].action).toBe("merged");
  });
});

describe("validation and access", () => {
  test("contactIds must name 1 to 10 other contacts of the project: 422 contactIds, and nothing moves", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const trashed = await contactIn(p, { firstName: "T" });
    expectStatus(await p.api("DELETE", `/contacts/${trashed}`), 204);
    const eleven = Array.from({ length: 11 }, (_, i) => `CR-${100 + i}`);
    for (const body of [
      {},
      { contactIds: [] },
      { contactIds: eleven },
      { contactIds: [s] },
      { contactIds: [o, s] },
      { contactIds: [o, o] },
      { contactIds: ["CR-999"] },
      { contactIds: [o, "nope"] },
      { contactIds: [trashed] },
      { contactIds: [o, "CR-999"] },
    ]) {
      expectError(await p.api("POST", `/contacts/${s}/merge`, { body }), "ERR_FORM_VALIDATION", "contactIds");
    }
    expect((await get(p, s)).version).toBe(1);
    expect((await get(p, o)).version).toBe(1);
  });

  test("fields: an unknown field or a contact not in the merge is 422 fields.<key>", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const x = await contactIn(p, { firstName: "X" });
    const cases: Array<[Record<string, string>, string]> = [
      [{ favouriteColour: o }, "fields.favouriteColour"],
      [{ contactId: o }, "fields.contactId"],
      [{ email: x }, "fields.email"],
      [{ email: "CR-999" }, "fields.email"],
      [{ tags: x }, "fields.tags"],
      [{ "customFields.cf_any": x }, "fields.customFields.cf_any"],
    ];
    for (const [fields, fieldName] of cases) {
      expectError(await p.api("POST", `/contacts/${s}/merge`, { body: { contactIds: [o], fields } }), "ERR_FORM_VALIDATION", fieldName);
    }
    expectStatus(await p.api("GET", `/contacts/${o}`), 200);
  });

  test("404 for a survivor that does not exist or is in the trash", async () => {
    const p = await srv.newProject();
    const o = await contactIn(p, { firstName: "O" });
    const trashed = await contactIn(p, { firstName: "T" });
    expectStatus(await p.api("DELETE", `/contacts/${trashed}`), 204);
    expectError(await p.api("POST", "/contacts/CR-999/merge", { body: { contactIds: [o] } }), "ERR_NOT_FOUND");
    expectError(await p.api("POST", `/contacts/${trashed}/merge`, { body: { contactIds: [o] } }), "ERR_NOT_FOUND");
    expectStatus(await p.api("GET", `/contacts/${o}`), 200);
  });

  test("needs contacts:write (403); projects are isolated: another project's contacts are unknown", async () => {
    const p = await srv.newProject();
    const q = await srv.newProject();
    const s = await contactIn(p, { firstName: "S" });
    const o = await contactIn(p, { firstName: "O" });
    const reader = await srv.newKey(["contacts:read"], p.id);
    expectError(await p.api("POST", `/contacts/${s}/merge`, { key: reader, body: { contactIds: [o] } }), "ERR_FORBIDDEN");
    // q's third contact has a number p never gave.
    await contactIn(q, { firstName: "Q1" });
    await contactIn(q, { firstName: "Q2" });
    const theirs = await contactIn(q, { firstName: "Q3" });
    expectError(await p.api("POST", `/contacts/${s}/merge`, { body: { contactIds: [theirs] } }), "ERR_FORM_VALIDATION", "contactIds");
    expectError(await p.api("POST", `/contacts/${theirs}/merge`, { body: { contactIds: [o] } }), "ERR_NOT_FOUND");
    expectStatus(await q.api("GET", `/contacts/${theirs}`), 200);
    expectStatus(await p.api("GET", `/contacts/${o}`), 200);
  });

  test("a key without contacts:read gets the survivor's receipt { contactId, version, createdAt, updatedAt } and the merge", async () => {
    const p = await srv.newProject();
    const s = await contactIn(p, { firstName: "S", email: "s@example.com" });
    const o = await contactIn(p, { firstName: "O" });
    const writer = await srv.newKey(["contacts:write"], p.id);
    const res = await p.api("POST", `/contacts/${s}/merge`, { key: writer, body: { contactIds: [o] } });
    expectStatus(res, 200);
    expect(Object.keys(res.json.contact).sort()).toEqual(["contactId", "createdAt", "updatedAt", "version"]);
    expect(res.json.contact.contactId).toBe(s);
    expect(res.json.contact.version).toBe(2);
    expect(res.json.merge.id).toMatch(/^mrg_/);
    expect(res.json.merge.mergedContactIds).toEqual([o]);
    const dry = await p.api("POST", `/contacts/${s}/merge`, { key: writer, body: { contactIds: [await contactIn(p, { firstName: "P" })], dryRun: true } });
    expectStatus(dry, 200);
    expect(Object.keys(dry.json.contact).sort()).toEqual(["contactId", "createdAt", "updatedAt", "version"]);
  });
});
