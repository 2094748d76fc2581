import ipaddr from "ipaddr.js";
import { lookup } from "node:dns/promises";

/** Resolves a host name to every address it has (injectable for tests). */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) => {
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("DNS timeout")), 3000));
  const found = await Promise.race([lookup(hostname, { all: true, verbatim: true }), timeout]);
  return found.map((a) => a.address);
};

/** Host names that name internal services whatever they resolve to. */
const INTERNAL_NAMES = /(^|\.)(localhost|local|internal|localdomain|home\.arpa)$|^metadata(\.google\.internal)?$/i;

/**
 * True only for globally routable unicast addresses (decisions §7, §12): loopback,
 * private, link-local (cloud metadata 169.254.169.254 included), CGNAT, unique-local,
 * multicast, reserved, 0.0.0.0/8, `::`, and v4-embedding v6 forms are refused;
 * IPv4-mapped IPv6 is judged by its IPv4 address.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(bare)) return false;
  let ip = ipaddr.parse(bare);
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  return ip.range() === "unicast";
}

export type UrlCheck =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string };

/**
 * Checks a subscriber URL (decisions §7): production takes only https URLs whose host
 * resolves only to public addresses; sandbox also takes http and local addresses. The
 * addresses returned are the ones the delivery connects to, so no second DNS answer can
 * move it (no rebinding window). `requireResolution` is false at create/update, where a
 * name that does not resolve yet is accepted and checked again at every delivery.
 */
export async function checkUrl(
  raw: string,
  env: "production" | "sandbox",
  resolve: Resolver,
  requireResolution: boolean,
): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "url is not a valid URL." };
  }
  const sandbox = env === "sandbox";
  if (url.protocol !== "https:" && !(sandbox && url.protocol === "http:")) {
    return { ok: false, reason: sandbox ? "url must be http(s)." : "url must use https." };
  }
  // A trailing dot names the same host (`localhost.`); judge it without.
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (ipaddr.isValid(host)) {
    if (!sandbox && !isPublicAddress(host)) return { ok: false, reason: "url must resolve to a public address." };
    return { ok: true, url, addresses: [host] };
  }
  if (!sandbox && INTERNAL_NAMES.test(host)) return { ok: false, reason: "url must resolve to a public address." };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) {
    return requireResolution ? { ok: false, reason: `could not resolve ${host}.` } : { ok: true, url, addresses };
  }
  if (!sandbox && !addresses.every(isPublicAddress)) return { ok: false, reason: "url must resolve to a public address." };
  return { ok: true, url, addresses };
}
