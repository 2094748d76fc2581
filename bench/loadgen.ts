export {};
/**
 * Fallback load generator when wrk is not installed: closed-loop keep-alive fetches from
 * `connections` concurrent loops, in its own process. Prints the same BENCH_JSON line as
 * bench/wrk/report.lua. Slower than wrk, so its figures are a floor, not a peak.
 *
 *   bun bench/loadgen.ts <base-url> <seconds> <connections> <auth-header> <paths-file | POST | INTERACTIONS:<contact-count>>
 */
const [base, seconds, connections, auth, source] = process.argv.slice(2) as [string, string, string, string, string];
const post = source === "POST";
const interactions = source.startsWith("INTERACTIONS:") ? Number(source.split(":")[1]) : 0;
const paths = post || interactions ? [] : (await Bun.file(source).text()).split("\n").filter(Boolean);
const names = ["Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken"];
const latencies: number[] = [];
const errors = { connect: 0, read: 0, write: 0, status: 0, timeout: 0 };
let bytes = 0;
let n = 0;
const end = performance.now() + Number(seconds) * 1000;
const started = performance.now();

async function loop() {
  while (performance.now() < end) {
    n++;
    const name = names[n % names.length]!;
    const init: RequestInit = interactions
      ? {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/json" },
          body: JSON.stringify({ type: "note", note: `Loadgen note ${n}`, ...(n % 4 === 0 ? { uniqueIdentifier: `call-${n % 3}` } : {}) }),
        }
      : post
      ? {
          method: "POST",
          headers: { authorization: auth, "content-type": "application/json" },
          body: JSON.stringify({ firstName: name, lastName: "Loadgen", email: `${name.toLowerCase()}.${n}@example.com`, tags: ["beta"] }),
        }
      : { headers: { authorization: auth } };
    const url = base + (interactions
      ? `/v1/contacts/CR-${1 + Math.floor(Math.random() * interactions)}/interactions`
      : post ? "/v1/contacts" : paths[Math.floor(Math.random() * paths.length)]);
    const t = performance.now();
    try {
      const res = await fetch(url, init);
      bytes += (await res.arrayBuffer()).byteLength;
      if (res.status >= 400) errors.status++;
      latencies.push((performance.now() - t) * 1000);
    } catch {
      errors.read++;
    }
  }
}

await Promise.all(Array.from({ length: Number(connections) }, loop));
const durationUs = Math.round((performance.now() - started) * 1000);
latencies.sort((a, b) => a - b);
const p = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
const mean = latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length);
console.log(
  "BENCH_JSON " +
    JSON.stringify({ requests: latencies.length, durationUs, bytes, p50Us: p(0.5), p95Us: p(0.95), p99Us: p(0.99), maxUs: p(1), meanUs: mean, errors }),
);
