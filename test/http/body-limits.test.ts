/**
 * Every request body's limit, enforced while it streams in (docs/security.md §2): a table
 * over every route of the app (API, web forms, console), one byte over and exactly at the
 * limit, declared by Content-Length and sent chunked; paths that only look like a
 * larger-limit route get the default; many large bodies at once leave the server's memory
 * where it was.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { adminApp } from "../../src/admin/app.tsx";
import { createApi } from "../../src/app.ts";
import { BATCH_BODY_BYTES, bodyLimitOf, DEFAULT_BODY_BYTES, UPLOAD_BODY_BYTES } from "../../src/http/body-limit.ts";
import { AdminClient } from "../helpers/admin.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

const MiB = 1024 * 1024;
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Every write route of the app as a concrete path (parameters filled with a made-up id). */
function everyWriteRoute(): { method: string; path: string }[] {
  const api = createApi()
    .openAPIRegistry.definitions.filter((d) => d.type === "route")
    .map((d) => (d as unknown as { route: { method: string; path: string } }).route)
    .map((r) => ({ method: r.method.toUpperCase(), path: `/v1${r.path.replace(/\{[^}]+\}/g, "x1")}` }));
  const console = adminApp()
    .routes.filter((r) => WRITES.has(r.method) && !r.path.includes("*"))
    .map((r) => ({ method: r.method, path: `/admin${r.path.replace(/:[^/]+/g, "x1")}` }));
  const all = [...api, ...console].filter((r) => WRITES.has(r.method));
  return [...new Map(all.map((r) => [`${r.method} ${r.path}`, r])).values()];
}

const filled = (bytes: number) => new Uint8Array(bytes).fill(0x61);

/** A body of `bytes` sent without Content-Length (chunked), in 64 KiB pieces made as they are pulled. */
function chunked(bytes: number): ReadableStream<Uint8Array> {
  const piece = filled(64 * 1024);
  let left = bytes;
  return new ReadableStream({
    pull(stream) {
      if (left <= 0) return stream.close();
      const n = Math.min(left, piece.byteLength);
      stream.enqueue(n === piece.byteLength ? piece : piece.subarray(0, n));
      left -= n;
    },
  });
}

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

/** The answer of a refused body: the envelope under /v1, a page in the console. */
async function expectTooLarge(res: Response, path: string) {
  const text = await res.text();
  expect(res.status).toBe(413);
  if (path.startsWith("/admin")) {
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(text).toContain("Too large");
  } else {
    expect(JSON.parse(text)).toMatchObject({ statusCode: 413, code: "ERR_PAYLOAD_TOO_LARGE" });
  }
}

describe("the limits (docs/security.md §2)", () => {
  test("1 MiB by default, 5 MiB on the batch routes, 20 MiB on the console's upload and nowhere else", () => {
    expect(bodyLimitOf("POST", "/v1/contacts")).toBe(DEFAULT_BODY_BYTES);
    expect(DEFAULT_BODY_BYTES).toBe(MiB);
    expect(bodyLimitOf("POST", "/v1/contacts/batch")).toBe(BATCH_BODY_BYTES);
    expect(bodyLimitOf("POST", "/v1/interactions/batch")).toBe(5 * MiB);
    expect(bodyLimitOf("POST", "/admin/projects/prj_1/import")).toBe(UPLOAD_BODY_BYTES);
    expect(UPLOAD_BODY_BYTES).toBe(20 * MiB);
    // Paths of another shape get the default, whatever they end in.
    for (const [method, path] of [
      ["POST", "/admin/x/import"],
      ["POST", "/admin/import"],
      ["POST", "/admin/projects/prj_1/import/extra"],
      ["POST", "/admin/projects/prj_1/x/import"],
      ["PUT", "/admin/projects/prj_1/import"],
      ["POST", "/v1/contacts/batch/x"],
      ["POST", "/v1/webhooks/batch"],
      ["POST", "/x/admin/projects/prj_1/import"],
    ] as const) {
      expect(bodyLimitOf(method, path)).toBe(DEFAULT_BODY_BYTES);
    }
  });
});

describe("one byte over its limit is 413 on every route (the API's after its key, the console's before its session and token)", () => {
  const routes = everyWriteRoute();

  test("the table covers the API, the web forms and the console", () => {
    const paths = routes.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain("POST /v1/contacts");
    expect(paths).toContain("POST /v1/forms/x1/submissions");
    expect(paths).toContain("DELETE /v1/webhooks/x1");
    expect(paths).toContain("POST /admin/sign-in");
    expect(paths).toContain("POST /admin/projects/x1/import");
    expect(routes.length).toBeGreaterThan(30);
  });

  for (const { method, path } of routes) {
    const limit = bodyLimitOf(method, path);
    test(`${method} ${path}: ${limit + 1} bytes declared by Content-Length are 413; ${limit} are not`, async () => {
      const headers: Record<string, string> = path.startsWith("/admin") ? { Origin: server.origin } : { Authorization: `Bearer ${server.key}` };
      const over = await fetch(server.origin + path, { method, body: filled(limit + 1), headers });
      await expectTooLarge(over, path);
      // With a key the 413 is an answer like any other: it carries the key's RateLimit headers.
      if (path.startsWith("/v1/") && !path.startsWith("/v1/forms/")) expect(over.headers.get("ratelimit-limit")).not.toBeNull();
      const at = await fetch(server.origin + path, { method, body: filled(limit), headers });
      await at.arrayBuffer();
      expect(at.status).not.toBe(413);
    });
  }

  test("without a key the API answers 401 and never reads the body", async () => {
    const res = await fetch(`${server.baseUrl}/contacts`, { method: "POST", body: chunked(64 * MiB), duplex: "half", headers: { "Content-Type": "application/json" } } as RequestInit);
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  });

  test("paths shaped like the upload route get 1 MiB, answered at once without a session", async () => {
    for (const path of ["/admin/x/import", "/admin/projects/x1/import/extra", "/admin/import"]) {
      const res = await fetch(server.origin + path, { method: "POST", body: filled(MiB + 1), headers: { Origin: server.origin } });
      await expectTooLarge(res, path);
    }
  });
});

describe("a body without Content-Length is counted as it streams in", () => {
  test("the API: a chunked body one byte over 1 MiB is 413 with a valid key; exactly 1 MiB is read", async () => {
    const send = (bytes: number) =>
      fetch(`${server.baseUrl}/contacts`, {
        method: "POST",
        body: chunked(bytes),
        duplex: "half",
        headers: { Authorization: `Bearer ${server.key}`, "Content-Type": "application/json" },
      } as RequestInit);
    await expectTooLarge(await send(MiB + 1), "/v1/contacts");
    const at = await send(MiB);
    expect(at.status).toBe(422); // read whole, then refused as JSON (it is a run of "a")
    expect((await at.json()).code).toBe("ERR_INVALID_JSON");
  });

  test("a web form: a chunked JSON body over 1 MiB is 413", async () => {
    const res = await fetch(`${server.baseUrl}/forms/frm_nothing/submissions`, {
      method: "POST",
      body: chunked(MiB + 1),
      duplex: "half",
      headers: { "Content-Type": "application/json" },
    } as RequestInit);
    // The form is looked up first (404 needs no body); an unknown one is refused without reading.
    expect([404, 413]).toContain(res.status);
    await res.arrayBuffer();
  });

  test("the console: a chunked form post with its token over 1 MiB is a 413 page, not a CSRF refusal", async () => {
    const browser = new AdminClient(server.origin);
    await browser.get("/admin/sign-in"); // the pre-session cookie
    const res = await fetch(`${server.origin}/admin/sign-in`, {
      method: "POST",
      body: chunked(MiB + 1),
      duplex: "half",
      headers: {
        Origin: server.origin,
        "Content-Type": "application/x-www-form-urlencoded",
        Cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; "),
      },
    } as RequestInit);
    await expectTooLarge(res, "/admin/sign-in");
  });

  test("the console: a post with no session and no pre-session cookie is refused before its body is read", async () => {
    const res = await fetch(`${server.origin}/admin/projects/x1/import`, {
      method: "POST",
      body: chunked(64 * MiB),
      duplex: "half",
      headers: { Origin: server.origin, "Content-Type": "multipart/form-data; boundary=x" },
    } as RequestInit);
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("Form refused");
  });
});

/** The server's resident and peak resident memory (Linux /proc), in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

describe("many large bodies at once", () => {
  test("24 bodies of 64 MiB in parallel (1.5 GiB offered) grow the server by less than the limits in flight", async () => {
    const pid = server.process.proc.pid;
    // Warm every path once, then measure from the peak so far.
    await (await fetch(`${server.origin}/admin/x/import`, { method: "POST", body: "x", headers: { Origin: server.origin } })).arrayBuffer();
    const before = memoryOf(pid);
    const targets: { path: string; headers: Record<string, string> }[] = [
      { path: "/admin/x/import", headers: { Origin: server.origin, "Content-Type": "multipart/form-data; boundary=x" } },
      { path: "/admin/projects/x1/import", headers: { Origin: server.origin, "Content-Type": "multipart/form-data; boundary=x" } },
      { path: "/v1/contacts", headers: { Authorization: `Bearer ${server.key}`, "Content-Type": "application/json" } },
      { path: "/v1/forms/frm_x/submissions", headers: { "Content-Type": "application/json" } },
    ];
    const sends = Array.from({ length: 24 }, (_, i) => {
      const { path, headers } = targets[i % targets.length]!;
      return fetch(server.origin + path, { method: "POST", body: chunked(64 * MiB), duplex: "half", headers } as RequestInit)
        .then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        })
        .catch(() => 0); // the server may close a connection whose body it refused
    });
    const statuses = await Promise.all(sends);
    expect(statuses.every((s) => s === 0 || (s >= 400 && s < 500))).toBe(true);
    const after = memoryOf(pid);
    // The 1 MiB routes in flight hold at most 12 × 1 MiB; the upload route without a session holds nothing.
    expect(after.peak - before.peak).toBeLessThan(96 * MiB);
    // The server still answers.
    expect((await fetch(`${server.origin}/healthz`)).status).toBe(200);
  }, 120_000);
});
