/**
 * Batch items that name a merged-away contact (docs/api.md §20.3): each is answered as its
 * single call would be, 409 ERR_CONTACT_MERGED with mergedInto, and the others go through.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
}, 60_000);
afterAll(async () => {
  await srv?.stop();
}, 60_000);

test("update and log items naming a merged-away contact answer 409 ERR_CONTACT_MERGED with mergedInto; the others are applied", async () => {
  const p = await srv.newProject();
  const survivor = (await p.api("POST", "/contacts", { body: { firstName: "Ada", email: "ada@example.com" } })).json.contactId;
  const merged = (await p.api("POST", "/contacts", { body: { firstName: "Ada", email: "ADA@example.com" } })).json.contactId;
  expectStatus(await p.api("POST", `/contacts/${survivor}/merge`, { body: { contactIds: [merged] } }), 200);

  const updates = await p.api("POST", "/contacts/batch", {
    body: { operation: "update", items: [{ contactId: merged, notes: "x" }, { contactId: survivor, notes: "y" }] },
  });
  expectStatus(updates, 200);
  expect(updates.json.results[0]).toMatchObject({ status: 409, result: "error", error: { code: "ERR_CONTACT_MERGED", mergedInto: survivor } });
  expect(updates.json.results[1]).toMatchObject({ status: 200, result: "updated", contactId: survivor });

  const logs = await p.api("POST", "/interactions/batch", {
    body: { items: [{ contactId: merged, type: "note", note: "lost?" }, { contactId: survivor, type: "note", note: "kept" }] },
  });
  expectStatus(logs, 200);
  expect(logs.json.results[0]).toMatchObject({ status: 409, result: "error", error: { code: "ERR_CONTACT_MERGED", mergedInto: survivor } });
  expect(logs.json.results[1]).toMatchObject({ status: 201, result: "created" });
  const single = await p.api("POST", `/contacts/${merged}/interactions`, { body: { type: "note", note: "n" } });
  expect([single.status, single.json.code, single.json.mergedInto]).toEqual([409, "ERR_CONTACT_MERGED", survivor]);
});
