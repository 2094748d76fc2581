import type { MiddlewareHandler } from "hono";
import ipaddr from "ipaddr.js";
import { fromTrustedProxy } from "../http/client-address.ts";
import type { AppEnv } from "../http/env.ts";

/** A host the console answers: its name (lower case, IPv6 without brackets) and, if named, its port. */
export interface AllowedHost {
  name: string;
  port: number | null;
}

const NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Splits a Host header (`name`, `name:port`, `[v6]:port`) into its lower-case name and port; null when it is no host. */
export function splitHost(text: string): { name: string; port: number | null } | null {
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/i.exec(text.trim());
  if (!m) return null;
  const name = (m[1] ?? m[2]!).toLowerCase().replace(/\.$/, "");
  const port = m[3] === undefined ? null : Number(m[3]);
  if (port !== null && port > 65535) return null;
  if (m[1] !== undefined ? !ipaddr.IPv6.isValid(name) : !NAME.test(name)) return null;
  return { name, port };
}

/**
 * `CRM_ADMIN_HOSTS` (docs/security.md §5): comma-separated host names, each optionally
 * with `:port`, that the console answers besides loopback. Throws on an entry that is not a host.
 */
export function parseAdminHosts(text: string): AllowedHost[] {
  return text
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const host = splitHost(entry);
      if (!host) throw new Error(`"${entry}" is not a host name (name or name:port)`);
      return host;
    });
}

function isLoopback(name: string): boolean {
  if (name === "localhost") return true;
  return ipaddr.isValid(name) && ipaddr.process(name).range() === "loopback";
}

/**
 * Whether the console serves a request addressed to `hostHeader` (docs/security.md §5):
 * loopback names and addresses on the port the server listens on (a Host without a port
 * means 80), or a host of `CRM_ADMIN_HOSTS` (on its port when the entry names one).
 */
export function isConsoleHost(hostHeader: string | undefined, listeningPort: number, allowed: AllowedHost[]): boolean {
  const host = hostHeader ? splitHost(hostHeader) : null;
  if (!host) return false;
  if (allowed.some((a) => a.name === host.name && (a.port === null || a.port === (host.port ?? 80)))) return true;
  return isLoopback(host.name) && (host.port ?? 80) === listeningPort;
}

/**
 * The console's first gate, before anything else runs (docs/security.md §5): a request
 * for any other host is 421, which defeats DNS rebinding (a page of another site whose
 * name now points here still sends its own name as Host). Behind a trusted proxy the
 * host judged is the one the browser asked for (X-Forwarded-Host), as the Origin check's.
 */
export function consoleHosts(): MiddlewareHandler<AppEnv> {
  return async function consoleHosts(c, next) {
    const { config, port } = c.var.deps;
    const forwarded = fromTrustedProxy(c.env?.ip ?? "", config.CRM_TRUST_PROXY ?? []) ? c.req.header("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
    const host = forwarded || c.req.header("host") || new URL(c.req.url).host;
    if (isConsoleHost(host, port, config.CRM_ADMIN_HOSTS)) return next();
    c.var.deps.log.warn("admin request for another host refused", { requestId: c.var.requestId });
    return c.text("Misdirected request: this console does not serve this host name. Add it to CRM_ADMIN_HOSTS to use it.\n", 421, {
      "Cache-Control": "no-store",
    });
  };
}
