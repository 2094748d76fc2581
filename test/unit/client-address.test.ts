/**
 * The client address the per-address limits count (docs/operations.md §8, `CRM_TRUST_PROXY`):
 * the socket's peer unless that peer is a trusted proxy; then `X-Forwarded-For` walked
 * from the right, skipping trusted hops.
 */
import { describe, expect, test } from "bun:test";
import { clientAddress, parseTrustedProxies } from "../../src/http/client-address.ts";

const PROXIES = parseTrustedProxies("10.0.0.0/8, 127.0.0.1, fd00::/8");

const cases: Array<{ name: string; socket: string; xff?: string; trusted?: string; expected: string }> = [
  { name: "without trusted proxies the socket's address counts and X-Forwarded-For is ignored", socket: "203.0.113.7", xff: "198.51.100.1", trusted: "", expected: "203.0.113.7" },
  { name: "a peer that is not a trusted proxy counts itself, whatever it claims to forward", socket: "203.0.113.7", xff: "198.51.100.1", expected: "203.0.113.7" },
  { name: "behind one trusted proxy the address it appended is the client", socket: "10.0.0.2", xff: "198.51.100.1", expected: "198.51.100.1" },
  { name: "the walk is from the right: an address the client wrote itself further left is not believed", socket: "10.0.0.2", xff: "1.1.1.1, 198.51.100.1", expected: "198.51.100.1" },
  { name: "trusted hops are skipped: the first untrusted address from the right is the client", socket: "127.0.0.1", xff: "6.6.6.6, 198.51.100.1, 10.1.2.3, 10.9.9.9", expected: "198.51.100.1" },
  { name: "when every hop is trusted, the leftmost is the client", socket: "10.0.0.2", xff: "10.0.0.9, 10.0.0.8", expected: "10.0.0.9" },
  { name: "a trusted peer without X-Forwarded-For is itself the client", socket: "10.0.0.2", expected: "10.0.0.2" },
  { name: "an empty X-Forwarded-For counts as none", socket: "10.0.0.2", xff: " , ", expected: "10.0.0.2" },
  { name: "an entry that is not an address ends the walk at the trusted hop that handed it over", socket: "10.0.0.2", xff: "198.51.100.1, unknown, 10.0.0.7", expected: "10.0.0.7" },
  { name: "IPv6 proxies and clients", socket: "fd00::1", xff: "2001:db8::5, fd00::2", expected: "2001:db8::5" },
  { name: "ports and brackets on forwarded entries are dropped", socket: "10.0.0.2", xff: "[2001:db8::5]:4711, 10.0.0.3:8080", expected: "2001:db8::5" },
  { name: "an IPv4 address forwarded with a port", socket: "10.0.0.2", xff: "198.51.100.1:55000", expected: "198.51.100.1" },
  { name: "an IPv4-mapped peer (dual-stack socket) is judged and reported as its IPv4 address", socket: "::ffff:10.0.0.2", xff: "198.51.100.1", expected: "198.51.100.1" },
  { name: "an IPv4-mapped client is reported as IPv4, so one client has one key", socket: "::ffff:203.0.113.7", expected: "203.0.113.7" },
  { name: "IPv6 addresses come back in one notation", socket: "2001:0db8:0000:0000:0000:0000:0000:0005", expected: "2001:db8::5" },
  { name: "a socket address that is not an address (in-process requests) is kept as it is", socket: "unknown", xff: "198.51.100.1", expected: "unknown" },
];

describe("clientAddress", () => {
  for (const c of cases)
    test(c.name, () => {
      const trusted = c.trusted === undefined ? PROXIES : parseTrustedProxies(c.trusted);
      expect(clientAddress(c.socket, c.xff, trusted)).toBe(c.expected);
    });
});

describe("parseTrustedProxies (CRM_TRUST_PROXY)", () => {
  test("an empty value trusts nothing", () => {
    expect(parseTrustedProxies("")).toEqual([]);
    expect(parseTrustedProxies(" , ")).toEqual([]);
  });

  test("addresses and CIDRs, IPv4 and IPv6, separated by commas with or without spaces", () => {
    const parsed = parseTrustedProxies("10.0.0.0/8,192.168.1.10 , ::1, fd00::/8");
    expect(parsed.map(([a, bits]) => `${a.toString()}/${bits}`)).toEqual(["10.0.0.0/8", "192.168.1.10/32", "::1/128", "fd00::/8"]);
  });

  for (const bad of ["proxy.internal", "10", "10.0.0.0/33", "10.0.0.1/", "1.2.3.4/8x", "::1/129", "0x0a000001", "10.0.0.0/8;"])
    test(`${JSON.stringify(bad)} is refused with a message naming it`, () => {
      expect(() => parseTrustedProxies(`127.0.0.1,${bad}`)).toThrow(JSON.stringify(bad));
    });
});
