/** The benches' API client (bench/sync.ts, bench/changes.ts, bench/duplicates.ts): one request, timed; a non-2xx answer stops the bench. */
export interface Client {
  url: string;
  key: string;
}

export async function call(c: Client, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${c.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${c.key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return { status: res.status, json: text ? JSON.parse(text) : null, ms };
}

/** `count` jobs with `connections` in flight. */
export async function pool(count: number, connections: number, job: (i: number) => Promise<unknown>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: connections }, worker));
}

/** The integers from `from` up to `to`, `to` left out. */
export const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
