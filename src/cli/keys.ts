import type { Kysely } from "kysely";
import { createApiKey, listApiKeys, revokeApiKey } from "../auth/keys.ts";
import { parseScopes } from "../auth/scopes.ts";
import type { Config } from "../config.ts";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow, toIso } from "../lib/time.ts";
import { findProject } from "../projects/service.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/** `crm key create` (docs/cli.md §4); the key itself is printed once, here. */
export async function keyCreate(db: Kysely<Database>, writes: UnitOfWork, config: Config, { values }: Input<"key create">): Promise<void> {
  const projectId = values.project;
  if (!(await findProject(db, projectId))) throw new UsageError(`no project ${projectId}`);
  const scopes = parseScopes(values.scopes);
  if (!scopes) throw new UsageError("--scopes takes a comma-separated list of contacts:read, contacts:write, interactions:write, webhooks:manage");
  let expiresAt: string | null = null;
  if (values["expires-at"] !== undefined) {
    expiresAt = toIso(values["expires-at"]);
    if (!expiresAt) throw new UsageError("--expires-at must be an ISO 8601 time");
  }
  const input = { projectId, scopes, name: values.name ?? null, expiresAt, env: config.CRM_ENV, now: isoNow(systemClock) };
  const created = await writes.run(projectId, (trx) => createApiKey(trx, input));
  output(
    values.json,
    { ...created, projectId, scopes, name: values.name ?? null, expiresAt },
    `Created key ${created.id} for ${projectId} (${scopes.join(", ")}). Shown once:\n\n  ${created.key}\n`,
  );
}

/** `crm key revoke ID` (docs/cli.md §4). */
export async function keyRevoke(writes: UnitOfWork, { values, args }: Input<"key revoke">): Promise<void> {
  const id = args[0]!;
  if (!(await writes.run(null, (trx) => revokeApiKey(trx, id, isoNow(systemClock))))) throw new UsageError(`no key ${id}`);
  output(values.json, { id, revoked: true }, `Revoked key ${id}.`);
}

/** `crm key list [--project ID]` (docs/cli.md §4): ids and hints, never a key. */
export async function keyList(db: Kysely<Database>, { values }: Input<"key list">): Promise<void> {
  const data = await listApiKeys(db, values.project);
  const lines = data.map((k) => `${k.id}  ${k.projectId}  ${k.hint}  ${k.scopes.join(",")}${k.revokedAt ? "  revoked" : ""}`);
  output(values.json, { data }, lines.join("\n") || "No keys.");
}
