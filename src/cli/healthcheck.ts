import type { Config } from "../config.ts";

/** A wildcard listen address is not one to connect to; ask the loopback of the same family. */
function connectHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/**
 * `crm healthcheck`: GETs http://HOST:PORT/healthz of the running server and answers 0 on
 * 200, 1 otherwise, so the Docker image has a HEALTHCHECK without curl (docs/cli.md §6.1,
 * style "one binary, many commands"). Never opens the database.
 */
export async function healthcheckCommand(config: Config, timeoutMs = 3000): Promise<number> {
  const url = `http://${connectHost(config.HOST)}:${config.PORT}/healthz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    if (res.status === 200) return 0;
    console.error(`crm: ${url} answered ${res.status}`);
  } catch (error) {
    console.error(`crm: ${url}: ${(error as Error).message}`);
  }
  return 1;
}
