import ipaddr from "ipaddr.js";

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** `CRM_TRUST_PROXY` parsed: the reverse proxies whose `X-Forwarded-For` is believed. */
export type TrustedProxies = ReadonlyArray<readonly [Address, number]>;

/**
 * Parses `CRM_TRUST_PROXY` (docs/operations.md §8): comma-separated addresses or CIDRs, IPv4 in
 * four-part decimal (`10.0.0.0/8`, `192.168.1.10`) or IPv6 (`fd00::/8`, `::1`). Throws
 * a message naming the first entry that is neither, so the start stops on a typo rather
 * than trusting something else than meant.
 */
export function parseTrustedProxies(text: string): TrustedProxies {
  const entries = text.split(",").map((e) => e.trim()).filter((e) => e !== "");
  return entries.map((entry) => {
    if (ipaddr.IPv4.isValidCIDRFourPartDecimal(entry) || (entry.includes(":") && ipaddr.IPv6.isValidCIDR(entry))) {
      const [address, bits] = ipaddr.parseCIDR(entry);
      return [address, bits] as const;
    }
    if (ipaddr.IPv4.isValidFourPartDecimal(entry) || ipaddr.IPv6.isValid(entry)) {
      const address = ipaddr.process(entry);
      return [address, address.kind() === "ipv4" ? 32 : 128] as const;
    }
    throw new Error(`${JSON.stringify(entry)} is not an IP address or CIDR (expected a list like 10.0.0.0/8,::1)`);
  });
}

/** An address as a client writes it (`1.2.3.4`, `1.2.3.4:567`, `[::1]:80`, `::ffff:1.2.3.4`), parsed; null if it is none. */
function parseAddress(text: string): Address | null {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text);
  const bare = bracketed?.[1] ?? withPort?.[1] ?? text;
  // IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 client) counts as the IPv4 address.
  return ipaddr.isValid(bare) ? ipaddr.process(bare) : null;
}

function isTrusted(address: Address, trusted: TrustedProxies): boolean {
  return trusted.some(([range, bits]) =>
    address.kind() === "ipv4"
      ? range.kind() === "ipv4" && (address as ipaddr.IPv4).match(range as ipaddr.IPv4, bits)
      : range.kind() === "ipv6" && (address as ipaddr.IPv6).match(range as ipaddr.IPv6, bits),
  );
}

/**
 * The client address the per-address limits count (the failed-authentication limit,
 * the web-form limiter), docs/operations.md §8. Without trusted proxies it is the socket's peer,
 * and `X-Forwarded-For` is ignored: anyone can write that header. When the peer is a
 * trusted proxy, `X-Forwarded-For` is walked from the right (each proxy appends the
 * address it received from), skipping trusted addresses: the first untrusted one is the
 * client, as the last trusted proxy saw it; if all are trusted, the leftmost. An entry
 * that is not an address ends the walk, and the trusted hop that handed it over counts.
 * Addresses come back normalised, so one client has one key whatever its notation.
 */
export function clientAddress(socket: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  const peer = parseAddress(socket);
  if (!peer) return socket;
  if (trusted.length === 0 || !forwardedFor || !isTrusted(peer, trusted)) return peer.toString();
  const hops = forwardedFor.split(",").map((h) => h.trim()).filter((h) => h !== "");
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = parseAddress(hops[i]!);
    if (!hop) break;
    client = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  return client.toString();
}

/** Whether the socket's peer is one of the trusted proxies (their X-Forwarded-* headers are believed). */
export function fromTrustedProxy(socket: string, trusted: TrustedProxies): boolean {
  const peer = parseAddress(socket);
  return peer !== null && trusted.length > 0 && isTrusted(peer, trusted);
}
