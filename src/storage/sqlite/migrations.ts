// Migrations are plain SQL files in db/, embedded at build time so the compiled binary
// carries them (docs/operations.md §1). Append new files here in order; never edit an applied one:
// its checksum is recorded and checked at every start (src/storage/sqlite/migrate.ts).
import m0001 from "../../../db/0001_init.sql" with { type: "text" };
import m0002 from "../../../db/0002_webhooks.sql" with { type: "text" };
import m0003 from "../../../db/0003_forms.sql" with { type: "text" };
import m0004 from "../../../db/0004_order_keys_and_delivery_status.sql" with { type: "text" };
import m0005 from "../../../db/0005_deliveries_due_by_subscription.sql" with { type: "text" };
import m0006 from "../../../db/0006_admin_console.sql" with { type: "text" };
import m0007 from "../../../db/0007_erasure_and_import_uploads.sql" with { type: "text" };
import m0008 from "../../../db/0008_admin_sign_in_attempts.sql" with { type: "text" };
import m0009 from "../../../db/0009_sync_in.sql" with { type: "text" };
import m0010 from "../../../db/0010_change_log.sql" with { type: "text" };
import m0011 from "../../../db/0011_duplicates_and_merges.sql" with { type: "text" };
import m0012 from "../../../db/0012_import_rejected_rows.sql" with { type: "text" };
import m0013 from "../../../db/0013_console_indexes.sql" with { type: "text" };
import m0014 from "../../../db/0014_search_folding.sql" with { type: "text" };
import m0015 from "../../../db/0015_search_term_bits.sql" with { type: "text" };
import m0016 from "../../../db/0016_search_term_bits_second_hash.sql" with { type: "text" };
import m0017 from "../../../db/0017_search_pair_terms.sql" with { type: "text" };

import type { SqliteMigration } from "../migrations.ts";
import { pairTermsStepSqlite } from "../pair-terms-step.ts";
import { rebuildSearchSqlite } from "../search-rebuild.ts";
import { FIRST_TERM_BITS, SECOND_TERM_BITS, termBitsStepSqlite } from "../term-bits-step.ts";

export type { SqliteMigration as Migration } from "../migrations.ts";

export const migrations: readonly SqliteMigration[] = [
  { name: "0001_init", sql: m0001 },
  { name: "0002_webhooks", sql: m0002 },
  { name: "0003_forms", sql: m0003 },
  { name: "0004_order_keys_and_delivery_status", sql: m0004 },
  { name: "0005_deliveries_due_by_subscription", sql: m0005 },
  { name: "0006_admin_console", sql: m0006 },
  { name: "0007_erasure_and_import_uploads", sql: m0007 },
  { name: "0008_admin_sign_in_attempts", sql: m0008 },
  { name: "0009_sync_in", sql: m0009 },
  { name: "0010_change_log", sql: m0010 },
  { name: "0011_duplicates_and_merges", sql: m0011 },
  { name: "0012_import_rejected_rows", sql: m0012 },
  { name: "0013_console_indexes", sql: m0013 },
  { name: "0014_search_folding", sql: m0014, after: (raw) => void rebuildSearchSqlite(raw) },
  { name: "0015_search_term_bits", sql: m0015, after: (raw) => void termBitsStepSqlite(raw, FIRST_TERM_BITS) },
  { name: "0016_search_term_bits_second_hash", sql: m0016, after: (raw) => void termBitsStepSqlite(raw, SECOND_TERM_BITS) },
  { name: "0017_search_pair_terms", sql: m0017, after: (raw) => void pairTermsStepSqlite(raw) },
];
