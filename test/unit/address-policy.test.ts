/**
 * Subscriber address policy (docs/api.md §13.1, §7, §13.3, docs/webhooks.md §2.2): production takes only
 * https URLs whose host resolves only to public addresses; sandbox also takes http and local
 * addresses. The resolver is injected, so DNS answers are the test's to choose.
 */
import { describe, expect, test } from "bun:test";
import { checkUrl, isPublicAddress, systemResolver, type Resolver } from "../../src/webhooks/address-policy.ts";

const PUBLIC = [
  "93.184.215.14",
  "8.8.8.8",
  "1.1.1.1",
  "34.117.59.81",
  "2606:4700::1111",
  "2a00:1450:4001:82a::200e",
  "[2606:4700::1111]",
  // IPv6 forms that embed a public IPv4 address are judged by it (docs/webhooks.md §4.4).
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
  "64:ff9b::8.8.8.8",
  "2002:808:808::1",
  "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
];

const NOT_PUBLIC: [string, string][] = [
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback /8"],
  ["::1", "IPv6 loopback"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "0.0.0.0/8"],
  ["::", "IPv6 unspecified"],
  ["10.0.0.1", "private 10/8"],
  ["172.16.0.1", "private 172.16/12"],
  ["172.31.255.255", "private 172.16/12 top"],
  ["192.168.1.1", "private 192.168/16"],
  ["169.254.169.254", "link-local metadata"],
  ["100.64.0.1", "CGNAT"],
  ["100.127.255.254", "CGNAT top"],
  ["fd00::1", "unique-local"],
  ["fc00::1", "unique-local fc00::/7"],
  ["fd00:ec2::254", "AWS IPv6 metadata"],
  ["fe80::1", "link-local v6"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast SSDP"],
  ["ff02::1", "multicast v6"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved 240/4"],
  ["192.0.0.1", "IETF 192.0.0/24"],
  ["192.0.2.1", "TEST-NET-1"],
  ["198.18.0.1", "benchmarking"],
  ["198.51.100.7", "TEST-NET-2"],
  ["203.0.113.9", "TEST-NET-3"],
  ["2001:db8::1", "IPv6 documentation"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::ffff:169.254.169.254", "IPv4-mapped metadata"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, hex form"],
  ["[::1]", "bracketed loopback"],
  ["64:ff9b::a00:1", "NAT64 form of 10.0.0.1"],
  ["64:ff9b::7f00:1", "NAT64 form of 127.0.0.1"],
  ["2002:a00:1::", "6to4 form of 10.0.0.1"],
  ["::127.0.0.1", "IPv4-compatible loopback (::/96)"],
  ["::7f00:1", "IPv4-compatible loopback, hex form"],
  ["::a9fe:a9fe", "IPv4-compatible metadata address"],
  ["::8.8.8.8", "IPv4-compatible form of a public address: ::/96 is refused outright"],
  ["::ffff:0:808:808", "IPv4-translated (RFC 6145)"],
  ["64:ff9b::a9fe:a9fe", "NAT64 form of the metadata address"],
  ["64:ff9b::192.168.0.1", "NAT64 form of a private address, dotted"],
  ["64:ff9b:1::808:808", "local-use NAT64 prefix (RFC 8215)"],
  ["2002:7f00:1::", "6to4 form of 127.0.0.1"],
  ["2002:a9fe:a9fe::1", "6to4 form of the metadata address"],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", "Teredo whose client is 127.0.0.1 (bits inverted)"],
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", "Teredo whose client is 10.0.0.1"],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo whose client is 192.0.2.45 (RFC 4380's example, documentation range)"],
  ["not-an-ip", "not an address"],
  ["", "empty"],
];

describe("isPublicAddress", () => {
  for (const a of PUBLIC) test(`${a} is public`, () => expect(isPublicAddress(a)).toBe(true));
  for (const [a, why] of NOT_PUBLIC) test(`${a} (${why}) is not public`, () => expect(isPublicAddress(a)).toBe(false));
});

/** A resolver answering from a table and recording what it was asked. */
function table(answers: Record<string, string[] | Error>) {
  const asked: string[] = [];
  const resolve: Resolver = async (host) => {
    asked.push(host);
    const a = answers[host];
    if (a instanceof Error) throw a;
    return a ?? [];
  };
  return { resolve, asked };
}

describe("checkUrl in production", () => {
  test("a name resolving only to public addresses is accepted, with those addresses to connect to", async () => {
    const { resolve } = table({ "hooks.example.com": ["93.184.215.14", "2606:4700::1111"] });
    const v = await checkUrl("https://hooks.example.com/crm", "production", resolve, true);
    expect(v.ok).toBe(true);
    if (v.ok) {
      expect(v.url.hostname).toBe("hooks.example.com");
      expect([...v.addresses].sort()).toEqual(["2606:4700::1111", "93.184.215.14"]);
    }
  });

  test("a name resolving to one public and one private address is refused", async () => {
    const { resolve } = table({ "mixed.example.com": ["93.184.215.14", "10.0.0.7"] });
    const v = await checkUrl("https://mixed.example.com/", "production", resolve, true);
    expect(v.ok).toBe(false);
    const late = await checkUrl("https://mixed.example.com/", "production", resolve, false);
    expect(late.ok).toBe(false);
  });

  for (const [name, addr] of [
    ["rebind.example.com", "127.0.0.1"],
    ["meta.example.com", "169.254.169.254"],
    ["v6.example.com", "::1"],
    ["mapped.example.com", "::ffff:192.168.0.1"],
    ["cgnat.example.com", "100.64.1.1"],
    ["ula.example.com", "fd12:3456::1"],
  ] as const)
    test(`a public-looking name that resolves to ${addr} is refused`, async () => {
      const { resolve } = table({ [name]: [addr] });
      expect((await checkUrl(`https://${name}/x`, "production", resolve, true)).ok).toBe(false);
      expect((await checkUrl(`https://${name}/x`, "production", resolve, false)).ok).toBe(false);
    });

  test("http is refused even to a public address", async () => {
    const { resolve } = table({ "hooks.example.com": ["93.184.215.14"] });
    expect((await checkUrl("http://hooks.example.com/", "production", resolve, true)).ok).toBe(false);
    expect((await checkUrl("http://93.184.215.14/", "production", resolve, true)).ok).toBe(false);
  });

  for (const url of ["ftp://93.184.215.14/", "file:///etc/passwd", "ws://93.184.215.14/", "gopher://93.184.215.14/", "not a url", ""])
    test(`${JSON.stringify(url)} is refused`, async () => {
      const { resolve } = table({});
      expect((await checkUrl(url, "production", resolve, false)).ok).toBe(false);
    });

  for (const url of [
    "https://127.0.0.1/",
    "https://2130706433/",
    "https://0x7f000001/",
    "https://0177.0.0.1/",
    "https://127.1/",
    "https://[::ffff:127.0.0.1]/",
    "https://[::]/",
    "https://0.0.0.0/",
    "https://169.254.169.254/",
    "https://[fd00:ec2::254]/",
    "https://[::127.0.0.1]/",
    "https://[::7f00:1]/",
    "https://[::a9fe:a9fe]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a9fe:a9fe::]/",
  ])
    test(`the IP literal ${url} is judged at once, without asking the resolver`, async () => {
      const { resolve, asked } = table({});
      expect((await checkUrl(url, "production", resolve, false)).ok).toBe(false);
      expect(asked).toEqual([]);
    });

  for (const host of ["localhost", "foo.localhost", "metadata.google.internal", "db.internal", "printer.local", "metadata"])
    test(`the internal name ${host} is refused even if DNS claims a public address`, async () => {
      const { resolve } = table({ [host]: ["93.184.215.14"] });
      expect((await checkUrl(`https://${host}/`, "production", resolve, false)).ok).toBe(false);
      expect((await checkUrl(`https://${host}/`, "production", resolve, true)).ok).toBe(false);
    });

  for (const host of ["localhost.", "foo.localhost.", "metadata.google.internal.", "printer.local."])
    test(`the internal name ${host} with a trailing dot (the same host) is refused even if DNS claims a public address`, async () => {
      const { resolve } = table({ [host]: ["93.184.215.14"] });
      expect((await checkUrl(`https://${host}/`, "production", resolve, false)).ok).toBe(false);
      expect((await checkUrl(`https://${host}/`, "production", resolve, true)).ok).toBe(false);
    });

  test("public IP literals are accepted and are the address connected to", async () => {
    const { resolve, asked } = table({});
    const v4 = await checkUrl("https://93.184.215.14/hook", "production", resolve, true);
    expect(v4.ok && v4.addresses).toEqual(["93.184.215.14"]);
    const v6 = await checkUrl("https://[2606:4700::1111]/x", "production", resolve, true);
    expect(v6.ok).toBe(true);
    if (v6.ok) expect(v6.addresses.map((a) => a.replace(/^\[|\]$/g, ""))).toEqual(["2606:4700::1111"]);
    expect(asked).toEqual([]);
  });

  test("at delivery (resolution required) a name that does not resolve is refused", async () => {
    const { resolve } = table({ "gone.example.com": [], "broken.example.com": new Error("SERVFAIL") });
    expect((await checkUrl("https://gone.example.com/", "production", resolve, true)).ok).toBe(false);
    expect((await checkUrl("https://broken.example.com/", "production", resolve, true)).ok).toBe(false);
  });

  test("at create (resolution not required) a name that does not resolve yet is accepted, to be checked at delivery", async () => {
    const { resolve, asked } = table({ "later.example.com": [] });
    const v = await checkUrl("https://later.example.com/", "production", resolve, false);
    expect(v.ok).toBe(true);
    expect(asked).toEqual(["later.example.com"]);
  });

  test("every call resolves afresh: a name that turns private after creation is refused at delivery", async () => {
    let answer = ["93.184.215.14"];
    const resolve: Resolver = async () => answer;
    expect((await checkUrl("https://flip.example.com/", "production", resolve, false)).ok).toBe(true);
    answer = ["127.0.0.1"];
    expect((await checkUrl("https://flip.example.com/", "production", resolve, true)).ok).toBe(false);
  });
});

describe("credentials in the URL are refused in every environment (docs/api.md §13.3)", () => {
  for (const env of ["production", "sandbox"] as const)
    for (const url of ["https://user:pass@hooks.example.com/in", "https://user@hooks.example.com/in", "https://:secret@hooks.example.com/in", "http://u:p@127.0.0.1:8080/in"])
      test(`${env}: ${url}`, async () => {
        const { resolve, asked } = table({ "hooks.example.com": ["93.184.215.14"] });
        const v = await checkUrl(url, env, resolve, false);
        expect(v.ok).toBe(false);
        if (!v.ok) expect(v.reason).toContain("credentials");
        expect(asked).toEqual([]);
      });

  test("an empty user part (`https://@host/`) is no credential: the URL parser drops it", async () => {
    const { resolve } = table({ "hooks.example.com": ["93.184.215.14"] });
    const v = await checkUrl("https://@hooks.example.com/in", "production", resolve, false);
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.url.href).toBe("https://hooks.example.com/in");
  });
});

describe("checkUrl in sandbox", () => {
  test("http and https to loopback and private addresses are accepted", async () => {
    const { resolve } = table({ localhost: ["127.0.0.1"] });
    for (const url of ["http://127.0.0.1:8080/hook", "https://127.0.0.1/hook", "http://localhost:3000/x", "http://10.0.0.5/h", "http://[::1]:9/x"]) {
      const v = await checkUrl(url, "sandbox", resolve, true);
      expect(v.ok, url).toBe(true);
    }
  });

  test("schemes other than http(s) and non-URLs are still refused", async () => {
    const { resolve } = table({});
    for (const url of ["ftp://127.0.0.1/", "file:///tmp/x", "javascript:alert(1)", "nonsense"])
      expect((await checkUrl(url, "sandbox", resolve, false)).ok, url).toBe(false);
  });
});

describe("what a refusal says (it is the 422 message of `url`, docs/api.md §13.3, §16)", () => {
  const cases: Array<[string, "production" | "sandbox", Record<string, string[] | Error>, boolean, string]> = [
    ["not a url", "production", {}, false, "url is not a valid URL."],
    ["http://hooks.example.com/", "production", {}, false, "url must use https."],
    ["ftp://hooks.example.com/", "sandbox", {}, false, "url must be http(s)."],
    ["https://127.0.0.1/", "production", {}, false, "url must resolve to a public address."],
    ["https://printer.local/", "production", {}, false, "url must resolve to a public address."],
    ["https://mixed.example.com/", "production", { "mixed.example.com": ["93.184.215.14", "10.0.0.7"] }, true, "url must resolve to a public address."],
    ["https://gone.example.com/", "production", {}, true, "url host gone.example.com could not be resolved."],
    ["https://gone.example.com./", "production", {}, true, "url host gone.example.com could not be resolved."],
  ];
  for (const [url, env, answers, requireResolution, reason] of cases)
    test(`${env}: ${url} → "${reason}"`, async () => {
      const v = await checkUrl(url, env, table(answers).resolve, requireResolution);
      expect(v).toEqual({ ok: false, reason });
    });
});

describe("names are judged by their suffix, not by a word they contain", () => {
  for (const host of ["internal.example.com", "local.example.com", "localhost.example.com", "metadata.example.com", "openmetadata"])
    test(`${host}, resolving to a public address, is accepted`, async () => {
      const v = await checkUrl(`https://${host}/in`, "production", table({ [host]: ["93.184.215.14"] }).resolve, true);
      expect(v.ok).toBe(true);
    });

  for (const host of ["LOCALHOST", "Metadata.Google.Internal", "router.home.arpa", "nas.localdomain"])
    test(`${host} is refused in any letter case`, async () => {
      const v = await checkUrl(`https://${host}/in`, "production", table({ [host.toLowerCase()]: ["93.184.215.14"] }).resolve, true);
      expect(v.ok).toBe(false);
    });
});

describe("a lookup that fails", () => {
  test("at create it counts as not resolving yet: accepted, with nothing to connect to", async () => {
    const v = await checkUrl("https://broken.example.com/", "production", table({ "broken.example.com": new Error("SERVFAIL") }).resolve, false);
    expect(v.ok && v.addresses).toEqual([]);
  });

  test("at delivery it is refused, in sandbox too", async () => {
    for (const env of ["production", "sandbox"] as const) {
      const v = await checkUrl("https://broken.example.com/", env, table({ "broken.example.com": new Error("SERVFAIL") }).resolve, true);
      expect(v).toEqual({ ok: false, reason: "url host broken.example.com could not be resolved." });
    }
  });

  test("sandbox connects to whatever a local name resolves to", async () => {
    const v = await checkUrl("http://dev.local:3000/in", "sandbox", table({ "dev.local": ["10.0.0.5"] }).resolve, true);
    expect(v.ok && v.addresses).toEqual(["10.0.0.5"]);
  });
});

describe("addresses with a zone id (`%eth0`), which the URL parser refuses", () => {
  test("an IPv4-mapped loopback with a zone id is still not public, and judging it never throws", () => {
    expect(isPublicAddress("::ffff:127.0.0.1%eth0")).toBe(false);
    expect(isPublicAddress("fe80::1%eth0")).toBe(false);
  });
});

describe("systemResolver", () => {
  // An IP literal is answered by getaddrinfo itself: no DNS server is asked, so this is deterministic.
  test("answers every address as a string, an IP literal being its own answer", async () => {
    expect(await systemResolver("127.0.0.1")).toEqual(["127.0.0.1"]);
    expect(await systemResolver("::1")).toEqual(["::1"]);
  });
});
