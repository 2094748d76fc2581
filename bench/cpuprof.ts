/**
 * Summarises a Chrome .cpuprofile (from `bun --cpu-prof`): self time by function and by
 * package/area, and inclusive ("total") time of the top src/ functions.
 *
 *   bun bench/cpuprof.ts <file.cpuprofile> [top=25]
 */
interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

export function summarise(profile: Profile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

  const where = (n: Node) => {
    const url = n.callFrame.url;
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
    if (m) return m[1]!;
    const s = /\/(src\/[^/]+)\//.exec(url) ?? /\/(src)\//.exec(url);
    if (s) return s[1]!;
    if (!url) return n.callFrame.functionName.startsWith("(") ? n.callFrame.functionName : "(native/builtin)";
    return url.replace(/^.*\/work\/main\//, "");
  };
  const label = (n: Node) =>
    `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*\/work\/main\//, "").replace(/^file:\/\//, "")}:${n.callFrame.lineNumber + 1}`;

  const fn = new Map<string, number>();
  const area = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const n = byId.get(id)!;
    fn.set(label(n), (fn.get(label(n)) ?? 0) + us);
    area.set(where(n), (area.get(where(n)) ?? 0) + us);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const c = byId.get(cur)!;
      if (!c.callFrame.url.includes("/src/")) continue;
      const l = label(c);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + us);
    }
  }
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)} %`;
  const list = (m: Map<string, number>, k: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, k).map(([name, us]) => `  ${pct(us)}  ${name}`).join("\n");
  return [
    `total sampled ${(total / 1e6).toFixed(2)} s`,
    `self time by area:`,
    list(area, 15),
    `self time by function (top ${top}):`,
    list(fn, top),
    `inclusive time of src/ functions (top ${top}):`,
    list(inclusive, top),
  ].join("\n");
}

if (import.meta.main) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error("usage: bun bench/cpuprof.ts <file.cpuprofile> [top]");
    process.exit(2);
  }
  console.log(summarise(JSON.parse(await Bun.file(file).text()), Number(top ?? 25)));
}
