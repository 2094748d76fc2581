/**
 * First start on an empty database (docs/cli.md §4): own servers, restarted on one database.
 * "No key printed" is read from the whole life's stdout: at CRM_LOG_LEVEL=info a server
 * stopped with SIGTERM logs `shutting down` on the same pipe, so once that line is there,
 * everything it printed before is too. No fixed wait.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { KEY_PATTERN, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectStatus } from "../helpers/expect.ts";
import { until } from "../helpers/until.ts";

const started: ServerHandle[] = [];

afterAll(async () => {
  for (const s of started) await s.stop();
}, 60_000);

/** Stops the server (SIGTERM, exit 0) and returns all it printed, up to its `shutting down` line. */
async function lifeOutput(srv: ServerHandle): Promise<string> {
  expect(await srv.process.stop()).toBe(0);
  return until(
    () => {
      const out = srv.stdout();
      return out.includes('"msg":"shutting down"') ? out : undefined;
    },
    { timeoutMs: 10_000, what: "the shutting-down log line" },
  );
}

describe("bootstrap", () => {
  test("a restart on the same database prints no key again, keeps one default project and the first key works", async () => {
    const first = await startServer({ extraEnv: { CRM_LOG_LEVEL: "info" } });
    const key = first.key;
    expect((await lifeOutput(first)).match(new RegExp(KEY_PATTERN, "g"))).toEqual([key]);
    const second = await startServer({ dir: first.dir, expectBootstrapKey: false, extraEnv: { CRM_LOG_LEVEL: "info" } });
    started.push(second);
    const projects = await second.cli(["project", "list", "--json"]);
    expect(projects.data.filter((p: any) => p.name === "default")).toHaveLength(1);
    expect(projects.data).toHaveLength(1);
    const ping = await second.api("GET", "/ping", { key });
    expectStatus(ping, 200);
    expect(ping.json.projectId).toBe(second.projectId);
    const output = await lifeOutput(second);
    expect(output).not.toMatch(KEY_PATTERN);
    expect(output).not.toContain("Created project");
  }, 60_000);

  test("CRM_BOOTSTRAP=false on an empty database creates no project and prints no key", async () => {
    const srv = await startServer({ extraEnv: { CRM_BOOTSTRAP: "false", CRM_LOG_LEVEL: "info" }, expectBootstrapKey: false });
    started.push(srv);
    expect((await srv.cli(["project", "list", "--json"])).data).toEqual([]);
    const output = await lifeOutput(srv);
    expect(output).not.toMatch(KEY_PATTERN);
    expect(output).not.toContain("Created project");
  }, 60_000);
});
