import { healthcheckCommand } from "./cli/healthcheck.ts";
import { importCommand } from "./cli/import.ts";
import { keyCommand } from "./cli/keys.ts";
import { projectCommand } from "./cli/projects.ts";
import { referenceCommand } from "./cli/reference.ts";
import { UsageError } from "./cli/args.ts";
import { backupCommand } from "./cli/backup.ts";
import { copyToPostgresCommand } from "./cli/copy-to-postgres.ts";
import { formCommand } from "./cli/forms.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openStorage } from "./db/storage.ts";
import { runtime } from "./runtime/index.ts";
import { serve } from "./server.ts";

const USAGE = `usage: crm <command>
  serve                                   start the HTTP server
  healthcheck                             exit 0 when the server at HOST:PORT answers /healthz
  project create|update ID|list           manage projects
  key create|revoke ID|list               manage API keys
  contact-type create --project ID --category C [--name N]
  interaction-type create --project ID --name N
  custom-field create --project ID --title T --type TYPE [--options a,b]
  form create --project ID --name N --fields email,firstName,... [--redirect-url URL] | list
  import FILE.csv --project ID [--dry-run] create contacts from a CSV file
  backup FILE                             consistent copy of the live database
  copy-to-postgres URL                    copy the SQLite database (CRM_DB_PATH) into an empty PostgreSQL database
Add --json for one JSON object on stdout.`;

/** One entry point, server and admin CLI (decisions §1, §3). */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help") {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const config = loadConfig(runtime.env());
  if (command === "serve") {
    await serve(config);
    return -1;
  }
  if (command === "healthcheck") return healthcheckCommand(config);
  // Its source is the SQLite file even when CRM_DATABASE_URL is set (decisions §13).
  if (command === "copy-to-postgres") return copyToPostgresCommand(config, rest);
  // The admin CLI works on the backend the server uses (decisions §13): the same variables.
  const storage = await openStorage(config);
  try {
    if (command === "project") await projectCommand(storage.db, rest);
    else if (command === "key") await keyCommand(storage.db, config, rest);
    else if (["contact-type", "interaction-type", "custom-field"].includes(command)) await referenceCommand(storage.db, command, rest);
    else if (command === "import") await importCommand(storage.db, rest);
    else if (command === "form") await formCommand(storage.db, rest);
    else if (command === "backup") await backupCommand(storage, rest);
    else throw new UsageError(`unknown command ${command}\n${USAGE}`);
    return 0;
  } finally {
    await storage.close();
  }
}

try {
  const code = await main(runtime.args());
  if (code >= 0) runtime.exit(code);
} catch (error) {
  if (error instanceof ConfigError || error instanceof UsageError) {
    console.error(`crm: ${error.message}`);
    runtime.exit(2);
  }
  throw error;
}
