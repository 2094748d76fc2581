import { createApiKey } from "./auth/keys.ts";
import { SCOPES } from "./auth/scopes.ts";
import type { Config } from "./config.ts";
import type { Database } from "./storage/schema.ts";
import type { Kysely } from "kysely";
import { createProject } from "./projects/service.ts";
import { lockUntilCommit } from "./storage/query.ts";

/**
 * First start on an empty database (decisions §3): project `default` with its reference
 * data and one all-scope key, printed once. Returns the key, or null when nothing was done.
 */
export async function bootstrap(db: Kysely<Database>, config: Config): Promise<{ projectId: string; key: string } | null> {
  if (!config.CRM_BOOTSTRAP) return null;
  return db.transaction().execute(async (trx) => {
    // Nodes starting together on an empty PostgreSQL database: one creates, the others
    // wait here, then see its project (decisions §13: the bootstrap happens once).
    await lockUntilCommit(trx, "crm:bootstrap");
    const existing = await trx.selectFrom("projects").select("id").limit(1).executeTakeFirst();
    if (existing) return null;
    const project = await createProject(trx, "default");
    const { key } = await createApiKey(trx, {
      projectId: project.id,
      scopes: [...SCOPES],
      name: "bootstrap",
      env: config.CRM_ENV,
    });
    return { projectId: project.id, key };
  });
}
