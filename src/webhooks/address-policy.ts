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
 * IPv6 forms that carry an IPv4 address (docs/webhooks.md §4.4) besides IPv4-mapped `::ffff:a.b.c.d`
 * (which ipaddr.js unpacks itself), with where the address sits: NAT64 `64:ff9b::/96` (RFC
 * 6052), 6to4 `2002::/16` (RFC 3056: bits 16–47) and Teredo `2001::/32` (RFC 4380: the
 * client is the bitwise NOT of the last 32 bits). Such an address reaches the IPv4 host it
 * embeds, so that host is what is judged.
 */
const EMBEDDING: Array<{ range: [ipaddr.IPv6, number]; ipv4: (bytes: number[]) => number[] }> = [
  { range: cidr6("64:ff9b::/96"), ipv4: (b) => b.slice(12) },
  { range: cidr6("2002::/16"), ipv4: (b) => b.slice(2, 6) },
  { range: cidr6("2001::/32"), ipv4: (b) => b.slice(12).map((byte) => ~byte & 0xff) },
];

/** IPv4-compatible `::a.b.c.d` (deprecated by RFC 4291) and `::`, `::1`: refused outright. */
const IPV4_COMPATIBLE = cidr6("::/96");

function cidr6(text: string): [ipaddr.IPv6, number] {
  return ipaddr.IPv6.parseCIDR(text);
}

/**
 * An IPv6 address with any dotted IPv4 tail written in hex, as the URL parser writes it.
 * ipaddr.js 2.5 reads `::a.b.c.d` as `::ffff:a.b.c.d`, and the system resolver writes
 * IPv4-compatible answers in that dotted form; a zone id (`%eth0`) the URL parser refuses
 * is left as it is.
 */
function inHex(address: string): string {
  if (!address.includes(".")) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}

/**
 * True only for globally routable unicast addresses (docs/api.md §13.3, docs/webhooks.md §2.2): loopback,
 * private, link-local (cloud metadata 169.254.169.254 included), CGNAT, unique-local,
 * multicast, reserved, 0.0.0.0/8, `::/96` and the other special ranges are refused; an
 * IPv6 form that embeds an IPv4 address (mapped, NAT64, 6to4, Teredo) is judged by the
 * IPv4 address it embeds.
 */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(bare)) return false;
  if (ipaddr.IPv4.isValid(bare)) return ipaddr.IPv4.parse(bare).range() === "unicast";
  const v6 = ipaddr.IPv6.parse(inHex(bare));
  if (v6.match(IPV4_COMPATIBLE)) return false;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  const embedding = EMBEDDING.find((e) => v6.match(e.range));
  if (embedding) return ipaddr.fromByteArray(embedding.ipv4(v6.toByteArray())).range() === "unicast";
  return v6.range() === "unicast";
}

export type UrlCheck =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; reason: string };

/**
 * Checks a subscriber URL (docs/api.md §13.3): production takes only https URLs whose host
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
  // Credentials in the URL would be stored and shown with it (docs/api.md §13.3), in every environment.
  if (url.username !== "" || url.password !== "") {
    return { ok: false, reason: "url must not contain credentials (user:password@); authenticate with the signature instead." };
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
    return requireResolution ? { ok: false, reason: `url host ${host} could not be resolved.` } : { ok: true, url, addresses };
  }
  if (!sandbox && !addresses.every(isPublicAddress)) return { ok: false, reason: "url must resolve to a public address." };
  return { ok: true, url, addresses };
}
