/**
 * The client's duplicates and merge helpers against the real server (docs/api.md §20, §16.3):
 * `duplicates()` walks every group across pages, `merge(survivorId, contactIds, { fields,
 * dryRun })` and `undoMerge(mergeId)` answer the bodies, and a failure throws `CrmApiError`,
 * whose `mergedInto` names the survivor on 409 ERR_CONTACT_MERGED. A GET of a merged-away
 * contactId answers 308; the client's fetch follows it to the survivor.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createClient, CrmApiError, unwrap, type CrmClient, type DuplicateGroup, type MergeOptions } from "@crm-service/client";
import { sleep, startServer, type ServerHandle } from "../helpers/server.ts";
import { recordingFetch } from "./recording-fetch.ts";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 30_000);
afterAll(async () => {
  await srv?.stop();
}, 30_000);

async function projectClient() {
  const project = await srv.newProject();
  const recorder = recordingFetch();
  const crm: CrmClient = createClient({ baseUrl: srv.origin, apiKey: project.key, fetch: recorder.fetch, retry: false });
  return { project, crm, sent: recorder.sent };
}

async function create(crm: CrmClient, body: { firstName?: string; lastName?: string; email?: string; phone?: string }): Promise<string> {
  await sleep(3); // each write its own millisecond: "most recent" is never a tie
  return unwrap(await crm.POST("/contacts", { body })).contactId;
}

/** What a call threw, as a CrmApiError (fails when it did not throw one). */
async function thrown(call: () => Promise<unknown>): Promise<CrmApiError> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(CrmApiError);
    return error as CrmApiError;
  }
  throw new Error("the call did not throw");
}

const read = async (crm: CrmClient, contactId: string) => crm.GET("/contacts/{contactId}", { params: { path: { contactId } } });

describe("crm.duplicates()", () => {
  test("yields every group, the most recently written first, following the cursors page after page", async () => {
    const { crm, sent } = await projectClient();
    const pairs: string[][] = [];
    for (const name of ["ann", "bea", "cy"]) {
      const first = await create(crm, { firstName: name, email: `${name}@example.com` });
      const second = await create(crm, { firstName: name.toUpperCase(), email: `${name.toUpperCase()}@example.com` });
      pairs.push([second, first]);
    }
    await create(crm, { firstName: "Alone", email: "alone@example.com" });

    const groups: DuplicateGroup[] = [];
    for await (const group of crm.duplicates({ limit: 2 })) groups.push(group);
    // Each pair shares its email, and its folded name with the email domain: one group, both reasons.
    expect(groups).toEqual(pairs.reverse().map((contactIds) => ({ reasons: ["email", "name"], contactIds })));
    const pages = sent.filter((s) => s.url.pathname === "/v1/duplicates");
    expect(pages.map((s) => s.url.searchParams.get("limit"))).toEqual(["2", "2"]);
    expect(pages[0]!.url.searchParams.has("cursor")).toBe(false);
    expect(pages[1]!.url.searchParams.get("cursor")).toBeTruthy();
  });

  test("without options: the service's page size; no groups, nothing yielded", async () => {
    const { crm, sent } = await projectClient();
    const groups: DuplicateGroup[] = [];
    for await (const group of crm.duplicates()) groups.push(group);
    expect(groups).toEqual([]);
    expect(sent.map((s) => s.url.search)).toEqual([""]);
  });
});

describe("crm.merge() and crm.undoMerge()", () => {
  test("dryRun answers the would-be contact with merge.id null and writes nothing", async () => {
    const { crm } = await projectClient();
    const keep = await create(crm, { firstName: "Rosa", email: "rosa@example.com" });
    const other = await create(crm, { firstName: "Rosa", lastName: "Díaz", phone: "+1 415 555 0100" });
    const dry = await crm.merge(keep, [other], { dryRun: true });
    expect(dry.merge).toMatchObject({ id: null, mergedContactIds: [other], undoUntil: null });
    expect(dry.contact).toMatchObject({ contactId: keep, lastName: "Díaz", phone: "+1 415 555 0100" });
    expect((await read(crm, keep)).data).toMatchObject({ lastName: null, version: 1 });
    expect((await read(crm, other)).response.status).toBe(200);
  });

  test("merges with a field chosen; the merged-away id then leads to the survivor: GET follows the 308, writes throw ERR_CONTACT_MERGED with mergedInto", async () => {
    const { crm, sent } = await projectClient();
    const keep = await create(crm, { firstName: "Rosa", email: "rosa@example.com" });
    const other = await create(crm, { firstName: "Rosa", lastName: "Díaz", email: "rosa.diaz@example.com" });
    const options: MergeOptions = { fields: { email: other } };
    const { contact, merge } = await crm.merge(keep, [other], options);
    expect(contact).toMatchObject({ contactId: keep, email: "rosa.diaz@example.com", lastName: "Díaz", version: 2 });
    expect(merge.id).toMatch(/^mrg_/);
    expect(merge.mergedContactIds).toEqual([other]);
    expect(Date.parse(merge.undoUntil!) - Date.parse(merge.at)).toBe(30 * 86_400_000);
    const call = sent.find((s) => s.url.pathname === `/v1/contacts/${keep}/merge`)!;
    expect(call.method).toBe("POST");
    expect(call.headers.get("idempotency-key")).toBeTruthy();

    // The fetch follows the 308 (same origin, the key kept): the answer is the survivor.
    const followed = await read(crm, other);
    expect(followed.response.redirected).toBe(true);
    expect(followed.data?.contactId).toBe(keep);

    const patch = await thrown(async () => unwrap(await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: other } }, body: { notes: "x" } })));
    expect(patch).toMatchObject({ status: 409, code: "ERR_CONTACT_MERGED", mergedInto: keep, fieldName: undefined });
    const again = await thrown(() => crm.merge(keep, [other]));
    expect(again).toMatchObject({ status: 409, code: "ERR_CONTACT_MERGED", mergedInto: keep, fieldName: "contactIds" });
    // Other errors carry no mergedInto.
    const unknown = await thrown(() => crm.merge(keep, ["CR-999"]));
    expect(unknown).toMatchObject({ status: 422, code: "ERR_FORM_VALIDATION", fieldName: "contactIds", mergedInto: undefined });
  });

  test("a field the merge does not choose is 422 fields.<name>; the types refuse it too", async () => {
    const { crm } = await projectClient();
    const keep = await create(crm, { firstName: "Ann" });
    const other = await create(crm, { firstName: "Ann" });
    // @ts-expect-error `colour` is not a MergeField
    const error = await thrown(() => crm.merge(keep, [other], { fields: { colour: other } }));
    expect(error).toMatchObject({ status: 422, fieldName: "fields.colour" });
    const custom: MergeOptions["fields"] = { "customFields.cf_any": keep, tags: other };
    expect(Object.keys(custom!)).toHaveLength(2);
  });

  test("undoMerge brings the merged contacts back and the survivor's merged values go; a second undo throws 409, an unknown merge 404", async () => {
    const { crm } = await projectClient();
    const keep = await create(crm, { firstName: "Rosa", email: "rosa@example.com" });
    const other = await create(crm, { firstName: "Rosa", lastName: "Díaz", phone: "+1 415 555 0100" });
    const { merge } = await crm.merge(keep, [other]);
    const undone = await crm.undoMerge(merge.id!);
    expect(undone.contact).toMatchObject({ contactId: keep, lastName: null, phone: null, version: 3 });
    expect(undone.restoredContacts).toEqual([expect.objectContaining({ contactId: other, lastName: "Díaz", version: 2 })]);
    expect(undone.merge).toMatchObject({ id: merge.id, mergedContactIds: [other], at: merge.at, undoUntil: merge.undoUntil });
    expect(undone.merge.undoneAt).toBeTruthy();
    expect((await read(crm, other)).data).toMatchObject({ contactId: other, phone: "+1 415 555 0100" });

    expect(await thrown(() => crm.undoMerge(merge.id!))).toMatchObject({ status: 409, code: "ERR_CONFLICT" });
    expect(await thrown(() => crm.undoMerge("mrg_unknown"))).toMatchObject({ status: 404, code: "ERR_NOT_FOUND" });
  });

  test("a key without contacts:read gets receipts, from merge and from its undo", async () => {
    const { project, crm: full } = await projectClient();
    const keep = await create(full, { firstName: "Lin" });
    const other = await create(full, { firstName: "Lin", lastName: "Wu" });
    const writer = createClient({ baseUrl: srv.origin, apiKey: await srv.newKey(["contacts:write"], project.id), retry: false });
    const { contact, merge } = await writer.merge(keep, [other]);
    expect(Object.keys(contact).sort()).toEqual(["contactId", "createdAt", "updatedAt", "version"]);
    const undone = await writer.undoMerge(merge.id!);
    expect(Object.keys(undone.restoredContacts[0]!).sort()).toEqual(["contactId", "createdAt", "updatedAt", "version"]);
  });
});
