/**
 * Production address policy for subscriber URLs (docs/api.md §13.1, §7, §13.3, docs/webhooks.md §2.2):
 * only https URLs whose host is public; refusals are 422 ERR_FORM_VALIDATION fieldName "url",
 * at create and at update; and again at every delivery, connecting to the address checked.
 * The delivery-time rules run against the service in this process with the DNS resolver
 * replaced (test/helpers/in-process.ts), so a host can resolve one way at create and
 * another at delivery.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createServer, type AddressInfo } from "node:net";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startInProcess, type InProcessProject } from "../helpers/in-process.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startServer, walk, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

// Tests wait for real deliveries; bunfig's timeout is not applied by this bun version.
setDefaultTimeout(30_000);

let srv: ServerHandle;

beforeAll(async () => {
  srv = await startServer({ env: "production", extraEnv: { CRM_OUTBOX_POLL_MS: "50" } });
}, 30_000);

afterAll(async () => {
  await srv?.stop();
}, 30_000);

/** [URL, why it is refused] */
const REFUSED: [string, string][] = [
  ["http://example.com/hook", "plain http"],
  ["http://93.184.215.14/hook", "plain http to a public address"],
  ["ftp://example.com/hook", "ftp scheme"],
  ["ws://example.com/hook", "websocket scheme"],
  ["https://127.0.0.1/hook", "IPv4 loopback"],
  ["https://127.255.255.254/hook", "IPv4 loopback, end of 127/8"],
  ["https://localhost/hook", "localhost"],
  ["https://LOCALHOST:8443/hook", "localhost in capitals with a port"],
  ["https://foo.localhost/hook", "a *.localhost name"],
  ["https://[::1]/hook", "IPv6 loopback"],
  ["https://[0:0:0:0:0:0:0:1]/hook", "IPv6 loopback, long form"],
  ["https://0.0.0.0/hook", "0.0.0.0"],
  ["https://0/hook", "0 (= 0.0.0.0)"],
  ["https://0.1.2.3/hook", "0.0.0.0/8"],
  ["https://[::]/hook", "IPv6 unspecified"],
  ["https://10.0.0.1/hook", "private 10/8"],
  ["https://172.16.0.1/hook", "private 172.16/12"],
  ["https://172.31.255.254/hook", "private 172.16/12, upper end"],
  ["https://192.168.1.1/hook", "private 192.168/16"],
  ["https://169.254.169.254/latest/meta-data", "link-local cloud metadata"],
  ["https://100.64.0.1/hook", "CGNAT 100.64/10"],
  ["https://[fd00::1]/hook", "IPv6 unique-local"],
  ["https://[fd00:ec2::254]/hook", "AWS IPv6 metadata (unique-local)"],
  ["https://[fe80::1]/hook", "IPv6 link-local"],
  ["https://224.0.0.1/hook", "IPv4 multicast"],
  ["https://[ff02::1]/hook", "IPv6 multicast"],
  ["https://255.255.255.255/hook", "broadcast"],
  ["https://240.0.0.1/hook", "reserved 240/4"],
  ["https://192.0.0.1/hook", "IETF protocol assignments 192.0.0/24"],
  ["https://198.18.0.1/hook", "benchmarking 198.18/15"],
  ["https://192.0.2.1/hook", "documentation TEST-NET-1"],
  ["https://[::ffff:127.0.0.1]/hook", "IPv4-mapped loopback"],
  ["https://[::ffff:10.0.0.1]/hook", "IPv4-mapped private"],
  ["https://[::ffff:169.254.169.254]/hook", "IPv4-mapped metadata"],
  ["https://2130706433/hook", "loopback as one decimal number"],
  ["https://0x7f000001/hook", "loopback as one hex number"],
  ["https://017700000001/hook", "loopback as one octal number"],
  ["https://0177.0.0.1/hook", "loopback with an octal part"],
  ["https://127.1/hook", "loopback, short form"],
  ["https://0x7f.0.0.1/hook", "loopback with a hex part"],
  ["https://0xa9.0xfe.0xa9.0xfe/hook", "metadata address in hex parts"],
  ["https://167772161/hook", "10.0.0.1 as one decimal number"],
  ["https://127.0.0.1./hook", "loopback with a trailing dot"],
  ["https://metadata.google.internal/computeMetadata/v1", "GCP metadata name"],
  ["https://metadata/hook", "bare metadata name"],
  ["https://service.internal/hook", "a *.internal name"],
  ["https://printer.local/hook", "a *.local name"],
  ["https://user:pass@127.0.0.1/hook", "loopback behind credentials"],
  ["https://[::127.0.0.1]/hook", "IPv4-compatible loopback (::/96)"],
  ["https://[::7f00:1]/hook", "IPv4-compatible loopback, hex form"],
  ["https://[::a9fe:a9fe]/hook", "IPv4-compatible metadata address"],
  ["https://[::8.8.8.8]/hook", "IPv4-compatible form of a public address (::/96 is refused)"],
  ["https://[64:ff9b::a9fe:a9fe]/hook", "NAT64 form of the metadata address"],
  ["https://[64:ff9b::10.0.0.1]/hook", "NAT64 form of a private address"],
  ["https://[2002:7f00:1::]/hook", "6to4 form of loopback"],
  ["https://[2002:a9fe:a9fe::1]/hook", "6to4 form of the metadata address"],
  ["https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook", "Teredo whose client is 127.0.0.1"],
  ["https://[2001:0:4136:e378:8000:63bf:5601:5601]/hook", "Teredo whose client is 169.254.169.254"],
  ["https://user:pass@93.184.215.14/hook", "credentials (user and password) on a public address"],
  ["https://user@93.184.215.14/hook", "credentials (user only) on a public address"],
  ["https://:secret@93.184.215.14/hook", "credentials (password only) on a public address"],
  ["https://127.0.0.1:443/hook", "loopback with an explicit port"],
  ["not a url", "not a URL at all"],
];

describe("refused subscriber URLs in production (422, fieldName url)", () => {
  for (const [url, why] of REFUSED)
    test(`POST /webhooks refuses ${why}: ${url}`, async () => {
      const res = await srv.api("POST", "/webhooks", { body: { url, events: ["*"] } });
      expectError(res, "ERR_FORM_VALIDATION", "url");
    });

  test("no refused URL left a subscription behind", async () => {
    const { items } = await walk(srv.api, "/webhooks", { limit: 200 });
    const urls = new Set(REFUSED.map(([u]) => u));
    expect(items.filter((w) => urls.has(w.url))).toEqual([]);
  });
});

describe("names of internal zones are refused even with a trailing dot (the same host)", () => {
  for (const url of ["https://localhost./hook", "https://metadata.google.internal./computeMetadata/v1", "https://printer.local./hook"])
    test(`POST /webhooks refuses ${url}`, async () => {
      const res = await srv.api("POST", "/webhooks", { body: { url, events: ["*"] } });
      expectError(res, "ERR_FORM_VALIDATION", "url");
    });
});

describe("accepted subscriber URLs in production", () => {
  const ACCEPTED = [
    "https://93.184.215.14/hook",
    "https://[2606:4700::1111]/x",
    "https://8.8.8.8:8443/in?x=1",
    // IPv6 forms judged by the public IPv4 address they embed (docs/webhooks.md §4.4).
    "https://[64:ff9b::808:808]/nat64",
    "https://[2002:808:808::1]/6to4",
    "https://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/teredo",
  ];
  for (const url of ACCEPTED)
    test(`POST /webhooks accepts a public https address: ${url}`, async () => {
      const res = await srv.api("POST", "/webhooks", { body: { url, events: ["contact.created"] } });
      expectStatus(res, 201);
      expect(res.json.status).toBe("active");
      expect(res.json.secret).toMatch(/^whsec_/);
      expectStatus(await srv.api("DELETE", `/webhooks/${res.json.id}`), 204);
    });
});

describe("PATCH applies the same policy", () => {
  const PATCH_REFUSED = [
    "http://93.184.215.14/hook",
    "https://127.0.0.1/hook",
    "https://169.254.169.254/latest/meta-data",
    "https://[::ffff:10.0.0.1]/hook",
    "https://0x7f000001/hook",
    "https://metadata.google.internal/",
    "https://foo.localhost/hook",
    "https://[::7f00:1]/hook",
    "https://[2002:a9fe:a9fe::]/hook",
    "https://user:pass@93.184.215.14/hook",
    "https://token@93.184.215.14/hook",
  ];
  for (const url of PATCH_REFUSED)
    test(`PATCH /webhooks/{id} refuses ${url} and keeps the old url`, async () => {
      const created = await srv.api("POST", "/webhooks", { body: { url: "https://93.184.215.14/hook", events: ["*"] } });
      expectStatus(created, 201);
      const res = await srv.api("PATCH", `/webhooks/${created.json.id}`, { body: { url } });
      expectError(res, "ERR_FORM_VALIDATION", "url");
      const got = await srv.api("GET", `/webhooks/${created.json.id}`);
      expect(got.json.url).toBe("https://93.184.215.14/hook");
      await srv.api("DELETE", `/webhooks/${created.json.id}`);
    });

  test("PATCH /webhooks/{id} accepts another public https url", async () => {
    const created = await srv.api("POST", "/webhooks", { body: { url: "https://93.184.215.14/hook", events: ["*"] } });
    expectStatus(created, 201);
    const res = await srv.api("PATCH", `/webhooks/${created.json.id}`, { body: { url: "https://[2606:4700::1111]/x" } });
    expectStatus(res, 200);
    expect(res.json.url).toBe("https://[2606:4700::1111]/x");
    await srv.api("DELETE", `/webhooks/${created.json.id}`);
  });
});

// ---------------------------------------------------------------- at delivery time

const WAIT_MS = 20_000;

async function attemptsOf(p: InProcessProject, id: string, n: number) {
  let last: any[] = [];
  return until(
    async () => {
      last = (await p.api("GET", `/webhooks/${id}/attempts`)).json.data;
      return last.length >= n ? last : undefined;
    },
    { timeoutMs: WAIT_MS, intervalMs: 50, what: () => `${n} attempts of ${id} (have ${JSON.stringify(last)})` },
  );
}

describe("at every delivery the address is checked again (docs/webhooks.md §2)", () => {
  test("in production, a host that resolved to a public address at create and resolves to loopback or a mix now is a failed attempt with the policy's reason, on the schedule; nothing connects", async () => {
    // A TCP listener on loopback counts connections: an https delivery to it would be one,
    // whatever came of its TLS handshake.
    let connections = 0;
    const listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    const port = (listener.address() as AddressInfo).port;
    let answer = ["93.184.216.34"];
    const server = await startInProcess({
      env: { CRM_ENV: "production", CRM_WEBHOOK_RETRY_SCHEDULE: "1s", CRM_OUTBOX_POLL_MS: "50" },
      overrides: { resolve: async (host) => (host === "rebind.example.com" ? answer : []) },
    });
    try {
      const p = await server.newProject();
      const created = await p.api("POST", "/webhooks", { body: { url: `https://rebind.example.com:${port}/hook`, events: ["contact.created"] } });
      expectStatus(created, 201);
      answer = ["127.0.0.1"];
      expectStatus(await p.api("POST", "/contacts", { body: { firstName: "Rebind" } }), 201);
      const [first] = await attemptsOf(p, created.json.id, 1);
      expect(first).toMatchObject({ attempt: 1, statusCode: null });
      expect(first.error).toContain("public address");
      // The retry (1 s later) checks again: one private address among public ones is refused too.
      answer = ["93.184.216.34", "127.0.0.1"];
      const [second] = await attemptsOf(p, created.json.id, 2);
      expect(second).toMatchObject({ attempt: 2, statusCode: null });
      expect(second.error).toContain("public address");
      const hook = (await p.api("GET", `/webhooks/${created.json.id}`)).json;
      expect(hook).toMatchObject({ status: "disabled", consecutiveFailures: 2 });
      expect(connections).toBe(0);
    } finally {
      await server.stop();
      listener.close();
    }
  }, 60_000);

  // Production refuses every address a test can listen on, so the pinning is shown in
  // sandbox: the same attempt (src/webhooks/attempt.ts: check, then connect to the checked
  // address) with a policy that lets loopback through. `.invalid` never resolves in DNS
  // (RFC 6761): a delivery reaches the receiver only through the address the service's
  // resolver gave.
  test("a delivery connects to the address the check resolved for that attempt, never to a lookup of its own", async () => {
    // The receiver keeps its connection alive: a pooled socket must not carry the next
    // delivery to the address it was opened to (src/webhooks/sender.ts pools per address).
    const rx = await startReceiver({ status: 200 });
    const host = "hooks.pinned.invalid";
    let answer = ["127.0.0.1"];
    const server = await startInProcess({
      env: { CRM_ENV: "sandbox", CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50" },
      overrides: { resolve: async (name) => (name === host ? answer : []) },
    });
    try {
      const p = await server.newProject();
      const created = await p.api("POST", "/webhooks", { body: { url: `http://${host}:${rx.port}/hook`, events: ["contact.created"] } });
      expectStatus(created, 201);
      const c1 = await p.api("POST", "/contacts", { body: { firstName: "Pinned" } });
      expectStatus(c1, 201);
      const [got] = await rx.waitFor(1, WAIT_MS);
      expect(got!.json.data.contact.contactId).toBe(c1.json.contactId);
      expect(got!.headers.host).toBe(`${host}:${rx.port}`); // the URL's host, sent to the pinned address

      // The name now resolves to a loopback address nothing listens on: the next delivery
      // goes there (refused), not to the address that worked before.
      answer = ["127.0.0.2"];
      const c2 = await p.api("POST", "/contacts", { body: { firstName: "Moved" } });
      expectStatus(c2, 201);
      const attempts = await attemptsOf(p, created.json.id, 2);
      expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: null });
      expect(attempts[0].error).toContain("127.0.0.2"); // e.g. "connect ECONNREFUSED 127.0.0.2:<port>"
      expect(rx.requests).toHaveLength(1);
      // Back to the receiver's address: the retry arrives.
      answer = ["127.0.0.1"];
      const [, retried] = await rx.waitFor(2, WAIT_MS);
      expect(retried!.json.data.contact.contactId).toBe(c2.json.contactId);
    } finally {
      await server.stop();
      await rx.stop();
    }
  }, 60_000);
});
