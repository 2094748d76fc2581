/**
 * Reads /metrics (Prometheus text, docs/operations.md §4.2) into samples a test can ask exact
 * questions of: the value of one series with exactly these labels, or the sum over the
 * series whose labels include these.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricsSnapshot {
  text: string;
  samples: Sample[];
  /** The series `name` whose labels are exactly `labels`; undefined when absent. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** The sum over every series `name` whose labels include `labels` (0 when none). */
  sum(name: string, labels?: Record<string, string>): number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseMetrics(text: string): MetricsSnapshot {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, "$1");
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  const includes = (s: Sample, labels: Record<string, string>) => Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  return {
    text,
    samples,
    value(name, labels = {}) {
      const want = Object.keys(labels).length;
      return samples.find((s) => s.name === name && Object.keys(s.labels).length === want && includes(s, labels))?.value;
    },
    sum(name, labels = {}) {
      return samples.filter((s) => s.name === name && includes(s, labels)).reduce((a, s) => a + s.value, 0);
    },
  };
}

/** GET `${origin}/metrics`, parsed; throws unless 200 text/plain. */
export async function readMetrics(origin: string): Promise<MetricsSnapshot> {
  const res = await fetch(`${origin}/metrics`);
  const text = await res.text();
  if (res.status !== 200 || !(res.headers.get("content-type") ?? "").startsWith("text/plain")) {
    throw new Error(`/metrics answered ${res.status} ${res.headers.get("content-type")}: ${text.slice(0, 200)}`);
  }
  return parseMetrics(text);
}
