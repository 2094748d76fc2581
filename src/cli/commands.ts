import { DEFAULT_BATCH_ITEMS_PER_HOUR, DEFAULT_CONTACT_CREATES_PER_HOUR, DEFAULT_REQUESTS_PER_MINUTE } from "../projects/limits.ts";
import { SCOPES } from "../auth/scopes.ts";
import { configSchema } from "../config.ts";
import { CUSTOM_FIELD_TYPES, TYPES_WITH_OPTIONS } from "../reference/custom-fields.ts";
import { CATEGORIES } from "../reference/schemas.ts";

/** An option: `--name VALUE` (string) or a flag (boolean). `arg` names the value in usage lines. */
export type OptionSpec =
  | { readonly type: "string"; readonly arg: string; readonly description: string; readonly required?: true }
  | { readonly type: "boolean"; readonly description: string };

/** A positional argument; every one declared is required. */
export interface ArgSpec {
  readonly name: string;
  readonly description: string;
}

export interface CommandSpec {
  /** One line for the command list. */
  readonly summary: string;
  readonly args?: readonly ArgSpec[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Lines shown after the options in the command's help. */
  readonly notes?: readonly string[];
  /** The usage line when `args` cannot say it (optional arguments). */
  readonly usage?: string;
}

const json = { type: "boolean", description: "print one JSON object on stdout instead of text" } as const;

const limits = {
  "contact-quota": { type: "string", arg: "N", description: "most contacts the project may hold (default: no limit)" },
  "rate-limit-per-minute": { type: "string", arg: "N", description: `requests per minute per key (default ${DEFAULT_REQUESTS_PER_MINUTE})` },
  "contact-creates-per-hour": { type: "string", arg: "N", description: `POST /contacts per hour per key (default ${DEFAULT_CONTACT_CREATES_PER_HOUR})` },
  "batch-items-per-hour": {
    type: "string",
    arg: "N",
    description: `items of batch writes per hour per key, both batch routes together (default ${DEFAULT_BATCH_ITEMS_PER_HOUR})`,
  },
} as const;

const project = { type: "string", arg: "ID", description: "the project (prj_…)", required: true } as const;

/**
 * Every command of the CLI with its arguments and options (docs/cli.md §4, §2): the one
 * table the parser (args.ts `parseCommandLine`) and the help text (help.ts) both read, so
 * help lists exactly what the parser accepts. A name with a space is a subcommand of a
 * group (`key create`). `--help`/`-h` is accepted by every command and added by the parser.
 */
export const COMMANDS = {
  serve: {
    summary: "start the HTTP server",
    options: {},
    notes: [`Settings come from the environment: ${Object.keys(configSchema.shape).join(", ")} (README, Configuration).`],
  },
  healthcheck: {
    summary: "exit 0 when the server at HOST:PORT answers /healthz, 1 otherwise",
    options: {},
  },
  version: { summary: "print the version (also crm --version)", options: {} },
  help: {
    summary: "list a command's options (also crm COMMAND --help)",
    usage: "crm help [COMMAND]",
    options: {},
  },
  "project create": {
    summary: "create a project",
    options: { name: { type: "string", arg: "N", description: "the project's name", required: true }, ...limits, json },
  },
  "project update": {
    summary: "change a project's name or limits",
    args: [{ name: "ID", description: "the project (prj_…)" }],
    options: { name: { type: "string", arg: "N", description: "a new name" }, ...limits, json },
  },
  "project list": { summary: "list the projects", options: { json } },
  "key create": {
    summary: "create an API key with the scopes given; the key is printed once",
    options: {
      project,
      scopes: { type: "string", arg: "a,b", description: `comma-separated scopes: ${SCOPES.join(", ")}`, required: true },
      name: { type: "string", arg: "N", description: "a name to recognise the key by" },
      "expires-at": { type: "string", arg: "ISO", description: "ISO 8601 time from which the key is refused" },
      json,
    },
  },
  "key revoke": {
    summary: "revoke an API key (it answers 401 from then on)",
    args: [{ name: "ID", description: "the key (key_…)" }],
    options: { json },
  },
  "key list": {
    summary: "list the API keys (never the keys themselves)",
    options: { project: { type: "string", arg: "ID", description: "only this project's keys" }, json },
  },
  "contact-type create": {
    summary: "create a contact type",
    options: {
      project,
      category: { type: "string", arg: "C", description: `one of ${CATEGORIES.join(", ")}`, required: true },
      name: { type: "string", arg: "N", description: "the type's name (default: the category)" },
      default: { type: "boolean", description: "make it the project's default contact type" },
      json,
    },
  },
  "interaction-type create": {
    summary: "create an interaction type",
    options: { project, name: { type: "string", arg: "N", description: "the type's name", required: true }, json },
  },
  "custom-field create": {
    summary: "create a custom field",
    options: {
      project,
      title: { type: "string", arg: "T", description: "the field's title, unique in the project", required: true },
      type: { type: "string", arg: "TYPE", description: `one of ${CUSTOM_FIELD_TYPES.join(", ")}`, required: true },
      options: { type: "string", arg: "a,b", description: `the choices, required for ${TYPES_WITH_OPTIONS.join(", ")}` },
      unique: { type: "boolean", description: "no two contacts may share a value; the field can be an upsert's matchOn (type text only)" },
      json,
    },
  },
  "form create": {
    summary: "create a web form (page at /f/ID)",
    options: {
      project,
      name: { type: "string", arg: "N", description: "the form's name (1–255 characters)", required: true },
      fields: {
        type: "string",
        arg: "a,b",
        description: "contact fields (email, firstName, address.city, …) or custom-field ids or titles",
        required: true,
      },
      "redirect-url": { type: "string", arg: "URL", description: "where the page sends the visitor after a submission" },
      json,
    },
  },
  "form list": {
    summary: "list the web forms",
    options: { project: { type: "string", arg: "ID", description: "only this project's forms" }, json },
  },
  import: {
    summary: "create contacts from a CSV file (other CRMs' exports too)",
    args: [{ name: "FILE.csv", description: "header row: field names or their aliases (First Name, E-mail Address, …), custom fields by id or title" }],
    options: {
      project,
      map: { type: "string", arg: "\"Header=field,…\"", description: "the field of a column, when its header is not a known name" },
      "ignore-unknown": { type: "boolean", description: "skip columns that match no field (the summary lists them) instead of refusing the file" },
      "dry-run": { type: "boolean", description: "check every row and report, writing nothing" },
      json,
    },
    notes: ["Headers are matched ignoring case, spaces, _, - and . (docs/import-export.md lists the aliases)."],
  },
  export: {
    summary: "write every contact of a project, in contact-number order, as CSV or JSON lines",
    options: {
      project,
      format: { type: "string", arg: "csv|jsonl", description: "csv (default; re-imports with crm import) or jsonl (one contact per line, as the API answers)" },
      output: { type: "string", arg: "FILE", description: "write to FILE instead of stdout (it is replaced only once the export is whole)" },
      raw: { type: "boolean", description: "CSV cells exactly as stored: no ' before a leading =, +, -, @, tab or CR (jsonl is always exact)" },
    },
    notes: [
      "CSV cells that start with =, +, -, @, tab or CR get a leading ' so a spreadsheet shows them as text, not formulas;",
      "crm import takes that ' off again. --raw writes the exact cells (for scripts and exact copies, not for spreadsheets).",
    ],
  },
  "contact erase": {
    summary: "erase a contact: its data, logs, tags and search terms, and its data in stored events (no undo)",
    args: [{ name: "CR-n", description: "the contact" }],
    options: { project, json },
    notes: ["The contactId then answers 404 and its number is never given again. No webhook event fires."],
  },
  "admin create": {
    summary: "create an admin account of the console (/admin); the password is read from stdin",
    options: { email: { type: "string", arg: "E", description: "the admin's email, used to sign in", required: true }, json },
    notes: ["The password (12 characters or more) is the first line of standard input: echo \"$PASSWORD\" | crm admin create --email E"],
  },
  "admin list": { summary: "list the admin accounts", options: { json } },
  "admin delete": {
    summary: "delete an admin account and end its sessions",
    args: [{ name: "ID", description: "the admin (adm_…)" }],
    options: { json },
  },
  "admin set-password": {
    summary: "set an admin's password from stdin and end its sessions",
    options: { email: { type: "string", arg: "E", description: "the admin's email", required: true }, json },
  },
  backup: {
    summary: "consistent copy of the live SQLite database (never overwrites)",
    args: [{ name: "FILE", description: "where the copy is written" }],
    options: { json },
  },
  "copy-to-postgres": {
    summary: "copy the SQLite database (CRM_DB_PATH) into an empty PostgreSQL database",
    args: [{ name: "URL", description: "the target, postgres://user:password@host:5432/database" }],
    options: { json },
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

/** What the parser hands a command: its options (required ones present) and positional arguments. */
export interface Input<N extends CommandName> {
  values: Values<(typeof COMMANDS)[N]["options"]>;
  args: string[];
}

type ValueOf<O> = O extends { type: "boolean" } ? boolean | undefined : O extends { required: true } ? string : string | undefined;
export type Values<O> = { -readonly [K in keyof O]: ValueOf<O[K]> };

/** `key create` → `key`; `serve` → `serve`. */
export const groupOf = (name: string) => name.split(" ")[0]!;

/** Top-level words in table order: serve, healthcheck, …, project, key, … */
export const TOP_LEVEL: readonly string[] = [...new Set(Object.keys(COMMANDS).map(groupOf))];

/** The subcommands of a group (`key` → create, revoke, list); empty for a plain command. */
export function subcommands(group: string): string[] {
  return Object.keys(COMMANDS)
    .filter((n) => n.startsWith(`${group} `))
    .map((n) => n.slice(group.length + 1));
}

export const isCommand = (name: string): name is CommandName => Object.hasOwn(COMMANDS, name);
