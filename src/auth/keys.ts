import type { Kysely } from "kysely";
import type { Database, Db } from "../storage/schema.ts";
import { unitsFor, type UnitOfWork } from "../storage/unit-of-work.ts";
import { newId } from "../lib/ids.ts";
import { generateApiKey, hashApiKey, type Environment } from "./key-format.ts";
import type { Scope } from "./scopes.ts";

/** What a request knows about its caller once the key is verified. */
export interface Caller {
  keyId: string;
  projectId: string;
  scopes: Scope[];
  rateLimitPerMinute: number;
  contactCreatesPerHour: number;
  /** Items of batch writes an hour (docs/api.md §18.4). */
  batchItemsPerHour: number;
}

export async function createApiKey(
  db: Db,
  input: { projectId: string; scopes: Scope[]; name?: string | null; expiresAt?: string | null; env: Environment; now: string },
): Promise<{ id: string; key: string }> {
  const key = generateApiKey(input.env);
  const id = newId("key");
  await db
    .insertInto("api_keys")
    .values({
      id,
      project_id: input.projectId,
      name: input.name ?? null,
      key_hash: hashApiKey(key),
      hint: `${key.slice(0, 13)}…${key.slice(-4)}`,
      scopes: input.scopes.join(" "),
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
      created_at: input.now,
    })
    .execute();
  return { id, key };
}

/** A key as `crm key list` and the console show it: never the key itself (docs/api.md §2). */
export interface ApiKeyInfo {
  id: string;
  projectId: string;
  name: string | null;
  hint: string;
  scopes: Scope[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

/** Every key (of one project when given), oldest first. */
export async function listApiKeys(db: Db, projectId?: string): Promise<ApiKeyInfo[]> {
  let q = db.selectFrom("api_keys").select(["id", "project_id", "name", "hint", "scopes", "expires_at", "revoked_at", "last_used_at", "created_at"]);
  if (projectId) q = q.where("project_id", "=", projectId);
  const rows = await q.orderBy("created_at").orderBy("id").execute();
  return rows.map((r) => ({
    id: r.id,
    projectId: r.project_id,
    name: r.name,
    hint: r.hint,
    scopes: r.scopes.split(" ") as Scope[],
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
    createdAt: r.created_at,
  }));
}

/**
 * Revokes a key (`crm key revoke`, the console): it answers 401 from then on (within the
 * verify cache's 2 s on other nodes, docs/operations.md §1). Revoking a revoked key changes nothing.
 * False when there is no such key (in `projectId`, when given).
 */
export async function revokeApiKey(db: Db, id: string, now: string, projectId?: string): Promise<boolean> {
  let update = db.updateTable("api_keys").set({ revoked_at: now }).where("id", "=", id).where("revoked_at", "is", null);
  if (projectId) update = update.where("project_id", "=", projectId);
  if (Number((await update.executeTakeFirst()).numUpdatedRows) > 0) return true;
  let exists = db.selectFrom("api_keys").select("id").where("id", "=", id);
  if (projectId) exists = exists.where("project_id", "=", projectId);
  return (await exists.executeTakeFirst()) !== undefined;
}

const CACHE_MS = 1000;

/**
 * Verifies keys by SHA-256 hash. Hits are cached for 1 s so a busy key costs no query,
 * while revocation, expiry and project settings changed by the CLI apply within 2 s
 * (docs/operations.md §1). The cache is keyed by the key's text, so a key verified in the last
 * second costs neither its checksum nor its hash (docs/performance.md); only keys that
 * verified are kept. Last-used times are kept in memory and written by a periodic job.
 */
export class KeyStore {
  private readonly cache = new Map<string, { caller: Caller | null; expiresAt: number | null; fetched: number }>();
  private readonly used = new Map<string, number>();

  private readonly writes: UnitOfWork;

  /** `writes`: the service's unit of work; a test's store writes through `db`'s own transactions. */
  constructor(
    private readonly db: Kysely<Database>,
    writes?: UnitOfWork,
  ) {
    this.writes = writes ?? unitsFor(db);
  }

  /** Whether `key` verified in the last second (then it is well-formed: authenticate skips the checksum). */
  knows(key: string, now: number): boolean {
    const entry = this.cache.get(key);
    return entry !== undefined && now - entry.fetched <= CACHE_MS;
  }

  /** The caller of `key` at `now` (the service's clock: an expiry is judged against it, docs/api.md §2). */
  async verify(key: string, now: number): Promise<Caller | null> {
    let entry = this.cache.get(key);
    if (!entry || now - entry.fetched > CACHE_MS) {
      entry = await this.load(hashApiKey(key), now);
      if (entry.caller) this.cache.set(key, entry);
      else this.cache.delete(key);
    }
    if (!entry.caller || (entry.expiresAt !== null && entry.expiresAt <= now)) return null;
    this.used.set(entry.caller.keyId, now);
    return entry.caller;
  }

  private async load(hash: string, now: number) {
    const row = await this.db
      .selectFrom("api_keys")
      .innerJoin("projects", "projects.id", "api_keys.project_id")
      .select([
        "api_keys.id",
        "api_keys.project_id",
        "api_keys.scopes",
        "api_keys.expires_at",
        "api_keys.revoked_at",
        "projects.rate_limit_per_minute",
        "projects.contact_creates_per_hour",
        "projects.batch_items_per_hour",
      ])
      .where("api_keys.key_hash", "=", hash)
      .executeTakeFirst();
    if (!row || row.revoked_at) return { caller: null, expiresAt: null, fetched: now };
    const caller: Caller = {
      keyId: row.id,
      projectId: row.project_id,
      scopes: row.scopes.split(" ") as Scope[],
      rateLimitPerMinute: row.rate_limit_per_minute,
      contactCreatesPerHour: row.contact_creates_per_hour,
      batchItemsPerHour: row.batch_items_per_hour,
    };
    return { caller, expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at), fetched: now };
  }

  /** Drops a key revoked on this node from the cache, so it is refused at once here (other nodes: within 2 s). */
  forget(keyId: string): void {
    for (const [key, entry] of this.cache) if (entry.caller?.keyId === keyId) this.cache.delete(key);
  }

  /** Writes the last-used times gathered since the previous flush (jobs). */
  async flushLastUsed(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = [...this.used];
    this.used.clear();
    await this.writes.run(null, async (trx) => {
      for (const [id, at] of batch) {
        await trx.updateTable("api_keys").set({ last_used_at: new Date(at).toISOString() }).where("id", "=", id).execute();
      }
    });
  }
}
