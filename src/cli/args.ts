import { parseArgs } from "node:util";
import { COMMANDS, isCommand, subcommands, TOP_LEVEL, type CommandName, type CommandSpec, type Input } from "./commands.ts";
import { usageLine } from "./help.ts";

export class UsageError extends Error {}

/** What the command line asks for (docs/cli.md §4, §2). */
export type Invocation =
  /** No command at all: the overall usage, exit 2. */
  | { kind: "usage" }
  /** `crm help [TOPIC]`, `crm TOPIC --help`: TOPIC is a command (`key create`), a group (`key`) or null for all. */
  | { kind: "help"; topic: string | null }
  | { kind: "run"; name: CommandName; input: Input<CommandName> };

/** The process's own options, spelled as commands. */
const ALIASES: Record<string, string> = { "--version": "version", "--help": "help", "-h": "help" };
const HELP_FLAGS = ["--help", "-h"];

/**
 * Reads argv against the command table (commands.ts): the one parser of the CLI. An unknown
 * command or option, a missing or extra argument, a missing required option or value is a
 * UsageError (one line, exit 2) that names what is valid, raised before any command runs,
 * so a mistyped command never opens or creates a database.
 */
export function parseCommandLine(argv: string[]): Invocation {
  if (argv.length === 0) return { kind: "usage" };
  const first = Object.hasOwn(ALIASES, argv[0]!) ? ALIASES[argv[0]!]! : argv[0]!;
  const resolved = resolveCommand(first, argv.slice(1));
  if ("topic" in resolved) return { kind: "help", topic: resolved.topic };
  const { name, rest } = resolved;
  const spec: CommandSpec = COMMANDS[name];
  const { values, positionals, help } = readOptions(name, spec, rest);
  if (help) return { kind: "help", topic: name };
  if (name === "help") return { kind: "help", topic: helpTopic(positionals) };
  const declared = spec.args ?? [];
  declared.forEach((arg, i) => {
    if (!positionals[i]) throw new UsageError(`${arg.name} is required; usage: ${usageLine(name)}`);
  });
  if (positionals.length > declared.length) {
    throw new UsageError(`unexpected argument "${positionals[declared.length]}"; usage: ${usageLine(name)}`);
  }
  for (const [flag, option] of Object.entries(spec.options)) {
    if (option.type === "string" && option.required && !values[flag]) {
      throw new UsageError(`--${flag} is required; usage: ${usageLine(name)}`);
    }
  }
  return { kind: "run", name, input: { values, args: positionals } as Input<CommandName> };
}

/** The command a word (and, for a group, the next one) names; a group's help when asked for it. */
function resolveCommand(word: string, rest: string[]): { name: CommandName; rest: string[] } | { topic: string } {
  if (isCommand(word)) return { name: word, rest };
  const subs = subcommands(word);
  if (subs.length > 0) {
    const sub = rest[0];
    if (sub === undefined || sub.startsWith("-")) {
      if (sub !== undefined && HELP_FLAGS.includes(sub)) return { topic: word };
      throw new UsageError(`${word} takes a command: ${subs.join(", ")} (crm help ${word} lists their options)`);
    }
    const name = `${word} ${sub}`;
    if (isCommand(name)) return { name, rest: rest.slice(1) };
    throw new UsageError(`unknown command "${name}"${didYouMean(sub, subs, `${word} `)}; ${word} commands are ${subs.join(", ")}`);
  }
  if (word.startsWith("-")) {
    throw new UsageError(`unknown option ${word}${didYouMean(word, ["--version", "--help"])}; crm takes a command first (${TOP_LEVEL.join(", ")}) or --version, --help`);
  }
  throw new UsageError(`unknown command "${word}"${didYouMean(word, TOP_LEVEL)}; commands are ${TOP_LEVEL.join(", ")}`);
}

/** `crm help key create` → "key create"; an unknown topic is refused like an unknown command. */
function helpTopic(words: string[]): string | null {
  if (words.length === 0) return null;
  if (words.length === 1 && subcommands(words[0]!).length > 0) return words[0]!;
  const resolved = resolveCommand(words[0]!, words.slice(1, 2));
  const topic = "topic" in resolved ? resolved.topic : resolved.name;
  if (words.length > topic.split(" ").length) throw new UsageError(`unexpected argument "${words.at(-1)}"; usage: ${usageLine("help")}`);
  return topic;
}

type Values = Record<string, string | boolean | undefined>;

/** Options and positionals of one command; only the options its table row lists (and --help). */
function readOptions(name: CommandName, spec: CommandSpec, argv: string[]): { values: Values; positionals: string[]; help: boolean } {
  const end = argv.indexOf("--");
  if ((end < 0 ? argv : argv.slice(0, end)).some((a) => HELP_FLAGS.includes(a))) return { values: {}, positionals: [], help: true };
  const types = Object.fromEntries(Object.entries(spec.options).map(([flag, o]) => [flag, { type: o.type }]));
  const { tokens } = parseArgs({ args: argv, options: types, allowPositionals: true, strict: false, tokens: true });
  const values: Values = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === "positional") positionals.push(token.value);
    if (token.kind !== "option") continue;
    const option = Object.hasOwn(spec.options, token.name) ? spec.options[token.name] : undefined;
    if (!option) throw new UsageError(unknownOption(name, spec, token.rawName));
    if (option.type === "boolean") {
      if (token.inlineValue) throw new UsageError(`${token.rawName} takes no value; usage: ${usageLine(name)}`);
      values[token.name] = true;
    } else {
      const value = token.value;
      if (value === undefined || (!token.inlineValue && value.startsWith("-"))) {
        const hint = value === undefined ? "" : ` (a value starting with "-" is written ${token.rawName}=${value})`;
        throw new UsageError(`${token.rawName} needs a value: ${token.rawName} ${option.arg}${hint}`);
      }
      values[token.name] = value;
    }
  }
  return { values, positionals, help: false };
}

function unknownOption(name: CommandName, spec: CommandSpec, raw: string): string {
  const valid = [...Object.keys(spec.options).map((f) => `--${f}`), "--help"];
  return `unknown option ${raw} for crm ${name}${didYouMean(raw, valid)}; its options are ${valid.join(", ")}`;
}

/**
 * ` (did you mean "x"?)` for the closest candidate when it is close: one it begins (three
 * letters at least), or one edit (a letter wrong, missing, extra, or two swapped) per four
 * letters, at least one; else "".
 */
export function didYouMean(word: string, candidates: readonly string[], prefix = ""): string {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = candidate.startsWith(word) && word.replace(/^-+/, "").length >= 3 ? 0 : distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const limit = Math.max(1, Math.floor(word.replace(/^-+/, "").length / 4));
  return best !== null && bestDistance <= limit ? ` (did you mean "${prefix}${best}"?)` : "";
}

/** Levenshtein distance (transposition counted as one edit). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

export function integer(value: string | undefined, flag: string, min = 0): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`${flag} must be an integer ≥ ${min}`);
  return n;
}

/** One JSON object with --json, else the human text (docs/cli.md §4). */
export function output(json: boolean | undefined, value: object, human: string): void {
  console.log(json ? JSON.stringify(value) : human);
}
