import type { Kysely } from "kysely";
import { AccountError, createAdmin, deleteAdmin, listAdmins, setAdminPassword } from "../admin/accounts.ts";
import type { Database } from "../storage/schema.ts";
import type { UnitOfWork } from "../storage/unit-of-work.ts";
import { systemClock } from "../lib/clock.ts";
import { isoNow } from "../lib/time.ts";
import { runtime } from "../runtime/index.ts";
import { output, UsageError } from "./args.ts";
import type { Input } from "./commands.ts";

/** The password comes from standard input (docs/admin.md §2), never from the command line, where `ps` and shell history would keep it. */
async function readPassword(): Promise<string> {
  if (runtime.isTerminal()) runtime.writeStderr("Password (12 characters or more), then Enter: ");
  return runtime.readStdinLine();
}

const asUsage = (error: unknown): never => {
  if (error instanceof AccountError) throw new UsageError(error.message.replace(/\.$/, ""));
  throw error;
};

/** `crm admin create --email E [--json]` (docs/admin.md §3). */
export async function adminCreate(writes: UnitOfWork, { values }: Input<"admin create">): Promise<void> {
  const password = await readPassword();
  const admin = await writes.run(null, (trx) => createAdmin(trx, values.email, password, isoNow(systemClock))).catch(asUsage);
  output(values.json, { id: admin.id, email: admin.email }, `Created admin ${admin.email} (${admin.id}).`);
}

/** `crm admin list [--json]`: ids and emails, never a hash. */
export async function adminList(db: Kysely<Database>, { values }: Input<"admin list">): Promise<void> {
  const admins = await listAdmins(db);
  output(values.json, { data: admins }, admins.map((a) => `${a.id}  ${a.email}  created ${a.createdAt}`).join("\n") || "No admins.");
}

/** `crm admin delete ID`: the account and its sessions. */
export async function adminDelete(writes: UnitOfWork, { values, args }: Input<"admin delete">): Promise<void> {
  const id = args[0]!;
  if (!(await writes.run(null, (trx) => deleteAdmin(trx, id)))) throw new UsageError(`no admin ${id}`);
  output(values.json, { id, deleted: true }, `Deleted admin ${id}; its sessions are ended.`);
}

/** `crm admin set-password --email E`: a new password from stdin; the account's sessions end. */
export async function adminSetPassword(writes: UnitOfWork, { values }: Input<"admin set-password">): Promise<void> {
  const password = await readPassword();
  const admin = await writes.run(null, (trx) => setAdminPassword(trx, values.email, password, isoNow(systemClock))).catch(asUsage);
  if (!admin) throw new UsageError(`no admin with the email ${values.email}`);
  output(values.json, { id: admin.id, email: admin.email }, `Set the password of ${admin.email} (${admin.id}); its sessions are ended.`);
}
