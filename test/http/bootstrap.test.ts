/** First start on an empty database (decisions §3): own servers, restarted on one database. */
import { afterAll, describe, expect, test } from "bun:test";
import { KEY_PATTERN, startServer, type ServerHandle } from "../helpers/server.ts";
import { expectStatus } from "../helpers/expect.ts";

const started: ServerHandle[] = [];

afterAll(async () => {
  for (const s of started) await s.stop();
}, 60_000);

describe("bootstrap", () => {
  test("a restart on the same database prints no key again, keeps one default project and the first key works", async () => {
    const first = await startServer();
    const key = first.key;
    await first.stop(true);
    const second = await startServer({ dir: first.dir, expectBootstrapKey: false });
    started.push(second);
    await new Promise((r) => setTimeout(r, 300));
    expect(second.stdout()).not.toMatch(KEY_PATTERN);
    const projects = await second.cli(["project", "list", "--json"]);
    expect(projects.data.filter((p: any) => p.name === "default")).toHaveLength(1);
    const ping = await second.api("GET", "/ping", { key });
    expectStatus(ping, 200);
    expect(ping.json.projectId).toBe(second.projectId);
  }, 60_000);

  test("CRM_BOOTSTRAP=false on an empty database creates no project and prints no key", async () => {
    const srv = await startServer({ extraEnv: { CRM_BOOTSTRAP: "false" }, expectBootstrapKey: false });
    started.push(srv);
    await new Promise((r) => setTimeout(r, 300));
    expect(srv.stdout()).not.toMatch(KEY_PATTERN);
    expect((await srv.cli(["project", "list", "--json"])).data).toEqual([]);
  }, 60_000);
});
