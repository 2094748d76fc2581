/**
 * The CLI's own surface (docs/cli.md §4, §2), through the real `crm`: `--version`, help for
 * every command listing every option it accepts, and usage errors that name what is valid
 * (one stderr line `crm: …`, exit 2). The commands and options are read from the table the
 * parser and the help both use (src/cli/commands.ts); a few are also named by hand below, so
 * an option dropped from the table is caught too. Usage errors are raised before the
 * configuration is read or a database is opened: none of them creates a database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { COMMANDS, type CommandName, type CommandSpec } from "../../src/cli/commands.ts";
import { ADMIN_PASSWORD, createAdminAccount } from "../helpers/admin.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { BUN, runCommand, type CommandResult } from "../helpers/spawn.ts";

const NAMES = Object.keys(COMMANDS) as CommandName[];
const TOP_LEVEL = [...new Set(NAMES.map((n) => n.split(" ")[0]!))];
const GROUPS = TOP_LEVEL.filter((word) => NAMES.some((n) => n.startsWith(`${word} `)));

/** The options a command's table row lists, as typed (`--project`), and --help. */
const optionsOf = (name: CommandName) => [...Object.keys(COMMANDS[name].options).map((f) => `--${f}`), "--help"];

let dir: string;
/** An environment whose database folder must never appear (help and usage errors open nothing). */
let env: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "crm-cli-help-"));
  env = { ...(process.env as Record<string, string>), CRM_DB_PATH: join(dir, "data", "crm.db"), CRM_DATABASE_URL: "" };
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const crm = (args: string[]) => runCommand([BUN, "src/main.ts", ...args], { env, allowFail: true, timeoutMs: 20_000 });

/** Exit 2, one stderr line starting `crm: `, nothing on stdout, no database made. */
function expectUsageError(r: CommandResult): string {
  expect(r.exitCode).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr.endsWith("\n")).toBe(true);
  const lines = r.stderr.slice(0, -1).split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toStartWith("crm: ");
  expect(existsSync(join(dir, "data"))).toBe(false);
  return lines[0]!;
}

/** The options a help text lists: the first `--flag` of each line of its "options:" section. */
function listedOptions(help: string): string[] {
  const section = help.trimEnd().split("\noptions:\n")[1]!.split("\n\n")[0]!;
  return section.split("\n").map((line) => line.match(/--[a-z-]+/)![0]);
}

describe("crm --version", () => {
  test("crm --version and crm version print package.json's version and exit 0", async () => {
    for (const args of [["--version"], ["version"]]) {
      const r = await crm(args);
      expect({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }).toEqual({ exitCode: 0, stdout: `${pkg.version}\n`, stderr: "" });
    }
    expect(pkg.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("crm help", () => {
  test("crm help, crm --help and crm -h print the usage naming every command and exit 0; crm alone prints it and exits 2", async () => {
    const texts: string[] = [];
    for (const r of await Promise.all([["help"], ["--help"], ["-h"]].map(crm))) {
      expect(r.exitCode).toBe(0);
      expect(r.stderr).toBe("");
      texts.push(r.stdout);
    }
    expect(new Set(texts).size).toBe(1);
    for (const name of NAMES) expect(texts[0]).toContain(`  ${name}`);
    expect(texts[0]).toContain("crm help COMMAND");
    const bare = await crm([]);
    expect({ exitCode: bare.exitCode, stdout: bare.stdout }).toEqual({ exitCode: 2, stdout: texts[0]! });
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  test.each(NAMES)("crm help %s (also COMMAND --help and -h) lists exactly the options the parser accepts, each with a description, and exits 0", async (name) => {
    const words = name.split(" ");
    const runs = [["help", ...words], [...words, "--help"], [...words, "-h"]];
    const outputs: string[] = [];
    for (const [i, r] of (await Promise.all(runs.map(crm))).entries()) {
      expect(r.exitCode, `crm ${runs[i]!.join(" ")}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe("");
      outputs.push(r.stdout);
    }
    expect(new Set(outputs).size).toBe(1);
    const help = outputs[0]!;
    expect(help).toStartWith(`usage: crm ${name}`);
    expect(listedOptions(help)).toEqual(optionsOf(name));
    // Each option on its own line with a description after it.
    for (const line of help.trimEnd().split("\noptions:\n")[1]!.split("\n\n")[0]!.split("\n")) expect(line).toMatch(/^ {2}\S.*\S {2,}\S/);
    for (const arg of (COMMANDS[name] as CommandSpec).args ?? []) expect(help).toContain(`  ${arg.name}`);
    expect(existsSync(join(dir, "data"))).toBe(false);
  });

  test("options named by hand: the ones the admin commands document are in their help", async () => {
    const expected: Record<string, string[]> = {
      "project create": ["--name", "--contact-quota", "--rate-limit-per-minute", "--contact-creates-per-hour", "--batch-items-per-hour", "--json"],
      "project update": ["--name", "--contact-quota", "--rate-limit-per-minute", "--contact-creates-per-hour", "--batch-items-per-hour", "--json"],
      "key create": ["--project", "--scopes", "--name", "--expires-at", "--json"],
      "key list": ["--project", "--json"],
      "contact-type create": ["--project", "--category", "--name", "--default", "--json"],
      "interaction-type create": ["--project", "--name", "--json"],
      "custom-field create": ["--project", "--title", "--type", "--options", "--unique", "--json"],
      "form create": ["--project", "--name", "--fields", "--redirect-url", "--json"],
      import: ["--project", "--dry-run", "--json"],
      backup: ["--json"],
      "copy-to-postgres": ["--json"],
    };
    for (const [name, flags] of Object.entries(expected)) {
      const r = await crm(["help", ...name.split(" ")]);
      expect(r.exitCode).toBe(0);
      const listed = listedOptions(r.stdout);
      for (const flag of flags) expect(listed, `crm help ${name}`).toContain(flag);
    }
  });

  test.each(GROUPS)("crm help %s (also GROUP --help) lists every command of the group with its options, exit 0", async (group) => {
    const a = await crm(["help", group]);
    const b = await crm([group, "--help"]);
    expect({ a: a.exitCode, b: b.exitCode }).toEqual({ a: 0, b: 0 });
    expect(a.stdout).toBe(b.stdout);
    for (const name of NAMES.filter((n) => n.startsWith(`${group} `))) {
      expect(a.stdout).toContain(`usage: crm ${name}`);
      for (const flag of optionsOf(name)) expect(a.stdout).toContain(flag);
    }
  });
});

describe("usage errors name what is valid", () => {
  test('an unknown command: exit 2, one line `crm: unknown command "foo"; commands are …` naming every command', async () => {
    const line = expectUsageError(await crm(["foo"]));
    expect(line).toBe(`crm: unknown command "foo"; commands are ${TOP_LEVEL.join(", ")}`);
  });

  test("a command one typo away is suggested", async () => {
    expect(expectUsageError(await crm(["prject", "list"]))).toStartWith('crm: unknown command "prject" (did you mean "project"?); commands are serve,');
    expect(expectUsageError(await crm(["sevre"]))).toContain('(did you mean "serve"?)');
    expect(expectUsageError(await crm(["key", "crate"]))).toBe('crm: unknown command "key crate" (did you mean "key create"?); key commands are create, revoke, list');
  });

  test("crm help of an unknown command is the same usage error", async () => {
    expect(expectUsageError(await crm(["help", "foo"]))).toStartWith('crm: unknown command "foo"; commands are ');
  });

  test.each(GROUPS)("crm %s without its command: exit 2, one line naming the group's commands", async (group) => {
    const subs = NAMES.filter((n) => n.startsWith(`${group} `)).map((n) => n.slice(group.length + 1));
    expect(expectUsageError(await crm([group]))).toBe(`crm: ${group} takes a command: ${subs.join(", ")} (crm help ${group} lists their options)`);
  });

  test.each(NAMES)("crm %s --bogus: exit 2, one line naming the command's options, no database opened", async (name) => {
    const line = expectUsageError(await crm([...name.split(" "), "--bogus"]));
    expect(line).toBe(`crm: unknown option --bogus for crm ${name}; its options are ${optionsOf(name).join(", ")}`);
  });

  test("an option one typo away is suggested; a short option is refused the same way", async () => {
    const line = expectUsageError(await crm(["key", "create", "--project", "prj_x", "--scope", "contacts:read"]));
    expect(line).toStartWith('crm: unknown option --scope for crm key create (did you mean "--scopes"?); its options are --project, --scopes, --name, --expires-at, --json, --help');
    expect(expectUsageError(await crm(["serve", "-p", "8080"]))).toBe("crm: unknown option -p for crm serve; its options are --help");
  });

  test("an option of another command is refused (key list takes no --scopes), and crm's own unknown options name --version and --help", async () => {
    expect(expectUsageError(await crm(["key", "list", "--scopes", "contacts:read"]))).toStartWith("crm: unknown option --scopes for crm key list;");
    expect(expectUsageError(await crm(["--verison"]))).toStartWith('crm: unknown option --verison (did you mean "--version"?);');
  });

  test("a missing required option or argument, a missing value, a value on a flag, an extra argument: exit 2, one line with the usage", async () => {
    expect(expectUsageError(await crm(["key", "create", "--scopes", "contacts:read"]))).toBe(
      "crm: --project is required; usage: crm key create --project ID --scopes a,b [--name N] [--expires-at ISO] [--json]",
    );
    expect(expectUsageError(await crm(["key", "revoke"]))).toBe("crm: ID is required; usage: crm key revoke ID [--json]");
    expect(expectUsageError(await crm(["key", "create", "--project"]))).toBe("crm: --project needs a value: --project ID");
    expect(expectUsageError(await crm(["project", "create", "--name", "--json"]))).toStartWith("crm: --name needs a value: --name N");
    expect(expectUsageError(await crm(["project", "list", "--json=yes"]))).toBe("crm: --json takes no value; usage: crm project list [--json]");
    expect(expectUsageError(await crm(["backup", "a.db", "b.db"]))).toBe('crm: unexpected argument "b.db"; usage: crm backup FILE [--json]');
  });
});

describe("every option the table lists is accepted and used", () => {
  let srv: ServerHandle;
  beforeAll(async () => {
    srv = await startServer();
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
  }, 60_000);

  /** A value for each option name of the table. */
  const VALUES: Record<string, string> = {
    name: "Full Options",
    "contact-quota": "100",
    "rate-limit-per-minute": "1000",
    "contact-creates-per-hour": "1000",
    "batch-items-per-hour": "1000",
    scopes: "contacts:read",
    "expires-at": "2999-01-01T00:00:00Z",
    category: "Lead",
    title: "Full Options Field",
    // text: the one type --unique (a flag, so always given here) allows; --options is accepted and not kept.
    type: "text",
    options: "a,b",
    fields: "email,firstName",
    "redirect-url": "https://example.com/thanks",
    email: "full.options@example.com",
    map: "email=email",
    format: "jsonl",
  };

  test("each admin command, run with every option of its row at once, succeeds (exit 0, one JSON object)", async () => {
    const csv = join(srv.dir, "people.csv");
    writeFileSync(csv, "firstName,email\nAda,ada@example.com\n");
    const key = await srv.createKey({ scopes: ["contacts:read"] });
    const doomed = await createAdminAccount(srv.env);
    const person = await srv.api("POST", "/contacts", { body: { email: "erase.me@example.com" } });
    expect(person.status).toBe(201);
    const exported = join(srv.dir, "export.jsonl");
    const args: Partial<Record<CommandName, string[]>> = {
      "contact erase": [person.json.contactId],
      "project update": [srv.projectId],
      "key revoke": [key.id],
      "admin delete": [doomed.id],
      import: [csv],
      backup: [join(srv.dir, "backup.db")],
    };
    const skipped: CommandName[] = ["serve", "healthcheck", "version", "help", "copy-to-postgres"];
    if (srv.databaseUrl) skipped.push("backup"); // crm backup copies the SQLite file (pg_dump on PostgreSQL)
    const ran: string[] = [];
    for (const name of NAMES.filter((n) => !skipped.includes(n))) {
      const line = [...name.split(" "), ...(args[name] ?? [])];
      for (const [flag, option] of Object.entries(COMMANDS[name].options)) {
        if (option.type === "boolean") line.push(`--${flag}`);
        else if (flag === "output") line.push(`--${flag}`, exported);
        else line.push(`--${flag}`, flag === "project" ? srv.projectId : flag === "name" ? `${VALUES.name} ${name}` : VALUES[flag]!);
      }
      // The admin commands that take a password read it from stdin; the others ignore stdin.
      const r = await srv.cliRaw(line, `${ADMIN_PASSWORD}\n`);
      expect(r.exitCode, `crm ${line.join(" ")}:\n${r.stderr}`).toBe(0);
      // crm export has no --json: with --output its stdout is empty and the file holds the contacts.
      if (name === "export") expect(readFileSync(exported, "utf8")).toContain(`"contactId":"${person.json.contactId}"`);
      else expect(() => JSON.parse(r.stdout)).not.toThrow();
      ran.push(name);
    }
    expect(ran.length).toBeGreaterThanOrEqual(NAMES.length - skipped.length);
    // The options were used, not only accepted: the limits and the name reached the project.
    const project = (await srv.cli(["project", "list", "--json"])).data.find((p: any) => p.id === srv.projectId);
    expect(project).toMatchObject({ name: "Full Options project update", contactQuota: 100, rateLimitPerMinute: 1000, contactCreatesPerHour: 1000, batchItemsPerHour: 1000 });
  }, 120_000);

  test("healthcheck and copy-to-postgres take their arguments (healthcheck answers 0 for the running server)", async () => {
    expect((await srv.cliRaw(["healthcheck"])).exitCode).toBe(0);
    const r = await runCommand([BUN, "src/main.ts", "copy-to-postgres", "postgres://u:p@127.0.0.1:1/none", "--json"], {
      env: { ...srv.env, CRM_DB_PATH: join(dir, "nowhere", "crm.db") },
      allowFail: true,
    });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toStartWith("crm: no SQLite database at ");
  });
});
