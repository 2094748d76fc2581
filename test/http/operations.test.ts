/**
 * Operations, from the outside (docs/api.md §4, docs/operations.md §4.1): /readyz answers 503 when a migration is
 * missing from the database the server runs on, and an unexpected failure is a 500 whose
 * message gives nothing away (no stack, no SQL, no table or file name) while the log line
 * keeps the detail under the request's id. Both are caused for real: a second connection
 * (SQLite, or PostgreSQL under CRM_TEST_BACKEND=postgres) changes the live database
 * underneath the running server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase, type SideDatabase } from "../helpers/side-db.ts";
import { until } from "../helpers/until.ts";

let server: ServerHandle;
/** The same database, opened beside the server (SQLite in WAL mode: both may use it at once). */
let side: SideDatabase;

beforeAll(async () => {
  server = await startServer();
  side = await openSideDatabase(server.env);
}, 60_000);

afterAll(async () => {
  await side?.close();
  await server?.stop();
}, 60_000);

const get = async (path: string) => {
  const res = await fetch(`${server.origin}${path}`);
  return { status: res.status, requestId: res.headers.get("x-request-id"), text: await res.text() };
};

describe("/readyz", () => {
  test("is 503 {status: not ready} while a migration is missing from the database, /healthz stays 200, and it is ready again once the migration is back", async () => {
    expect(await get("/readyz")).toMatchObject({ status: 200, text: '{"status":"ready"}' });
    const rows = await side.all<{ name: string; applied_at: unknown; checksum: string }>("SELECT name, applied_at, checksum FROM schema_migrations ORDER BY name");
    expect(rows.length).toBeGreaterThan(0);
    const last = rows.at(-1)!;
    await side.run("DELETE FROM schema_migrations WHERE name = ?", last.name);
    try {
      const notReady = await get("/readyz");
      expect({ status: notReady.status, text: notReady.text }).toEqual({ status: 503, text: '{"status":"not ready"}' });
      expect(notReady.requestId).toMatch(/^req_/);
      expect(await get("/healthz")).toMatchObject({ status: 200, text: '{"status":"ok"}' });
    } finally {
      await side.run("INSERT INTO schema_migrations (name, applied_at, checksum) VALUES (?, ?, ?)", last.name, last.applied_at, last.checksum);
    }
    expect(await get("/readyz")).toMatchObject({ status: 200, text: '{"status":"ready"}' });
  });
});

describe("500", () => {
  test("an unexpected failure is 500 ERR_INTERNAL with the fixed message 'Internal server error.': no stack, SQL, table or file name; the error log line has the detail under the answer's X-Request-Id", async () => {
    const p = await server.newProject();
    expectStatus(await p.api("GET", "/tags"), 200);
    // The table the route reads disappears underneath the running server.
    await side.run("ALTER TABLE tags RENAME TO tags_moved_away");
    let res;
    try {
      res = await p.api("GET", "/tags");
    } finally {
      await side.run("ALTER TABLE tags_moved_away RENAME TO tags");
    }
    expectError(res, "ERR_INTERNAL");
    expect(res.json).toEqual({ success: false, statusCode: 500, error: "Internal Server Error", code: "ERR_INTERNAL", message: "Internal server error." });
    for (const leak of ["SQLITE", "sqlite", "no such table", "relation", "does not exist", "tags", "SELECT", "select", "at ", ".ts", server.dir, "crm.db"]) {
      expect(res.text).not.toContain(leak);
    }
    const requestId = res.headers.get("x-request-id");
    expect(requestId).toMatch(/^req_/);
    // The rate-limit headers still describe the key's bucket (a valid key was used).
    expect(res.headers.get("ratelimit-limit")).toBe("120");

    // The detail goes to the log, one JSON line with the request id.
    const line = await until(
      () =>
        server
          .stdout()
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l))
          .find((l) => l.requestId === requestId && l.level === "error"),
      { timeoutMs: 5_000, what: `the error log line of ${requestId}` },
    );
    expect(line.msg).toBe("unhandled error");
    expect(line.error).toContain(side.backend === "sqlite" ? "no such table: tags" : 'relation "tags" does not exist');

    // Nothing stayed broken: the same request answers again.
    expectStatus(await p.api("GET", "/tags"), 200);
  });
});
