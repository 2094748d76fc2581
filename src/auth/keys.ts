import type { Kysely } from "kysely";
import type { Database, Db } from "../db/schema.ts";
import { newId } from "../lib/ids.ts";
import { isoNow } from "../lib/time.ts";
import { generateApiKey, hashApiKey, type Environment } from "./key-format.ts";
import type { Scope } from "./scopes.ts";

/** What a request knows about its caller once the key is verified. */
export interface Caller {
  keyId: string;
  projectId: string;
  scopes: Scope[];
  rateLimitPerMinute: number;
  contactCreatesPerHour: number;
}

export async function createApiKey(
  db: Db,
  input: { projectId: string; scopes: Scope[]; name?: string | null; expiresAt?: string | null; env: Environment },
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
      created_at: isoNow(),
    })
    .execute();
  return { id, key };
}

const CACHE_MS = 1000;

/**
 * Verifies keys by SHA-256 hash. Hits are cached for 1 s so a busy key costs no query,
 * while revocation, expiry and project settings changed by the CLI apply within 2 s
 * (decisions §1). Last-used times are kept in memory and written by a periodic job.
 */
export class KeyStore {
  private readonly cache = new Map<string, { caller: Caller | null; expiresAt: string | null; fetched: number }>();
  private readonly used = new Map<string, string>();

  constructor(private readonly db: Kysely<Database>) {}

  /** The caller of `key` at `now` (the service's clock: an expiry is judged against it, decisions §2). */
  async verify(key: string, now: number): Promise<Caller | null> {
    const hash = hashApiKey(key);
    let entry = this.cache.get(hash);
    if (!entry || now - entry.fetched > CACHE_MS) {
      entry = await this.load(hash, now);
      if (entry.caller) this.cache.set(hash, entry);
      else this.cache.delete(hash);
    }
    if (!entry.caller || (entry.expiresAt && Date.parse(entry.expiresAt) <= now)) return null;
    this.used.set(entry.caller.keyId, new Date(now).toISOString());
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
    };
    return { caller, expiresAt: row.expires_at, fetched: now };
  }

  /** Writes the last-used times gathered since the previous flush (jobs). */
  async flushLastUsed(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = [...this.used];
    this.used.clear();
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of batch) await trx.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
    });
  }
}
