import type { Kysely } from "kysely";
import { eraseContact, type Erasure } from "../contacts/erase.ts";
import { parseContactId } from "../contacts/service.ts";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { ApiError } from "../errors.ts";
import type { Config } from "../config.ts";
import type { Sealer } from "../events/scrub.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";
import { findProject } from "../projects/service.ts";
import { runtime } from "../runtime/index.ts";
import { checkSecretKey, existingSecretBox } from "../secrets/secret-box.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/**
 * `crm contact erase --project ID CR-n [--json]` (docs/import-export.md §3): one unit of work of its own;
 * prints what was removed. Then the freed space leaves the database's files (docs/security.md §7);
 * when it cannot yet (a reader kept the SQLite log from being checkpointed), a warning goes
 * to stderr and the exit is still 0: the erase is committed (docs/import-export.md).
 */
export async function contactErase(db: Kysely<Database>, writes: UnitOfWork, config: Config, { values, args }: Input<"contact erase">): Promise<void> {
  const projectId = values.project;
  const contactId = args[0]!;
  if (!(await findProject(db, projectId))) throw new UsageError(`no project ${projectId}`);
  const n = parseContactId(contactId);
  if (n === null) throw new UsageError(`${contactId} is not a contactId (CR-n)`);
  const secrets = await serverKey(db, config);
  let erasure: Erasure;
  try {
    erasure = await eraseContact(db, projectId, n, {
      writes,
      now: isoNow(systemClock),
      secrets,
      warn: (message) => runtime.writeStderr(`crm: warning: ${message}\n`),
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw new UsageError(`no contact ${contactId} in ${projectId}`);
    throw error;
  }
  output(values.json, erasure, describe(erasure));
}

/**
 * The server's key (CRM_SECRET_KEY, or secret.key beside CRM_DB_PATH), checked against the
 * database: stored idempotent answers are sealed with it, and the erase rewrites them.
 */
async function serverKey(db: Kysely<Database>, config: Config): Promise<Sealer> {
  const secrets = existingSecretBox(config.CRM_SECRET_KEY, config.CRM_DB_PATH);
  if (secrets) {
    await checkSecretKey(db, secrets);
    return secrets;
  }
  const missing = () => {
    throw new UsageError("stored answers of this database are sealed with the server key: set CRM_SECRET_KEY as the server has it");
  };
  return { open: missing, seal: missing };
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function describe(e: Erasure): string {
  const { removed: r, scrubbed: s } = e;
  return [
    `Erased ${e.contactId} from ${e.projectId}. Its number is never given again; no webhook event was sent.`,
    `  deleted: the contact, ${plural(r.interactionLogs, "interaction log")}, ${plural(r.tagLinks, "tag link")}, ` +
      `${plural(r.searchTerms, "search term")}, ${plural(r.formSubmissions, "form submission")}`,
    `  personal data removed from: ${plural(s.events, "stored event")} (${plural(s.pendingDeliveries, "pending delivery", "pending deliveries")} ` +
      `will send the scrubbed body), ${plural(s.idempotentAnswers, "stored idempotent answer")}, ${plural(s.deliveryResponses, "stored receiver response")}`,
    "  not reached: webhook receivers that already received it, and backups or replicas until they roll over (docs/import-export.md).",
  ].join("\n");
}
