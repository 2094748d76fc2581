/**
 * Finding a contact's stored events for an erase (docs/import-export.md §3, src/events/scrub.ts): the
 * scan reads the event log in slices, follows relabels back through previousContactId, and
 * counts an old id only for the time the contact held it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import type { Db } from "../../src/storage/schema.ts";
import { eventsAbout, idHistory, scrubPersonalData } from "../../src/events/scrub.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-erase-scan-"));
let db: Db;
let close: () => Promise<void>;
let projectId: string;
let otherProjectId: string;

const at = (minute: number) => new Date(Date.UTC(2026, 5, 1, 0, minute)).toISOString();
const contact = (contactId: string, email: string) => ({ contactId, firstName: "Ada", email, tags: [] });
let seq = 0;
async function event(project: string, minute: number, type: string, data: object) {
  const id = `evt_${String(++seq).padStart(4, "0")}`;
  const body = JSON.stringify({ id, event: type, apiVersion: "v1", projectId: project, createdAt: at(minute), data });
  await db.insertInto("events").values({ id, project_id: project, type, body, created_at: at(minute) }).execute();
  return id;
}

const mine: string[] = [];
const others: string[] = [];
beforeAll(async () => {
  ({ db, close } = await openDatabase(join(dir, "s.db"), "NORMAL"));
  projectId = (await createProject(db, "p", isoNow(systemClock))).id;
  otherProjectId = (await createProject(db, "q", isoNow(systemClock))).id;
  // CR-1 is created, updated, then relabelled to CR-9 at minute 10; later another contact takes CR-1.
  mine.push(await event(projectId, 1, "contact.created", { contact: contact("CR-1", "ada@example.com") }));
  for (let m = 2; m <= 9; m++) mine.push(await event(projectId, 5, "contact.updated", { contact: contact("CR-1", "ada@example.com"), changedFields: ["notes"] }));
  mine.push(await event(projectId, 10, "contact.updated", { contact: contact("CR-9", "ada@example.com"), changedFields: ["contactId"], previousContactId: "CR-1" }));
  others.push(await event(projectId, 11, "contact.created", { contact: contact("CR-1", "bob@example.com") }));
  others.push(await event(projectId, 12, "contact.created", { contact: contact("CR-90", "cy@example.com") }));
  mine.push(await event(projectId, 13, "interaction_log.created", { interactionLog: { id: "il_1", contactId: "CR-9", note: "called" }, contact: { contactId: "CR-9", firstName: "Ada", lastName: null, email: "ada@example.com" } }));
  others.push(await event(otherProjectId, 14, "contact.created", { contact: contact("CR-9", "dee@example.com") }));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

describe("an erase finds the contact's events (docs/import-export.md §3)", () => {
  test("the id history follows a relabel back, each id for the time the contact held it", async () => {
    expect(await idHistory(db, projectId, "CR-9", 2)).toEqual([
      { contactId: "CR-9", from: at(10), until: null },
      { contactId: "CR-1", from: null, until: at(10) },
    ]);
  });

  for (const slice of [1, 2, 3, 10_000]) {
    test(`every event about it is found, in slices of ${slice} (ties on the time included), and no other contact's`, async () => {
      const history = await idHistory(db, projectId, "CR-9", slice);
      const found = await eventsAbout(db, projectId, history, null, slice);
      expect([...found.keys()].sort()).toEqual([...mine].sort());
      for (const id of others) expect(found.has(id)).toBe(false);
    });
  }

  test("a scan from a time on finds only the events from then on", async () => {
    const history = await idHistory(db, projectId, "CR-9");
    const found = await eventsAbout(db, projectId, history, at(10), 2);
    expect([...found.keys()].sort()).toEqual([mine.at(-2)!, mine.at(-1)!].sort());
  });

  test("scrubbing nulls the contact's fields and the log's, keeps ids, and leaves other contacts alone", () => {
    const body = { event: "interaction_log.created", data: { interactionLog: { id: "il_1", contactId: "CR-9", note: "called" }, contact: { contactId: "CR-9", email: "a@x.test" }, other: { contactId: "CR-8", email: "b@x.test" } } };
    expect(scrubPersonalData(body, new Set(["CR-9"]))).toBe(true);
    expect(body.data).toEqual({ interactionLog: { id: "il_1", contactId: "CR-9", note: null }, contact: { contactId: "CR-9", email: null }, other: { contactId: "CR-8", email: "b@x.test" } } as never);
    expect(scrubPersonalData(body, new Set(["CR-9"]))).toBe(false);
  });

  test("a web form submission's values are nulled with its contact", () => {
    const body = { event: "web_form.submitted", data: { form: { id: "frm_1", name: "F" }, submission: { id: "sub_1", values: { email: "a@x.test" } }, contact: { contactId: "CR-9", email: "a@x.test" } } };
    expect(scrubPersonalData(body, new Set(["CR-9"]))).toBe(true);
    expect(body.data.submission.values).toBeNull();
    expect(body.data.form).toEqual({ id: "frm_1", name: "F" });
  });
});
