/**
 * A search sizes its count limit by the project's contact count (src/contacts/list-query.ts),
 * read at most once a minute per project (src/contacts/search/project-size.ts): the count only
 * steers which index is read, so a search saves that statement.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { PROJECT_SIZE_TTL_MS, projectSizeHint } from "../../src/contacts/search/project-size.ts";
import { createContact } from "../../src/contacts/service.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { createProject } from "../../src/projects/service.ts";
import type { Database } from "../../src/storage/schema.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-size-"));
let db: Kysely<Database>;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ db, close } = await openDatabase(join(dir, "s.db"), "NORMAL"));
});
afterAll(async () => {
  await close();
  rmSync(dir, { recursive: true, force: true });
});

test("the project's contact count is read once, kept for a minute, then read again", async () => {
  const projectId = (await createProject(db, "s", isoNow(systemClock))).id;
  const add = () => createContact(db, projectId, { firstName: "Ada" }, { emitEvent: false, now: isoNow(systemClock) });
  await add();
  const t0 = 1_000_000;
  expect(await projectSizeHint(db, projectId, t0)).toBe(1);
  await add();
  expect(await projectSizeHint(db, projectId, t0 + PROJECT_SIZE_TTL_MS - 1)).toBe(1);
  expect(await projectSizeHint(db, projectId, t0 + PROJECT_SIZE_TTL_MS)).toBe(2);
});

test("each project has its own count; an unknown project counts 0", async () => {
  const a = (await createProject(db, "a", isoNow(systemClock))).id;
  const b = (await createProject(db, "b", isoNow(systemClock))).id;
  await createContact(db, b, { firstName: "Grace" }, { emitEvent: false, now: isoNow(systemClock) });
  expect(await projectSizeHint(db, a, 5)).toBe(0);
  expect(await projectSizeHint(db, b, 5)).toBe(1);
  expect(await projectSizeHint(db, "prj_none", 5)).toBe(0);
});
