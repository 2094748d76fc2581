import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeUpload } from "../../src/admin/import-uploads.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import { applyRetention } from "../../src/jobs/retention.ts";
import { createProject } from "../../src/projects/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-retention-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("retention (docs/webhooks.md §2)", () => {
  test("events and attempts older than 30 days are removed, newer ones kept", async () => {
    const { db, close } = await openDatabase(join(dir, "r.db"), "NORMAL");
    const project = await createProject(db, "r", isoNow(systemClock));
    const day = 24 * 3_600_000;
    const now = Date.parse("2026-06-30T00:00:00Z");
    const at = (daysAgo: number) => new Date(now - daysAgo * day).toISOString();
    for (const [id, age] of [["evt_old", 31], ["evt_new", 29]] as const) {
      await db.insertInto("events").values({ id, project_id: project.id, type: "contact.created", body: "{}", created_at: at(age) }).execute();
    }
    await db.insertInto("webhooks").values({ id: "wh_1", project_id: project.id, url: "https://x.test", events: '["*"]', description: null, status: "active", secret: "s", previous_secret: null, previous_secret_until: null, last_success_at: null, last_failure_reason: null, created_at: at(40), updated_at: at(40) }).execute();
    for (const [id, evt, age] of [["dlv_old", "evt_old", 31], ["dlv_new", "evt_new", 29]] as const) {
      await db.insertInto("deliveries").values({ id, event_id: evt, webhook_id: "wh_1", status: "succeeded", next_attempt_at: at(age), created_at: at(age), updated_at: at(age) }).execute();
      await db.insertInto("delivery_attempts").values({ id: `att_${id}`, delivery_id: id, webhook_id: "wh_1", event_id: evt, attempt: 1, at: at(age), status_code: 200, duration_ms: 1, error: null, response_snippet: null }).execute();
    }
    await applyRetention(db, now);
    expect((await db.selectFrom("events").select("id").execute()).map((r) => r.id)).toEqual(["evt_new"]);
    expect((await db.selectFrom("deliveries").select("id").execute()).map((r) => r.id)).toEqual(["dlv_new"]);
    expect((await db.selectFrom("delivery_attempts").select("id").execute()).map((r) => r.id)).toEqual(["att_dlv_new"]);
    await close();
  });

  test("console uploads older than the hour are deleted by the job, without waiting for another upload (docs/security.md §7)", async () => {
    const { db, close } = await openDatabase(join(dir, "u.db"), "NORMAL");
    const project = await createProject(db, "u", isoNow(systemClock));
    const now = Date.parse("2026-06-30T12:00:00Z");
    const body = new TextEncoder().encode("firstName\nAda\n");
    await storeUpload(db, { id: "upl_old", projectId: project.id, fileName: "old.csv", body, now: now - 61 * 60_000 });
    await storeUpload(db, { id: "upl_new", projectId: project.id, fileName: "new.csv", body, now: now - 59 * 60_000 });
    await applyRetention(db, now);
    expect((await db.selectFrom("admin_import_uploads").select("id").execute()).map((r) => r.id)).toEqual(["upl_new"]);
    await close();
  });
});
