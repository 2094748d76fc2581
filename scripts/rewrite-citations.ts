/**
 * Rewrites citations of the old external spec (the word "decisions" or "interface", optionally
 * with ".md", then a section sign and a number such as 5 or 4.2; lists joined by ",", "/", "and";
 * the section sign on the next comment line) into sections of this repository's docs
 * ("docs/api.md §11"), using scripts/citation-map.json (issue 26). The map's keys say which.
 *
 *   bun scripts/rewrite-citations.ts [--dry-run] [FILE …]
 *
 * Without files: every tracked .ts/.tsx/.md/.mjs/.yml/.yaml/.sh/.json file and the Dockerfile,
 * except node_modules, db/ (frozen migrations: checksummed, never edited), package-lock.json, the
 * map and this script. SQL files are never touched (test/fixtures/migrations holds released
 * migrations verbatim). Prints counts per file and in all; exits 1 listing every citation it
 * could not map, and every pointer left to the old spec's folder outside the repository.
 *
 * "docs/decisions.md §N" (the repository's own decision record) is left alone: a citation
 * preceded by "/" or a word character is not one of the old spec's.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";

const root = join(import.meta.dir, "..");
const MAP_FILE = "scripts/citation-map.json";
/** The old spec's folder beside the checkout, written in two parts so this file does not cite it. */
const OUTSIDE = ["..", "shared"].join("/");

type Rule = { path: string; citations: Record<string, string> };
const raw = JSON.parse(readFileSync(join(root, MAP_FILE), "utf8")) as Record<string, unknown>;
const plain = new Map<string, string>();
for (const [key, value] of Object.entries(raw)) if (typeof value === "string" && !key.startsWith("$")) plain.set(key, value);
const rules = ((raw["@byPath"] ?? []) as Rule[]).map((r) => ({ re: new RegExp(r.path), citations: r.citations }));
const literals = (raw["@literal"] ?? []) as { path: string; from: string; to: string }[];
type LineRule = { line: string; citations: Record<string, string> };
const lineRules = ((raw["@byLine"] ?? []) as LineRule[]).map((r) => {
  const inline = /^\(\?i\)/.test(r.line);
  return { re: new RegExp(inline ? r.line.slice(4) : r.line, inline ? "i" : ""), citations: r.citations };
});

/**
 * The target of a normalised key (`${kind} §${n}`) on `line` of a file at `path`: the first line
 * rule, else the first path rule, else the plain entry; undefined when unmapped.
 */
function target(path: string, key: string, line = ""): string | undefined {
  for (const rule of lineRules) if (rule.citations[key] && rule.re.test(line)) return rule.citations[key];
  for (const rule of rules) if (rule.re.test(path) && rule.citations[key]) return rule.citations[key];
  return plain.get(key);
}

const NUM = String.raw`\d+(?:\.\d+)?`;
// A continuation between a word and its §: spaces, or a line break followed by a comment marker.
const GAP = String.raw`(?:[ \t]*\r?\n[ \t]*(?:\*|//|#|--)?[ \t]*|[ \t]?)`;
const CITATION = new RegExp(
  String.raw`([ \t]*)(?<![\w/.-])(decisions|interface)(?:\.md)?(${GAP})§ ?(${NUM})((?:[ \t]*(?:,|/|and|&)[ \t]*§ ?${NUM})*)`,
  "gi",
);

/** Joins targets: duplicates dropped, consecutive sections of one file written "docs/x.md §1, §2". */
function render(targets: string[]): string {
  const unique = [...new Set(targets)];
  const parts: string[] = [];
  let lastFile = "";
  for (const t of unique) {
    const [file, section] = t.split(" ");
    if (file === lastFile && section) parts.push(section);
    else parts.push(t);
    lastFile = file!;
  }
  return parts.join(", ");
}

/** Tidies what a rewrite can leave: "docs/x.md §3, docs/x.md §3" and "docs/x.md §3, docs/x.md §7". */
function tidy(text: string): string {
  let prev: string;
  do {
    prev = text;
    text = text.replace(/(docs\/[\w.-]+\.md) (§[\d.]+(?:, §[\d.]+)*)(, |; )\1 (§[\d.]+)(?![\d.])/g, (all, file, sections, _sep, next) =>
      (sections as string).split(", ").includes(next) ? `${file} ${sections}` : `${file} ${sections}, ${next}`,
    );
  } while (text !== prev);
  return text;
}

export interface Outcome {
  text: string;
  rewritten: number;
  unmapped: { line: number; citation: string }[];
}

export function rewrite(path: string, original: string): Outcome {
  let rewritten = 0;
  const unmapped: Outcome["unmapped"] = [];
  let text = original;
  for (const l of literals) {
    if (l.path !== path || !text.includes(l.from)) continue;
    text = text.split(l.from).join(l.to);
    rewritten += 1;
  }
  const out = text.replace(CITATION, (all: string, lead: string, doc: string, gap: string, first: string, rest: string, offset: number) => {
    const kind = doc.toLowerCase();
    const numbers = [first, ...[...rest.matchAll(new RegExp(`§ ?(${NUM})`, "g"))].map((m) => m[1]!)];
    const targets: string[] = [];
    for (const n of numbers) {
      const start = text.lastIndexOf("\n", offset) + 1;
      const end = text.indexOf("\n", offset + all.length);
      const t = target(path, `${kind} §${n}`, text.slice(start, end === -1 ? undefined : end));
      if (t === undefined) unmapped.push({ line: text.slice(0, offset).split("\n").length, citation: `${kind} §${n}` });
      else targets.push(t);
    }
    if (targets.length !== numbers.length) return all;
    rewritten += numbers.length;
    // A citation broken over two comment lines stays broken at the same place: the line break and
    // its comment marker first, then the target.
    return gap.includes("\n") ? gap + render(targets) : lead + render(targets);
  });
  return { text: rewritten ? tidy(out) : out, rewritten, unmapped };
}

/** Tracked files; outside a git checkout (an unpacked `git archive`), every file under the root. */
function candidates(): string[] {
  const ls = spawnSync("git", ["ls-files"], { cwd: root, encoding: "utf8" });
  if (ls.status === 0) return ls.stdout.split("\n");
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== ".git") walk(rel);
      } else found.push(rel);
    }
  };
  walk("");
  return found;
}

function defaultFiles(): string[] {
  return candidates()
    .filter((f) => f && (/\.(ts|tsx|md|mjs|ya?ml|sh|json)$/.test(f) || /(^|\/)Dockerfile$/.test(f)))
    .filter((f) => !/(^|\/)node_modules\//.test(f) && !/^db\//.test(f))
    .filter((f) => !["package-lock.json", MAP_FILE, "scripts/rewrite-citations.ts"].includes(f));
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const dryRun = args.includes("--dry-run");
  const files = args.filter((a) => a !== "--dry-run");
  const list = files.length ? files : defaultFiles();
  let total = 0;
  let changed = 0;
  const problems: string[] = [];
  for (const file of list) {
    const abs = file.startsWith("/") ? file : join(process.cwd(), file);
    const rel = abs.startsWith(root + "/") ? abs.slice(root.length + 1) : file;
    let text: string;
    try {
      text = readFileSync(abs, "utf8");
    } catch {
      continue; // listed by git but absent (removed in the work tree)
    }
    const result = rewrite(rel, text);
    for (const u of result.unmapped) problems.push(`${rel}:${u.line}: ${u.citation}`);
    result.text.split("\n").forEach((line, i) => {
      if (line.includes(OUTSIDE)) problems.push(`${rel}:${i + 1}: ${OUTSIDE} pointer`);
    });
    if (result.rewritten) {
      total += result.rewritten;
      changed += 1;
      console.log(`${String(result.rewritten).padStart(5)}  ${rel}`);
      if (!dryRun) writeFileSync(abs, result.text);
    }
  }
  console.log(`${total} citations ${dryRun ? "would be " : ""}rewritten in ${changed} of ${list.length} files; ${problems.length} unmapped`);
  if (problems.length) {
    console.error(problems.join("\n"));
    process.exit(1);
  }
}
