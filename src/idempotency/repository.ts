import type { Db } from "../storage/schema.ts";

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export interface StoredAnswer {
  method: string;
  path: string;
  bodyHash: string;
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** The live record of (API key, Idempotency-Key); records older than 24 h count as absent. */
export async function findIdempotencyRecord(db: Db, apiKeyId: string, key: string, now: number): Promise<StoredAnswer | null> {
  const row = await db
    .selectFrom("idempotency_records")
    .selectAll()
    .where("api_key_id", "=", apiKeyId)
    .where("key", "=", key)
    .where("created_at", ">", new Date(now - IDEMPOTENCY_TTL_MS).toISOString())
    .executeTakeFirst();
  if (!row) return null;
  return {
    method: row.method,
    path: row.path,
    bodyHash: row.body_hash,
    status: row.status,
    body: row.response_body,
    headers: JSON.parse(row.headers),
  };
}

export async function saveIdempotencyRecord(db: Db, apiKeyId: string, key: string, answer: StoredAnswer, now: number) {
  const values = {
    method: answer.method,
    path: answer.path,
    body_hash: answer.bodyHash,
    status: answer.status,
    response_body: answer.body,
    headers: JSON.stringify(answer.headers),
    created_at: new Date(now).toISOString(),
  };
  await db
    .insertInto("idempotency_records")
    .values({ api_key_id: apiKeyId, key, ...values })
    .onConflict((oc) => oc.columns(["api_key_id", "key"]).doUpdateSet(values))
    .execute();
}

/** Retention (jobs): drops records past their 24 h. */
export async function deleteExpiredIdempotencyRecords(db: Db, now: number): Promise<void> {
  await db.deleteFrom("idempotency_records").where("created_at", "<=", new Date(now - IDEMPOTENCY_TTL_MS).toISOString()).execute();
}
