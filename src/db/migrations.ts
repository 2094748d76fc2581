// Migrations are plain SQL files in db/, embedded at build time so the compiled binary
// carries them (decisions §1). Append new files here in order; never edit an applied one.
import m0001 from "../../db/0001_init.sql" with { type: "text" };
import m0002 from "../../db/0002_webhooks.sql" with { type: "text" };
import m0003 from "../../db/0003_forms.sql" with { type: "text" };

export const migrations: ReadonlyArray<{ name: string; sql: string }> = [
  { name: "0001_init", sql: m0001 },
  { name: "0002_webhooks", sql: m0002 },
  { name: "0003_forms", sql: m0003 },
];
