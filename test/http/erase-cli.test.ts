/**
 * `crm contact erase` (docs/import-export.md §3) beyond the one rich person of erase.test.ts: its text
 * output, its refusals (exit 2 naming what is unknown), the quota and the counter after an
 * erase, and that only the erased contact's data goes: not a duplicate's with the same
 * email, not another project's, not another contact's that took the erased one's old id.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { eventsAbout, expectErasedEvent, hitsIn } from "./erase-person.ts";

setDefaultTimeout(60_000);

let srv: ServerHandle;
beforeAll(async () => {
  srv = await startServer();
}, 60_000);
afterAll(() => srv?.stop(), 60_000);

const erase = (projectId: string, contactId: string, json = false) => srv.cliRaw(["contact", "erase", "--project", projectId, contactId, ...(json ? ["--json"] : [])]);

async function create(p: ProjectInfo, body: Record<string, unknown>) {
  const res = await p.api("POST", "/contacts", { body });
  expectStatus(res, 201);
  return res.json;
}

describe("text output", () => {
  test("prints the contactId and what was deleted and scrubbed, counted", async () => {
    const p = await srv.newProject();
    const c = await create(p, { firstName: "Texta", lastName: "Printer", email: "texta@example.com", tags: ["a", "b"] });
    expectStatus(await p.api("POST", `/contacts/${c.contactId}/interactions`, { body: { type: "note", note: "hello" } }), 201);
    const r = await erase(p.id, c.contactId);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = r.stdout;
    expect(text).toContain(c.contactId);
    expect(text).toContain(p.id);
    expect(text).toMatch(/\b1 interaction log\b/);
    expect(text).toMatch(/\b2 tag links\b/);
    expect(text).toMatch(/\b0 form submissions\b/);
    expect(text).toMatch(/\d+ search terms?\b/);
    // contact.created and interaction_log.created
    expect(text).toMatch(/\b2 stored events\b/);
    expect(() => JSON.parse(text)).toThrow();
    expect(hitsIn(text, ["texta", "printer"])).toEqual([]);
    expectError(await p.api("GET", `/contacts/${c.contactId}`), "ERR_NOT_FOUND");
  });
});

describe("refusals: exit 2, the reason on stderr, nothing changed", () => {
  test("an unknown contact, an unknown project, and a malformed contactId", async () => {
    const p = await srv.newProject();
    const c = await create(p, { firstName: "Stays" });
    for (const [args, named] of [
      [[p.id, "CR-999"], "CR-999"],
      [["prj_doesnotexist", c.contactId], "prj_doesnotexist"],
      [[p.id, "7"], "7"],
      [[p.id, "cr-1"], "cr-1"],
    ] as const) {
      const r = await erase(args[0], args[1], true);
      expect(r.exitCode, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(named);
      expect(r.stdout.trim()).toBe("");
    }
    expectStatus(await p.api("GET", `/contacts/${c.contactId}`), 200);
  });

  test("another project's contact is unknown here: the erase is refused and the contact stays", async () => {
    const owner = await srv.newProject();
    const stranger = await srv.newProject();
    const c = await create(owner, { firstName: "Owned", email: "owned@example.com" });
    const r = await erase(stranger.id, c.contactId);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(c.contactId);
    expect((await owner.api("GET", `/contacts/${c.contactId}`)).json.email).toBe("owned@example.com");
  });
});

describe("the counter and the quota", () => {
  test("an erase frees a place under the quota; the next contact gets the next number, not the erased one", async () => {
    const p = await srv.newProject({ contactQuota: 2 });
    await create(p, { firstName: "First" });
    const second = await create(p, { firstName: "Second" });
    expect(second.contactId).toBe("CR-2");
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Third" } }), "ERR_QUOTA_EXCEEDED");
    expect((await erase(p.id, "CR-2")).exitCode).toBe(0);
    const third = await create(p, { firstName: "Third" });
    expect(third.contactId).toBe("CR-3");
    expectError(await p.api("POST", "/contacts", { body: { firstName: "Fourth" } }), "ERR_QUOTA_EXCEEDED");
  });

  test("relabelling another contact to an erased contactId that is not the newest is 409 naming contactId", async () => {
    const p = await srv.newProject();
    const a = await create(p, { firstName: "Gone" });
    const b = await create(p, { firstName: "Here" });
    expect((await erase(p.id, a.contactId)).exitCode).toBe(0);
    expectError(await p.api("PATCH", `/contacts/${b.contactId}`, { body: { contactId: a.contactId } }), "ERR_CONFLICT", "contactId");
    expectStatus(await p.api("GET", `/contacts/${b.contactId}`), 200);
  });
});

describe("only the erased contact's data goes", () => {
  test("a duplicate with the same email keeps its data and its events", async () => {
    const p = await srv.newProject();
    const gone = await create(p, { firstName: "Twin", lastName: "Gone", email: "twin@example.com" });
    const kept = await create(p, { firstName: "Twin", lastName: "Kept", email: "twin@example.com" });
    const before = (await walk(p.api, "/events")).items;
    const r = await erase(p.id, gone.contactId, true);
    expect(JSON.parse(r.stdout).scrubbed.events).toBe(1);
    const after = (await walk(p.api, "/events")).items;
    expect(eventsAbout(after, [kept.contactId])).toEqual(eventsAbout(before, [kept.contactId]));
    expectErasedEvent(eventsAbout(after, [gone.contactId])[0], eventsAbout(before, [gone.contactId])[0]);
    const twin = (await p.api("GET", `/contacts/${kept.contactId}`)).json;
    expect(twin).toMatchObject({ lastName: "Kept", email: "twin@example.com", duplicateSignal: { emailMatches: 0 } });
  });

  test("after a relabel, another contact that took the old id keeps its events under that id; the erased one's events from before are scrubbed", async () => {
    const p = await srv.newProject();
    const a = await create(p, { firstName: "Alpha", email: "alpha@example.com" }); // CR-1
    const b = await create(p, { firstName: "Bravo", email: "bravo@example.com" }); // CR-2
    expectStatus(await p.api("PATCH", `/contacts/${a.contactId}`, { body: { contactId: "CR-100" } }), 200);
    expectStatus(await p.api("PATCH", `/contacts/${b.contactId}`, { body: { contactId: a.contactId } }), 200);
    expectStatus(await p.api("PATCH", `/contacts/${a.contactId}`, { body: { lastName: "Bravoson" } }), 200);
    const before = (await walk(p.api, "/events")).items;
    const r = await erase(p.id, "CR-100", true);
    expect(r.exitCode, r.stderr).toBe(0);
    const after = (await walk(p.api, "/events")).items;
    expect(hitsIn(JSON.stringify(after), ["alpha"])).toEqual([]);
    // Bravo's events, under CR-2 and then (after its relabel) under CR-1, are as they were.
    const bravo = before.filter((e) => JSON.stringify(e).includes("bravo@example.com"));
    expect(bravo.length).toBe(3);
    for (const e of bravo) expect(after.find((x) => x.id === e.id)).toEqual(e);
    // Alpha's: created as CR-1, relabelled to CR-100.
    const alpha = before.filter((e) => JSON.stringify(e).includes("alpha@example.com"));
    expect(alpha.length).toBe(2);
    for (const e of alpha) expectErasedEvent(after.find((x) => x.id === e.id), e);
    expect(JSON.parse(r.stdout).scrubbed.events).toBe(2);
  });
});
