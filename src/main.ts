import pkg from "../package.json" with { type: "json" };
import { parseCommandLine, UsageError } from "./cli/args.ts";
import { adminCreate, adminDelete, adminList, adminSetPassword } from "./cli/admin.ts";
import { backupCommand } from "./cli/backup.ts";
import type { CommandName, Input } from "./cli/commands.ts";
import { contactErase } from "./cli/contact-erase.ts";
import { copyToPostgresCommand } from "./cli/copy-to-postgres.ts";
import { exportCommand } from "./cli/export.ts";
import { formCreate, formList } from "./cli/forms.ts";
import { healthcheckCommand } from "./cli/healthcheck.ts";
import { helpText, overallUsage } from "./cli/help.ts";
import { importCommand } from "./cli/import.ts";
import { keyCreate, keyList, keyRevoke } from "./cli/keys.ts";
import { projectCreate, projectList, projectUpdate } from "./cli/projects.ts";
import { contactTypeCreate, customFieldCreate, interactionTypeCreate } from "./cli/reference.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { openStorage, type Storage } from "./storage/index.ts";
import { UnitOfWork } from "./storage/unit-of-work.ts";
import { runtime } from "./runtime/index.ts";
import { serve } from "./server.ts";

/** The commands that run with the configuration (help and version need none). */
type Runnable = Exclude<CommandName, "help" | "version">;
/** Runs a command; its exit code (void: 0; negative: keep running, the server). */
type Run<N extends Runnable> = (input: Input<N>, config: Config) => Promise<number | void>;

/** The admin CLI works on the backend the server uses (docs/scaling.md §6): the same variables. */
function onStorage<N extends Runnable>(run: (storage: Storage, input: Input<N>, config: Config) => Promise<void>): Run<N> {
  return async (input, config) => {
    const storage = await openStorage(config);
    try {
      await run(storage, input, config);
    } finally {
      await storage.close();
    }
  };
}

/** A command's unit of work over its own storage: it writes the way the server does (src/storage/unit-of-work.ts). */
const unitsOf = (storage: Storage) => new UnitOfWork(storage.newWriteQueue());

/** Every command of the table (src/cli/commands.ts) and what runs it; the compiler checks none is missing. */
const RUN: { [N in Runnable]: Run<N> } = {
  serve: async (_, config) => {
    await serve(config);
    return -1;
  },
  healthcheck: (_, config) => healthcheckCommand(config),
  // Its source is the SQLite file even when CRM_DATABASE_URL is set (docs/scaling.md §6).
  "copy-to-postgres": (input, config) => copyToPostgresCommand(config, input),
  "project create": onStorage((s, input) => projectCreate(unitsOf(s), input)),
  "project update": onStorage((s, input) => projectUpdate(s.db, unitsOf(s), input)),
  "project list": onStorage((s, input) => projectList(s.db, input)),
  "key create": onStorage((s, input, config) => keyCreate(s.db, unitsOf(s), config, input)),
  "key revoke": onStorage((s, input) => keyRevoke(unitsOf(s), input)),
  "key list": onStorage((s, input) => keyList(s.db, input)),
  "contact-type create": onStorage((s, input) => contactTypeCreate(s.db, unitsOf(s), input)),
  "interaction-type create": onStorage((s, input) => interactionTypeCreate(s.db, unitsOf(s), input)),
  "custom-field create": onStorage((s, input) => customFieldCreate(s.db, unitsOf(s), input)),
  "form create": onStorage((s, input) => formCreate(s.db, unitsOf(s), input)),
  "form list": onStorage((s, input) => formList(s.db, input)),
  import: onStorage((s, input) => importCommand(s.db, unitsOf(s), input)),
  export: onStorage((s, input) => exportCommand(s.db, input)),
  "contact erase": onStorage((s, input, config) => contactErase(s.db, unitsOf(s), config, input)),
  backup: onStorage((s, input) => backupCommand(s, input)),
  "admin create": onStorage((s, input) => adminCreate(unitsOf(s), input)),
  "admin list": onStorage((s, input) => adminList(s.db, input)),
  "admin delete": onStorage((s, input) => adminDelete(unitsOf(s), input)),
  "admin set-password": onStorage((s, input) => adminSetPassword(unitsOf(s), input)),
};

/**
 * One entry point, server and admin CLI (docs/operations.md §1, docs/cli.md §4, §2). The command line is read
 * against the command table before anything else: help, the version and usage errors need
 * no configuration and touch no database.
 */
async function main(argv: string[]): Promise<number> {
  const invocation = parseCommandLine(argv);
  if (invocation.kind === "usage") {
    console.log(overallUsage());
    return 2;
  }
  if (invocation.kind === "help") {
    console.log(helpText(invocation.topic));
    return 0;
  }
  if (invocation.name === "version") {
    console.log(pkg.version);
    return 0;
  }
  const config = loadConfig(runtime.env());
  const run = RUN[invocation.name as Runnable] as Run<Runnable>;
  return (await run(invocation.input as Input<never>, config)) ?? 0;
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
