/**
 * Durability and shutdown (decisions §11): an acknowledged write survives kill -9, and
 * SIGTERM drains requests in flight and exits 0.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, KEY_PATTERN, REPO_ROOT, sleep } from "../helpers/server.ts";

const BUN = join(REPO_ROOT, "node_modules/.bin/bun");
const dir = mkdtempSync(join(tmpdir(), "crm-durability-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function spawnServer(dbPath: string) {
  const port = freePort();
  const proc = Bun.spawn([BUN, "src/main.ts", "serve"], {
    cwd: REPO_ROOT,
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", CRM_DB_PATH: dbPath, CRM_LOG_LEVEL: "warn" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  const reader = proc.stdout.getReader();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out += new TextDecoder().decode(value);
    }
  })();
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${origin}/healthz`)).status === 200) break;
    } catch {
      await sleep(50);
    }
  }
  return { proc, origin, output: () => out };
}

describe("durability", () => {
  test("every create acknowledged before kill -9 is there after restart", async () => {
    const dbPath = join(dir, "kill.db");
    const first = await spawnServer(dbPath);
    await sleep(100);
    const key = first.output().match(KEY_PATTERN)![0];
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop && i < 500; i++) {
        try {
          const res = await fetch(`${first.origin}/v1/contacts`, {
            method: "POST",
            headers,
            body: JSON.stringify({ firstName: `w${w}-${i}` }),
          });
          if (res.status === 201) acknowledged.push((await res.json()).contactId);
        } catch {
          return;
        }
      }
    });
    await sleep(400);
    first.proc.kill("SIGKILL");
    stop = true;
    await Promise.all(writers);
    await first.proc.exited;
    expect(acknowledged.length).toBeGreaterThan(10);

    const second = await spawnServer(dbPath);
    try {
      for (const contactId of acknowledged.slice(0, 110)) {
        const res = await fetch(`${second.origin}/v1/contacts/${contactId}`, { headers });
        expect(res.status).toBe(200);
      }
      const list = await fetch(`${second.origin}/v1/contacts?limit=200`, { headers });
      const ids = new Set<string>();
      let page = await list.json();
      for (;;) {
        for (const c of page.data) ids.add(c.contactId);
        if (!page.pagination.hasMore) break;
        page = await (await fetch(`${second.origin}/v1/contacts?limit=200&cursor=${page.pagination.nextCursor}`, { headers })).json();
      }
      for (const id of acknowledged) expect(ids.has(id)).toBe(true);
    } finally {
      second.proc.kill("SIGKILL");
      await second.proc.exited;
    }
  }, 60_000);

  test("SIGTERM answers the request in flight, refuses new connections and exits 0", async () => {
    const dbPath = join(dir, "term.db");
    const server = await spawnServer(dbPath);
    await sleep(100);
    const key = server.output().match(KEY_PATTERN)![0];
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json" };
    // A body that arrives slowly keeps a request in flight while SIGTERM lands.
    let push!: (chunk: string) => void;
    let close!: () => void;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (chunk) => controller.enqueue(new TextEncoder().encode(chunk));
        close = () => controller.close();
      },
    });
    const inFlight = fetch(`${server.origin}/v1/contacts`, { method: "POST", headers, body, duplex: "half" } as RequestInit);
    push('{"firstName":');
    await sleep(200);
    server.proc.kill("SIGTERM");
    await sleep(200);
    push('"Drained"}');
    close();
    const res = await inFlight;
    expect(res.status).toBe(201);
    expect((await res.json()).firstName).toBe("Drained");
    expect(await server.proc.exited).toBe(0);
    await expect(fetch(`${server.origin}/healthz`)).rejects.toThrow();
  }, 30_000);
});
