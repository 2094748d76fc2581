/**
 * Durability and shutdown (docs/operations.md §6.2): an acknowledged write survives kill -9, and
 * SIGTERM stops accepting, finishes the request in flight, and exits 0. Every step waits
 * for its observable cause: the kill lands after a number of acknowledged writes, and
 * SIGTERM is sent while a request is provably inside the server (it has passed
 * authentication and waits for the rest of its body on a raw socket). Each test's database
 * is a file of its own (on PostgreSQL, CRM_TEST_BACKEND=postgres: a database of its own),
 * the same one again on restart.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { databaseEnvAt, releaseDatabases } from "../helpers/postgres.ts";
import { ALL_SCOPES, makeApi, walk } from "../helpers/server.ts";
import { BUN, lastJson, runCommand, spawnServer, type SpawnedServer } from "../helpers/spawn.ts";
import { until } from "../helpers/until.ts";

const dir = mkdtempSync(join(tmpdir(), "crm-durability-"));
const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  await releaseDatabases(dir);
});

async function start(dbPath: string, opts: { expectKey?: boolean; env?: Record<string, string> } = {}) {
  const server = await spawnServer({ env: { ...(await databaseEnvAt(dbPath)), CRM_LOG_LEVEL: "info", ...opts.env }, expectKey: opts.expectKey });
  servers.push(server);
  return server;
}

const cli = async (dbPath: string, args: string[]) =>
  lastJson((await runCommand([BUN, "src/main.ts", ...args, "--json"], { env: { ...(process.env as Record<string, string>), ...(await databaseEnvAt(dbPath)) } })).stdout);

/** A raw HTTP/1.1 exchange whose body the test sends in parts. */
function rawRequest(port: number, head: string) {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  const answer = new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
    const tryParse = () => {
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const headers = received.slice(0, end);
      const length = Number(/content-length:\s*(\d+)/i.exec(headers)?.[1] ?? NaN);
      const body = received.slice(end + 4);
      if (Number.isFinite(length) && Buffer.byteLength(body) >= length) {
        resolve({ status: Number(headers.split(" ")[1]), headers, body });
        socket.destroy();
      }
    };
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
      tryParse();
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`connection closed; received:\n${received}`)));
  });
  socket.write(head);
  return { send: (text: string) => socket.write(text), answer };
}

describe("durability", () => {
  test("every create acknowledged before kill -9 is there after restart", async () => {
    const dbPath = join(dir, "kill.db");
    const first = await start(dbPath);
    const api = makeApi(first.baseUrl, async () => null);
    const project = await cli(dbPath, ["project", "create", "--name", "kill", "--rate-limit-per-minute", "1000000", "--contact-creates-per-hour", "1000000"]);
    const key = (await cli(dbPath, ["key", "create", "--project", project.id, "--scopes", ALL_SCOPES.join(",")])).key as string;
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        try {
          const res = await api("POST", "/contacts", { key, body: { firstName: `w${w}-${i}` } });
          if (res.status === 201) acknowledged.push(res.json.contactId);
          else throw new Error(`unexpected ${res.status} ${res.text}`);
        } catch (error) {
          if (!stop) throw error;
          return;
        }
      }
    });
    // The kill lands on a stream of writes: after 100 acknowledgements, with more in flight.
    await until(() => acknowledged.length >= 100, { timeoutMs: 20_000, what: "100 acknowledged creates" });
    stop = true;
    first.proc.kill("SIGKILL");
    await Promise.all(writers);
    expect(await first.exited).not.toBe(0);
    expect(acknowledged.length).toBeGreaterThanOrEqual(100);

    const second = await start(dbPath);
    const listed = new Set((await walk(makeApi(second.baseUrl, async () => key), "/contacts", { limit: 200 })).items.map((c) => c.contactId));
    expect(acknowledged.filter((id) => !listed.has(id))).toEqual([]);
    await second.stop();
  }, 60_000);

  test("SIGTERM with a request in flight: new connections are refused, the request is answered 201, the contact is there after restart, and the exit code is 0", async () => {
    const dbPath = join(dir, "term.db");
    const server = await start(dbPath);
    // 60 creates an hour refill one a minute: the create bucket's Remaining below cannot move by refill during the test.
    const project = await cli(dbPath, ["project", "create", "--name", "term", "--contact-creates-per-hour", "60"]);
    const key = (await cli(dbPath, ["key", "create", "--project", project.id, "--scopes", ALL_SCOPES.join(",")])).key as string;
    const api = makeApi(server.baseUrl, async () => key);

    const body = JSON.stringify({ firstName: "Drained", email: "drained@example.com" });
    const cut = body.indexOf('"Drained"');
    const request = rawRequest(
      server.port,
      `POST /v1/contacts HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n` +
        body.slice(0, cut),
    );

    // In flight = past authentication, which took a token from the create bucket: a probe
    // (an invalid create: 422, nothing written, but counted) sees one token more gone than
    // its own. Probe i answers Remaining 60 - i, or 59 - i once the raw request is counted.
    let probes = 0;
    await until(
      async () => {
        const probe = await api("POST", "/contacts", { body: {} });
        probes++;
        if (probe.status !== 422) throw new Error(`probe: ${probe.status} ${probe.text}`);
        return probe.headers.get("ratelimit-remaining") === String(59 - probes);
      },
      { timeoutMs: 10_000, what: "the raw request to pass authentication" },
    );

    server.proc.kill("SIGTERM");
    // The server has begun its shutdown: it logged it, and it no longer accepts connections.
    await until(() => server.stdout().includes('"msg":"shutting down"'), { timeoutMs: 10_000, what: "the shutdown log line" });
    await until(
      async () => {
        try {
          await fetch(`${server.origin}/healthz`);
          return false;
        } catch {
          return true;
        }
      },
      { timeoutMs: 10_000, what: "new connections to be refused" },
    );
    expect(server.proc.exitCode).toBeNull(); // still draining: our request is open

    request.send(body.slice(cut));
    const answer = await request.answer;
    expect(answer.status).toBe(201);
    const contact = JSON.parse(answer.body);
    expect(contact).toMatchObject({ firstName: "Drained", email: "drained@example.com" });
    expect(await server.exited).toBe(0);

    const again = await start(dbPath);
    const res = await makeApi(again.baseUrl, async () => key)("GET", `/contacts/${contact.contactId}`);
    expect(res.status).toBe(200);
    expect(res.json.firstName).toBe("Drained");
    await again.stop();
  }, 60_000);
});
