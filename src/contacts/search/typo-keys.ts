import type { Db } from "../../storage/schema.ts";
import { isTypoWord, typoKeysOf } from "./terms.ts";

/**
 * The project's words one typo away (docs/api.md §11.6) are found through search_typo_keys:
 * each word under itself and every string one deletion away. A word is written once per
 * project, the first time a contact has it; names repeat, so most writes only look.
 */
export async function rememberTypoWords(db: Db, projectId: string, terms: Iterable<string>): Promise<void> {
  const words = [...new Set([...terms].filter(isTypoWord))];
  if (words.length === 0) return;
  const known = new Set<string>();
  for (let i = 0; i < words.length; i += 500) {
    const chunk = words.slice(i, i + 500);
    const rows = await db
      .selectFrom("search_typo_keys")
      .select("word")
      .where("project_id", "=", projectId)
      .where("key", "in", chunk)
      .whereRef("word", "=", "key")
      .execute();
    for (const r of rows) known.add(r.word);
  }
  const rows = words.filter((w) => !known.has(w)).flatMap((word) => typoKeysOf(word).map((key) => ({ project_id: projectId, key, word })));
  // Three values a row: well under SQLite's and PostgreSQL's bound parameters per statement.
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto("search_typo_keys")
      .values(rows.slice(i, i + 1000))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/**
 * Words a contact no longer has (a rename, an erase: docs/security.md §7) leave
 * search_typo_keys once no term of the project holds them, so a former or erased name is
 * gone from the index too. A trashed or merged-away contact's words stay (it may come back).
 */
export async function forgetTypoWords(db: Db, projectId: string, terms: Iterable<string>): Promise<void> {
  for (const word of new Set([...terms].filter(isTypoWord))) {
    const used = await db.selectFrom("contact_search_terms").select("contact_id").where("project_id", "=", projectId).where("term", "=", word).limit(1).executeTakeFirst();
    if (used) continue;
    await db.deleteFrom("search_typo_keys").where("project_id", "=", projectId).where("key", "in", typoKeysOf(word)).where("word", "=", word).execute();
  }
}
