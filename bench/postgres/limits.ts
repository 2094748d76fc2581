/**
 * The storage limits on PostgreSQL for bench/postgres.ts, with `pg` alone (no HTTP, no
 * Kysely, no validation), over a pool of the service's size (CRM_DB_POOL_SIZE), one worker
 * per pooled connection:
 * - raw one-row INSERT transactions: BEGIN; the contact, its contact_tags and
 *   contact_search_terms rows (one statement each, as src/contacts/repository.ts sends
 *   them); COMMIT; into copies of those tables in schema `raw` made with LIKE … INCLUDING
 *   ALL and filled with the seeded rows, plus the same foreign keys (checked against the
 *   service's tables: same indexes, same number of foreign keys). The bodies are those of
 *   bench/wrk/post.lua, the values derived by the service's own helpers (as bench/limits.ts).
 *   An informational "service shape" pass adds what createContact also does in its
 *   transaction: the project's counter UPDATE (a row lock held to COMMIT) and an event row.
 * - raw point reads: SELECT * FROM contacts WHERE id = $1 on random contacts of the project.
 * Rates are operations per wall second over all workers; latency is one transaction or one
 * query as the worker saw it.
 */
import pg from "pg";
import { termHead } from "../../src/contacts/matching.ts";
import { newId } from "../../src/lib/ids.ts";
import { quantile as percentile } from "../harness/report.ts";
import { rawContact, rawEventBody } from "../harness/seed/people.ts";

const TABLES = ["contacts", "contact_tags", "contact_search_terms", "events"] as const;

export interface RawResult {
  label: string;
  ops: number;
  rate: number;
  p50Us: number;
  p95Us: number;
  p99Us: number;
  /** CPU per operation, µs: this process (the client) and PostgreSQL. */
  clientUs: number;
  pgUs: number;
  termsPerRow: number;
  tagsPerRow: number;
}

export interface RawOptions {
  seconds: number;
  warmup: number;
  workers: number;
  /** CPU ticks of the client and of PostgreSQL, read before and after the measured part. */
  cpu: () => { client: number; pg: number };
  ticksToUs: (ticks: number) => number;
}

const INT8 = 20;
function pool(url: string, size: number) {
  const p = new pg.Pool({
    connectionString: url,
    max: size,
    types: { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format as "text"))) as any },
  });
  p.on("error", () => {});
  return p;
}

/** Index definitions and foreign-key count of a table, with names and schema left out. */
async function shape(db: pg.Pool, schema: string, table: string): Promise<string> {
  const idx = await db.query<{ def: string }>("SELECT indexdef AS def FROM pg_indexes WHERE schemaname = $1 AND tablename = $2", [schema, table]);
  const defs = idx.rows.map((r) => r.def.replace(/^CREATE (UNIQUE )?INDEX \S+ ON (ONLY )?\S+ /, "$1")).sort();
  const fk = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_constraint WHERE contype = 'f' AND conrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass",
    [schema, table],
  );
  return `${defs.join("; ")} | fks ${fk.rows[0]!.n}`;
}

/** Makes schema `raw` (the seeded rows, the same indexes and foreign keys); returns the check's one-line description. */
export async function prepareRawTables(url: string): Promise<string> {
  const db = pool(url, 1);
  try {
    await db.query("DROP SCHEMA IF EXISTS raw CASCADE; CREATE SCHEMA raw");
    for (const t of TABLES) await db.query(`CREATE TABLE raw.${t} (LIKE public.${t} INCLUDING ALL)`);
    for (const t of ["contacts", "contact_tags", "contact_search_terms"]) await db.query(`INSERT INTO raw.${t} SELECT * FROM public.${t}`);
    await db.query("SELECT setval(pg_get_serial_sequence('raw.contacts', 'id'), (SELECT coalesce(max(id), 0) + 1 FROM raw.contacts), false)");
    await db.query(`ALTER TABLE raw.contacts ADD FOREIGN KEY (project_id) REFERENCES public.projects(id),
      ADD FOREIGN KEY (contact_type_id) REFERENCES public.contact_types(id)`);
    await db.query(`ALTER TABLE raw.contact_tags ADD FOREIGN KEY (contact_id) REFERENCES raw.contacts(id) ON DELETE CASCADE,
      ADD FOREIGN KEY (tag_id) REFERENCES public.tags(id)`);
    await db.query("ALTER TABLE raw.contact_search_terms ADD FOREIGN KEY (contact_id) REFERENCES raw.contacts(id) ON DELETE CASCADE");
    await db.query("ALTER TABLE raw.events ADD FOREIGN KEY (project_id) REFERENCES public.projects(id)");
    await db.query("ANALYZE raw.contacts, raw.contact_tags, raw.contact_search_terms");
    let indexes = 0;
    for (const t of TABLES) {
      const [service, raw] = [await shape(db, "public", t), await shape(db, "raw", t)];
      if (service !== raw) throw new Error(`raw.${t} differs from the service's table:\n  service: ${service}\n  raw:     ${raw}`);
      indexes += service.split("; ").length;
    }
    return `raw.${TABLES.join(", raw.")} made with LIKE … INCLUDING ALL, the seeded rows copied in: the same ${indexes} indexes and the same foreign keys as the service's tables`;
  } finally {
    await db.end();
  }
}


/** Runs `op` on `workers` pooled connections for the warm-up, then for the measured seconds. */
async function timed(db: pg.Pool, o: RawOptions, op: (client: pg.PoolClient) => Promise<void>) {
  const clients = await Promise.all(Array.from({ length: o.workers }, () => db.connect()));
  try {
    const loop = async (seconds: number, latencies: number[] | null) => {
      const end = performance.now() + seconds * 1000;
      await Promise.all(clients.map(async (client) => {
        while (performance.now() < end) {
          const t0 = performance.now();
          await op(client);
          latencies?.push((performance.now() - t0) * 1000);
        }
      }));
    };
    if (o.warmup > 0) await loop(o.warmup, null);
    const latencies: number[] = [];
    const before = o.cpu();
    const started = performance.now();
    await loop(o.seconds, latencies);
    const wall = (performance.now() - started) / 1000;
    const after = o.cpu();
    const sorted = Float64Array.from(latencies).sort();
    const n = Math.max(1, latencies.length);
    return {
      ops: latencies.length,
      rate: latencies.length / wall,
      p50Us: percentile(sorted, 0.5),
      p95Us: percentile(sorted, 0.95),
      p99Us: percentile(sorted, 0.99),
      clientUs: o.ticksToUs(after.client - before.client) / n,
      pgUs: o.ticksToUs(after.pg - before.pg) / n,
    };
  } finally {
    for (const c of clients) c.release();
  }
}

/** Raw one-row INSERT transactions into schema `raw` (prepareRawTables first). */
export async function rawInserts(url: string, projectId: string, o: RawOptions & { serviceShape?: boolean }): Promise<RawResult> {
  const db = pool(url, o.workers);
  try {
    const project = (await db.query("SELECT default_region FROM projects WHERE id = $1", [projectId])).rows[0] as { default_region: string };
    const typeId = (await db.query("SELECT id FROM contact_types WHERE project_id = $1 ORDER BY is_default DESC, created_at LIMIT 1", [projectId])).rows[0].id as string;
    const tagIds = new Map((await db.query("SELECT id, name_key FROM tags WHERE project_id = $1", [projectId])).rows.map((t) => [t.name_key as string, t.id as string]));
    let next = ((await db.query("SELECT max(contact_number) AS n FROM raw.contacts WHERE project_id = $1", [projectId])).rows[0].n ?? 0) + 1;
    if (o.serviceShape) await db.query("UPDATE projects SET last_contact_number = greatest(last_contact_number, $1) WHERE id = $2", [next - 1, projectId]);
    let terms = 0;
    let tags = 0;
    let rows = 0;
    const r = await timed(db, o, async (client) => {
      // The row values, as createContact/toRow derive them from a post.lua body.
      let n = next++;
      const row = rawContact(n, project.default_region, tagIds);
      const { tags: contactTags, terms: contactTerms } = row;
      const now = new Date().toISOString();
      await client.query("BEGIN");
      try {
        if (o.serviceShape) {
          const counter = await client.query(
            "UPDATE projects SET last_contact_number = last_contact_number + 1, contact_count = contact_count + 1 WHERE id = $1 " +
              "RETURNING last_contact_number, contact_count, contact_quota, default_region",
            [projectId],
          );
          n = counter.rows[0].last_contact_number;
        }
        const { rows: [{ id }] } = await client.query(
          `INSERT INTO raw.contacts (project_id, contact_number, identity_type, source, first_name, last_name, email, email_key,
             phone, phone_key, business_name, website, address, contact_type_id, subscribed, sms_subscribed, notes, custom_fields,
             created_at, updated_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20) RETURNING id`,
          [projectId, n, "personal", "api", row.first, row.last, row.email, row.emailKey, row.phone, row.phoneKey, null, null,
            row.address, typeId, 1, 0, null, "{}", now, now],
        );
        for (const tagId of contactTags) {
          await client.query("INSERT INTO raw.contact_tags (contact_id, tag_id, updated_at, contact_number) VALUES ($1, $2, $3, $4)", [id, tagId, now, n]);
        }
        for (const term of contactTerms) {
          await client.query(
            "INSERT INTO raw.contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number) VALUES ($1, $2, $3, $4, $5, $6)",
            [projectId, term, id, termHead(term), now, n],
          );
        }
        if (o.serviceShape) {
          const body = rawEventBody(newId("evt"), projectId, n, row, now);
          await client.query("INSERT INTO raw.events (id, project_id, type, body, created_at) VALUES ($1, $2, $3, $4, $5)", [newId("evt"), projectId, "contact.created", body, now]);
        }
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      }
      rows++;
      terms += contactTerms.length;
      tags += contactTags.length;
    });
    return {
      label: o.serviceShape ? "raw insert, service shape (+ counter UPDATE + event INSERT)" : "raw insert (contact + tags + search terms)",
      ...r,
      termsPerRow: terms / Math.max(1, rows),
      tagsPerRow: tags / Math.max(1, rows),
    };
  } finally {
    await db.end();
  }
}

/** Raw primary-key reads of random contacts (`ids`: contacts.id values). */
export async function rawPointReads(url: string, ids: number[], o: RawOptions): Promise<RawResult> {
  const db = pool(url, o.workers);
  try {
    const r = await timed(db, o, async (client) => {
      const { rowCount } = await client.query("SELECT * FROM contacts WHERE id = $1", [ids[Math.floor(Math.random() * ids.length)]]);
      if (rowCount !== 1) throw new Error("a raw point read found no row");
    });
    return { label: "raw point read by primary key", ...r, termsPerRow: 0, tagsPerRow: 0 };
  } finally {
    await db.end();
  }
}

/**
 * Raw replay of a read scenario: the SELECTs its requests ran (traced by bench/costs.ts on
 * this database, COSTS_TRACE_OUT), each request's statements in order on one pooled
 * connection, the requests taken in turn, cycling; one operation is one request's reads.
 * The floor of the same scenario without HTTP, Kysely, validation, row mapping or JSON.
 */
export async function rawReplay(url: string, name: string, requests: Array<Array<{ sql: string; params: unknown[] }>>, o: RawOptions): Promise<RawResult> {
  const db = pool(url, o.workers);
  const work = requests.filter((r) => r.length > 0);
  if (work.length === 0) throw new Error(`no traced reads for ${name}`);
  let next = 0;
  const statements = work.reduce((a, r) => a + r.length, 0) / work.length;
  try {
    const r = await timed(db, o, async (client) => {
      for (const s of work[next++ % work.length]!) await client.query(s.sql, s.params);
    });
    return { label: `raw replay: ${name}'s ${statements.toFixed(1)} SELECTs per request`, ...r, termsPerRow: 0, tagsPerRow: 0 };
  } finally {
    await db.end();
  }
}
