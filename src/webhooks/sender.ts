import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import type { Clock } from "../lib/clock.ts";

export interface SendResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The first 1 KiB of the answer (docs/webhooks.md §4). */
  snippet: string | null;
  retryAfterMs: number | null;
}

/**
 * Kept-alive connections, pooled per checked address: a pooled socket never carries a
 * delivery to an address other than the one just checked (docs/webhooks.md §4), so a host that
 * moves gets its next delivery at its new address. The least recently used pools close
 * past MAX_POOLS.
 */
const MAX_POOLS = 256;
const pools = new Map<string, http.Agent>();

function agentFor(protocol: string, address: string): http.Agent {
  const key = `${protocol}${address}`;
  let agent = pools.get(key);
  if (agent) pools.delete(key);
  else agent = protocol === "https:" ? new https.Agent({ keepAlive: true, maxSockets: 64 }) : new http.Agent({ keepAlive: true, maxSockets: 64 });
  pools.set(key, agent);
  if (pools.size > MAX_POOLS) {
    const [oldest, old] = pools.entries().next().value as [string, http.Agent];
    pools.delete(oldest);
    old.destroy();
  }
  return agent;
}

/** Retry-After as seconds or an HTTP date → milliseconds from `now` (the service's clock). */
function retryAfterMs(value: string | string[] | undefined, now: number): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * POSTs `body` to `url`, connecting to `address` (already checked by the address policy)
 * whatever DNS says now; TLS still verifies the URL's host name. Redirects are not
 * followed: a 3xx is an answer like any other (docs/webhooks.md §4). A Retry-After date is read
 * against `clock`, the one the retry is scheduled by.
 */
export function postPinned(url: URL, address: string, headers: Record<string, string>, body: string, timeoutMs: number, clock: Clock): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const family = isIP(address) === 6 ? 6 : 4;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, durationMs: elapsed() });
    };
    const transport = url.protocol === "https:" ? https : http;
    const request = transport.request(
      url,
      {
        method: "POST",
        agent: agentFor(url.protocol, address),
        headers: { ...headers, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) },
        // Pin the connection to the checked address (no DNS-rebinding window).
        lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) =>
          options?.all ? callback(null, [{ address, family }]) : callback(null, address, family)) as never,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          if (size < 1024) chunks.push(chunk);
          size += chunk.length;
        });
        const done = () =>
          finish({
            statusCode: response.statusCode ?? null,
            error: null,
            snippet: Buffer.concat(chunks).subarray(0, 1024).toString("utf8"),
            retryAfterMs: retryAfterMs(response.headers["retry-after"], clock.now()),
          });
        response.on("end", done);
        response.on("error", done);
      },
    );
    const timer = setTimeout(() => {
      finish({ statusCode: null, error: `timed out after ${timeoutMs} ms`, snippet: null, retryAfterMs: null });
      request.destroy();
    }, timeoutMs);
    request.on("error", (error: Error) => finish({ statusCode: null, error: error.message, snippet: null, retryAfterMs: null }));
    request.end(body);
  });
}
