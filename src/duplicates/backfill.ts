import type { Db } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { nameKeysOf, keyedFieldsOfRow, duplicateKeysOf } from "./keys.ts";
import { sharedKeys, touchGroups } from "./repository.ts";

/** The setting the upgrade to duplicates (db/0011) leaves: contacts up to this id have no keys yet. */
export const BACKFILL_SETTING = "duplicates_backfill_until";
const CHUNK = 500;

/**
 * Gives the contacts that existed before the upgrade their duplicate keys (docs/api.md §20.1),
 * newest id first, CHUNK contacts per unit of work so writers never wait long; the job runs
 * every few seconds and stops at once when there is nothing left. Contacts written since the
 * upgrade were keyed by their write; a key they share with an older contact becomes a group
 * when that contact's chunk is done.
 */
export async function backfillDuplicateKeys(writes: UnitOfWork, now: () => string): Promise<boolean> {
  return writes.run(null, async (trx) => {
    const setting = await trx.selectFrom("settings").select("value").where("name", "=", BACKFILL_SETTING).executeTakeFirst();
    if (!setting) return false;
    const until = Number(setting.value);
    const rows = await trx
      .selectFrom("contacts")
      .select(["id", "project_id", "first_name", "last_name", "business_name", "email_key", "phone_key"])
      .where("id", "<=", until)
      .where("deleted_at", "is", null)
      .orderBy("id", "desc")
      .limit(CHUNK)
      .execute();
    await keyChunk(trx, rows, now());
    const next = rows.length < CHUNK ? 0 : Number(rows.at(-1)!.id) - 1;
    if (next <= 0) await trx.deleteFrom("settings").where("name", "=", BACKFILL_SETTING).execute();
    else await trx.updateTable("settings").set({ value: String(next) }).where("name", "=", BACKFILL_SETTING).execute();
    return next > 0;
  });
}

type KeyedRow = Parameters<typeof keyedFieldsOfRow>[0] & { id: number; project_id: string };

async function keyChunk(trx: Db, rows: KeyedRow[], now: string) {
  const byProject = new Map<string, KeyedRow[]>();
  for (const row of rows) byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row]);
  for (const [projectId, list] of byProject) {
    const nameRows = list.flatMap((row) => nameKeysOf(keyedFieldsOfRow(row)).map((key) => ({ project_id: projectId, key, contact_id: Number(row.id) })));
    if (nameRows.length > 0) {
      await trx.insertInto("contact_name_keys").values(nameRows).onConflict((oc) => oc.columns(["project_id", "key", "contact_id"]).doNothing()).execute();
    }
    const keys = [...new Set(list.flatMap((row) => duplicateKeysOf(keyedFieldsOfRow(row))))];
    for (let i = 0; i < keys.length; i += 500) await touchGroups(trx, projectId, await sharedKeys(trx, projectId, keys.slice(i, i + 500)), now);
  }
}
