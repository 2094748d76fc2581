import { COMMANDS, groupOf, isCommand, subcommands, type CommandName, type CommandSpec } from "./commands.ts";

const HELP_OPTION = { flag: "-h, --help", description: "print this help" };

/** `crm key create --project ID --scopes a,b [--name N] [--json]`, from the command table. */
export function usageLine(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  if (spec.usage) return spec.usage;
  const parts = [`crm ${name}`, ...(spec.args ?? []).map((a) => a.name)];
  for (const [flag, o] of Object.entries(spec.options)) {
    const text = o.type === "string" ? `--${flag} ${o.arg}` : `--${flag}`;
    parts.push(o.type === "string" && o.required ? text : `[${text}]`);
  }
  return parts.join(" ");
}

/** Two aligned columns. */
function table(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return rows.map(([left, right]) => `  ${left.padEnd(width)}${right}`);
}

/** One command's help: usage, what it does, its arguments and every option it accepts. */
export function commandHelp(name: CommandName): string {
  const spec: CommandSpec = COMMANDS[name];
  const lines = [`usage: ${usageLine(name)}`, "", `${spec.summary[0]!.toUpperCase()}${spec.summary.slice(1)}.`];
  if (spec.args?.length) lines.push("", "arguments:", ...table(spec.args.map((a) => [a.name, a.description])));
  const options: [string, string][] = Object.entries(spec.options).map(([flag, o]) => [
    o.type === "string" ? `--${flag} ${o.arg}` : `--${flag}`,
    o.type === "string" && o.required ? `${o.description}; required` : o.description,
  ]);
  lines.push("", "options:", ...table([...options, [HELP_OPTION.flag, HELP_OPTION.description]]));
  if (spec.notes?.length) lines.push("", ...spec.notes);
  return lines.join("\n");
}

/** The overall usage: every command with its arguments and what it does. */
export function overallUsage(): string {
  const rows = (Object.keys(COMMANDS) as CommandName[]).map((name): [string, string] => {
    const spec: CommandSpec = COMMANDS[name];
    const args = spec.usage ? spec.usage.replace(/^crm \S+ ?/, "") : (spec.args ?? []).map((a) => a.name).join(" ");
    return [args ? `${name} ${args}` : name, spec.summary];
  });
  return [
    "usage: crm COMMAND [options]",
    "",
    "commands:",
    ...table(rows),
    "",
    "crm help COMMAND (or crm COMMAND --help) lists a command's options; --json prints one JSON object on stdout.",
    "The admin commands work on the server's database: CRM_DB_PATH, or CRM_DATABASE_URL for PostgreSQL.",
  ].join("\n");
}

/** Help for a topic: a command, a group (`key`: each of its commands), or everything (null). */
export function helpText(topic: string | null): string {
  if (topic === null) return overallUsage();
  if (isCommand(topic)) return commandHelp(topic);
  const subs = subcommands(groupOf(topic)).map((s) => `${topic} ${s}` as CommandName);
  return subs.map(commandHelp).join("\n\n");
}
