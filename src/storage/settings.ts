import { randomBase62 } from "../lib/ids.ts";
import type { Db } from "./schema.ts";

/** A per-database secret, created on first use (e.g. the cursor signing key). */
export async function databaseSecret(db: Db, name: string): Promise<string> {
  await db
    .insertInto("settings")
    .values({ name, value: randomBase62(43) })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const row = await db.selectFrom("settings").select("value").where("name", "=", name).executeTakeFirstOrThrow();
  return row.value;
}
