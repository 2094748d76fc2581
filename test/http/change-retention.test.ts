/**
 * The change log's and the trash's time windows (docs/api.md §19.2, §19.3), without waiting:
 * the real service in this process with a ManualClock. Change records are kept
 * CRM_CHANGES_RETENTION_DAYS (here 90, the default): a cursor from before is 410; a contact
 * 30 days in the trash is erased by the retention job, which fires contact.erased.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAY, ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessProject, type InProcessServer } from "../helpers/in-process.ts";

const MINUTE = 60_000;
const clock = new ManualClock(Date.now() + 365 * DAY);
let srv: InProcessServer;

beforeAll(async () => {
  srv = await startInProcess({ env: { CRM_ENV: "sandbox" }, overrides: { clock } });
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

async function create(p: InProcessProject, firstName: string): Promise<string> {
  const res = await p.api("POST", "/contacts", { body: { firstName } });
  expect(res.status).toBe(201);
  return res.json.contactId;
}

const feed = async (p: InProcessProject, after?: string) => p.api("GET", "/changes", { query: after ? { after } : {} });

describe("change records are kept 90 days", () => {
  test("after the retention job, a cursor older than the kept records is 410 ERR_CURSOR_EXPIRED; one within them resumes; no cursor starts at the oldest kept", async () => {
    const p = await srv.newProject();
    const start = (await feed(p)).json.pagination.nextCursor;
    await create(p, "Old1");
    await create(p, "Old2");
    const afterOld = (await feed(p, start)).json.pagination.nextCursor;
    clock.advance(60 * DAY);
    await create(p, "Recent");
    clock.advance(30 * DAY + MINUTE); // Old1 and Old2 are now 90 days and a minute old
    // Until the job runs, nothing is gone.
    expect((await feed(p, start)).json.data.map((r: any) => r.seq)).toEqual([1, 2, 3]);
    await srv.service.runJob("retention");
    const expired = await feed(p, start);
    expect(expired.status).toBe(410);
    expect(expired.json).toMatchObject({ success: false, statusCode: 410, code: "ERR_CURSOR_EXPIRED" });
    const resumed = await feed(p, afterOld);
    expect(resumed.status).toBe(200);
    expect(resumed.json.data.map((r: any) => r.seq)).toEqual([3]);
    expect((await feed(p)).json.data.map((r: any) => r.seq)).toEqual([3]);
    // seq goes on from where it was, never reused.
    await create(p, "Next");
    expect((await feed(p, resumed.json.pagination.nextCursor)).json.data.map((r: any) => r.seq)).toEqual([4]);
  });
});

describe("the trash is emptied after 30 days", () => {
  test("a contact deleted 30 days ago is erased by the retention job: restore is 404, its history 404, contact.erased fired, its records redacted", async () => {
    const p = await srv.newProject();
    const early = await create(p, "Early");
    const late = await create(p, "Late");
    expect((await p.api("DELETE", `/contacts/${early}`)).status).toBe(204);
    clock.advance(10 * DAY);
    expect((await p.api("DELETE", `/contacts/${late}`)).status).toBe(204);
    clock.advance(20 * DAY + MINUTE); // early has been 30 days and a minute in the trash, late 20 days
    await srv.service.runJob("retention");
    expect((await p.api("POST", `/contacts/${early}/restore`)).status).toBe(404);
    expect((await p.api("GET", `/contacts/${early}/history`)).status).toBe(404);
    const restored = await p.api("POST", `/contacts/${late}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.json.firstName).toBe("Late");
    const records = (await feed(p)).json.data;
    const ofEarly = records.filter((r: any) => r.id === early);
    expect(ofEarly.map((r: any) => r.action)).toEqual(["created", "deleted", "erased"]);
    for (const r of ofEarly) expect(Object.keys(r).sort()).toEqual(["action", "at", "id", "object", "seq"]);
    const events = (await p.api("GET", "/events")).json.data;
    expect(events.filter((e: any) => e.event === "contact.erased").map((e: any) => e.data)).toEqual([{ contactId: early }]);
  });
});
