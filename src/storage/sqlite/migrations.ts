// Migrations are plain SQL files in db/, embedded at build time so the compiled binary
// carries them (decisions §1). Append new files here in order; never edit an applied one:
// its checksum is recorded and checked at every start (src/storage/sqlite/migrate.ts).
import m0001 from "../../../db/0001_init.sql" with { type: "text" };
import m0002 from "../../../db/0002_webhooks.sql" with { type: "text" };
import m0003 from "../../../db/0003_forms.sql" with { type: "text" };
import m0004 from "../../../db/0004_order_keys_and_delivery_status.sql" with { type: "text" };
import m0005 from "../../../db/0005_deliveries_due_by_subscription.sql" with { type: "text" };
import m0006 from "../../../db/0006_admin_console.sql" with { type: "text" };
import m0007 from "../../../db/0007_erasure_and_import_uploads.sql" with { type: "text" };
import m0008 from "../../../db/0008_admin_sign_in_attempts.sql" with { type: "text" };
import pg0001 from "../../../db/postgres/0001_init.sql" with { type: "text" };
import pg0002 from "../../../db/postgres/0002_admin_console.sql" with { type: "text" };
import pg0003 from "../../../db/postgres/0003_erasure_and_import_uploads.sql" with { type: "text" };
import pg0004 from "../../../db/postgres/0004_admin_sign_in_attempts.sql" with { type: "text" };

/** One migration: its file name without `.sql`, and its text (checksummed when applied). */
export interface Migration {
  name: string;
  sql: string;
}

export const migrations: readonly Migration[] = [
  { name: "0001_init", sql: m0001 },
  { name: "0002_webhooks", sql: m0002 },
  { name: "0003_forms", sql: m0003 },
  { name: "0004_order_keys_and_delivery_status", sql: m0004 },
  { name: "0005_deliveries_due_by_subscription", sql: m0005 },
  { name: "0006_admin_console", sql: m0006 },
  { name: "0007_erasure_and_import_uploads", sql: m0007 },
  { name: "0008_admin_sign_in_attempts", sql: m0008 },
];

/**
 * PostgreSQL's own files (db/postgres/): one schema equal to the SQLite files' end state,
 * then its own steps. Applied and checked the same way, under an advisory lock
 * (src/storage/postgres/migrate.ts).
 */
export const postgresMigrations: readonly Migration[] = [
  { name: "0001_init", sql: pg0001 },
  { name: "0002_admin_console", sql: pg0002 },
  { name: "0003_erasure_and_import_uploads", sql: pg0003 },
  { name: "0004_admin_sign_in_attempts", sql: pg0004 },
];
