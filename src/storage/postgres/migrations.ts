// PostgreSQL's migrations are plain SQL files in db/postgres/, embedded at build time like
// SQLite's (src/storage/sqlite/migrations.ts). Append new files here in order; never edit
// an applied one: its checksum is recorded and checked at every start (migrate.ts).
import pg0001 from "../../../db/postgres/0001_init.sql" with { type: "text" };
import pg0002 from "../../../db/postgres/0002_admin_console.sql" with { type: "text" };
import pg0003 from "../../../db/postgres/0003_erasure_and_import_uploads.sql" with { type: "text" };
import pg0004 from "../../../db/postgres/0004_admin_sign_in_attempts.sql" with { type: "text" };
import pg0005 from "../../../db/postgres/0005_sync_in.sql" with { type: "text" };
import pg0006 from "../../../db/postgres/0006_change_log.sql" with { type: "text" };
import pg0007 from "../../../db/postgres/0007_duplicates_and_merges.sql" with { type: "text" };
import pg0008 from "../../../db/postgres/0008_import_rejected_rows.sql" with { type: "text" };
import pg0009 from "../../../db/postgres/0009_console_indexes.sql" with { type: "text" };
import pg0010 from "../../../db/postgres/0010_search_folding.sql" with { type: "text" };
import pg0011 from "../../../db/postgres/0011_search_term_bits.sql" with { type: "text" };
import pg0012 from "../../../db/postgres/0012_search_term_ranges.sql" with { type: "text" };
import pg0013 from "../../../db/postgres/0013_search_term_bits_second_hash.sql" with { type: "text" };
import pg0014 from "../../../db/postgres/0014_rate_limit_take.sql" with { type: "text" };
import pg0015 from "../../../db/postgres/0015_search_pair_terms.sql" with { type: "text" };
import type { PostgresMigration } from "../migrations.ts";
import { pairTermsStepPostgres } from "../pair-terms-step.ts";
import { rebuildSearchPostgres } from "../search-rebuild.ts";
import { FIRST_TERM_BITS, SECOND_TERM_BITS, termBitsStepPostgres } from "../term-bits-step.ts";

/** The search's term table: rewritten whole by the search migrations, vacuumed after them (`vacuumAfter`). */
const TERMS = "contact_search_terms";

/**
 * PostgreSQL's own files (db/postgres/): one schema equal to the SQLite files' end state,
 * then its own steps. Applied and checked the same way, under an advisory lock
 * (migrate.ts).
 */
export const postgresMigrations: readonly PostgresMigration[] = [
  { name: "0001_init", sql: pg0001 },
  { name: "0002_admin_console", sql: pg0002 },
  { name: "0003_erasure_and_import_uploads", sql: pg0003 },
  { name: "0004_admin_sign_in_attempts", sql: pg0004 },
  { name: "0005_sync_in", sql: pg0005 },
  { name: "0006_change_log", sql: pg0006 },
  { name: "0007_duplicates_and_merges", sql: pg0007 },
  { name: "0008_import_rejected_rows", sql: pg0008 },
  { name: "0009_console_indexes", sql: pg0009 },
  { name: "0010_search_folding", sql: pg0010, after: async (client) => void (await rebuildSearchPostgres(client)), vacuumAfter: [TERMS, "search_typo_keys"] },
  { name: "0011_search_term_bits", sql: pg0011, after: async (client) => void (await termBitsStepPostgres(client, FIRST_TERM_BITS)), vacuumAfter: [TERMS] },
  { name: "0012_search_term_ranges", sql: pg0012, vacuumAfter: [TERMS] },
  {
    name: "0013_search_term_bits_second_hash",
    sql: pg0013,
    after: async (client) => void (await termBitsStepPostgres(client, SECOND_TERM_BITS)),
    vacuumAfter: [TERMS],
  },
  { name: "0014_rate_limit_take", sql: pg0014 },
  { name: "0015_search_pair_terms", sql: pg0015, after: async (client) => void (await pairTermsStepPostgres(client)), vacuumAfter: [TERMS] },
];
