import { createApiKey } from "./auth/keys.ts";
import { SCOPES } from "./auth/scopes.ts";
import type { Config } from "./config.ts";
import type { UnitOfWork } from "./storage/unit-of-work.ts";
import { createProject } from "./projects/service.ts";
import { lockUntilCommit } from "./storage/query.ts";

/**
 * First start on an empty database (docs/cli.md §3.1): project `default` with its reference
 * data and one all-scope key, printed once, created at `now` (the service's clock). Returns
 * the key, or null when nothing was done.
 */
export async function bootstrap(writes: UnitOfWork, config: Config, now: string): Promise<{ projectId: string; key: string } | null> {
  if (!config.CRM_BOOTSTRAP) return null;
  return writes.run(null, async (trx) => {
    // Nodes starting together on an empty PostgreSQL database: one creates, the others
    // wait here, then see its project (docs/scaling.md §6: the bootstrap happens once).
    await lockUntilCommit(trx, "crm:bootstrap");
    const existing = await trx.selectFrom("projects").select("id").limit(1).executeTakeFirst();
    if (existing) return null;
    const project = await createProject(trx, "default", now);
    const { key } = await createApiKey(trx, {
      projectId: project.id,
      scopes: [...SCOPES],
      name: "bootstrap",
      env: config.CRM_ENV,
      now,
    });
    return { projectId: project.id, key };
  });
}
