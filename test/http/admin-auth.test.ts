/**
 * The admin console's sign-in and its defences, over HTTP (docs/admin.md §2): what a browser
 * does not show. Accounts from `crm admin …`, the one-time setup link, cookie flags, CSRF
 * and Origin checks, every route refusing an anonymous request, sign-out, and the 12 h
 * idle expiry and the 15-minute lockout with the service's clock moved by the test.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { adminApp } from "../../src/admin/app.tsx";
import { ADMIN_PASSWORD, AdminClient, createAdminAccount, signedInAdmin } from "../helpers/admin.ts";
import { HOUR, ManualClock } from "../helpers/clock.ts";
import { startInProcess, type InProcessServer } from "../helpers/in-process.ts";
import { sqliteOnly } from "../helpers/postgres.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

const MINUTE = 60_000;
let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

/** The session cookie's Set-Cookie line of an answer. */
const sessionCookie = (headers: Headers) => headers.getSetCookie().find((line) => line.startsWith("crm_admin="));

describe("crm admin (docs/admin.md §3)", () => {
  test("admin create reads the password from stdin and answers { id, email } with --json; list shows it, never a hash", async () => {
    const r = await server.cliRaw(["admin", "create", "--email", "First.Admin@example.com", "--json"], `${ADMIN_PASSWORD}\n`);
    expect(r.exitCode).toBe(0);
    const created = JSON.parse(r.stdout.trim());
    expect(created).toEqual({ id: expect.stringMatching(/^adm_/), email: "First.Admin@example.com" });
    const list = JSON.parse((await server.cliRaw(["admin", "list", "--json"])).stdout.trim());
    expect(list.data).toContainEqual({ id: created.id, email: "First.Admin@example.com", createdAt: expect.any(String) });
    expect(JSON.stringify(list)).not.toContain("scrypt");
  });

  test("a password shorter than 12 characters is refused with exit 2 and nothing is created", async () => {
    const r = await server.cliRaw(["admin", "create", "--email", "short@example.com", "--json"], "elevenchars\n");
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("at least 12 characters");
    const list = JSON.parse((await server.cliRaw(["admin", "list", "--json"])).stdout.trim());
    expect(list.data.map((a: { email: string }) => a.email)).not.toContain("short@example.com");
  });

  test("a second account with the same email in another case is refused", async () => {
    await createAdminAccount(server.env, { email: "twice@example.com" });
    const r = await server.cliRaw(["admin", "create", "--email", "TWICE@example.com"], `${ADMIN_PASSWORD}\n`);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("exists already");
  });

  test.skipIf(sqliteOnly)("the password is stored as a scrypt hash with its parameters, never as given", async () => {
    const { Database } = await import("bun:sqlite");
    await createAdminAccount(server.env, { email: "hashed@example.com" });
    const db = new Database(`${server.dir}/crm.db`, { readonly: true });
    const row = db.query("SELECT password_hash FROM admins WHERE email = 'hashed@example.com'").get() as { password_hash: string };
    db.close();
    expect(row.password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(row.password_hash).not.toContain(ADMIN_PASSWORD);
  });

  test("set-password takes a new password from stdin: the old one stops working and the account's sessions end", async () => {
    const { client, account } = await signedInAdmin(server.origin, server.env);
    const newPassword = "another long passphrase";
    const r = await server.cliRaw(["admin", "set-password", "--email", account.email, "--json"], `${newPassword}\n`);
    expect(r.exitCode).toBe(0);
    expect((await client.get("/admin/projects")).status).toBe(303);
    await client.get("/admin/sign-in");
    expect((await client.post("/admin/sign-in", { email: account.email, password: ADMIN_PASSWORD })).status).toBe(401);
    expect((await client.post("/admin/sign-in", { email: account.email, password: newPassword })).status).toBe(303);
  });

  test("delete removes the account and ends its sessions; an unknown id is exit 2", async () => {
    const { client, account } = await signedInAdmin(server.origin, server.env);
    expect((await server.cliRaw(["admin", "delete", account.id])).exitCode).toBe(0);
    const page = await client.get("/admin/projects");
    expect(page.status).toBe(303);
    expect(page.location).toStartWith("/admin/sign-in");
    expect((await server.cliRaw(["admin", "delete", account.id])).exitCode).toBe(2);
  });
});

describe("sign-in, cookie and sign-out (docs/admin.md §2)", () => {
  test("signing in sets an HttpOnly, SameSite=Strict session cookie for /admin, without Secure over plain HTTP", async () => {
    const account = await createAdminAccount(server.env);
    const client = new AdminClient(server.origin);
    await client.get("/admin/sign-in");
    const res = await client.post("/admin/sign-in", { email: account.email, password: account.password });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/admin/projects");
    const cookie = sessionCookie(res.headers)!;
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/admin/);
    expect(cookie).not.toMatch(/; Secure/);
    expect((await client.get("/admin/projects")).status).toBe(200);
  });

  test("a wrong password or an unknown email is refused with one message, and no cookie", async () => {
    const account = await createAdminAccount(server.env);
    for (const [email, password] of [
      [account.email, "not the password at all"],
      ["nobody@example.com", ADMIN_PASSWORD],
    ]) {
      const client = new AdminClient(server.origin);
      await client.get("/admin/sign-in");
      const res = await client.post("/admin/sign-in", { email: email!, password: password! });
      expect(res.status).toBe(401);
      expect(res.text).toContain("The email or the password is wrong.");
      expect(sessionCookie(res.headers)).toBeUndefined();
    }
  });

  test("Sign out ends the session in the database: the old cookie no longer opens a page", async () => {
    const { client } = await signedInAdmin(server.origin, server.env);
    const cookie = client.cookies.get("crm_admin")!;
    const out = await client.post("/admin/sign-out");
    expect(out.status).toBe(303);
    expect(out.location).toBe("/admin/sign-in");
    const replay = new AdminClient(server.origin);
    replay.cookies.set("crm_admin", cookie);
    expect((await replay.get("/admin/projects")).status).toBe(303);
  });

  test("after sign-in the browser returns to the page it asked for, and never to another site", async () => {
    const account = await createAdminAccount(server.env);
    const client = new AdminClient(server.origin);
    const asked = await client.get(`/admin/projects/${server.projectId}/contacts`);
    expect(asked.location).toBe(`/admin/sign-in?next=${encodeURIComponent(`/admin/projects/${server.projectId}/contacts`)}`);
    await client.get(asked.location!);
    const res = await client.post(asked.location!, { email: account.email, password: account.password });
    expect(res.location).toBe(`/admin/projects/${server.projectId}/contacts`);

    const other = new AdminClient(server.origin);
    await other.get("/admin/sign-in");
    const away = await other.post(`/admin/sign-in?next=${encodeURIComponent("//evil.example/admin")}`, { email: account.email, password: account.password });
    expect(away.location).toBe("/admin/projects");
  });

  test("every page carries a strict CSP with frame-ancestors 'none', nosniff, and no-store", async () => {
    const { client } = await signedInAdmin(server.origin, server.env);
    for (const path of ["/admin/sign-in", "/admin/projects", `/admin/projects/${server.projectId}`]) {
      const page = await client.get(path);
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain("unsafe-inline");
      expect(page.headers.get("x-frame-options")).toBe("DENY");
      expect(page.headers.get("x-content-type-options")).toBe("nosniff");
      expect(page.headers.get("cache-control")).toBe("no-store");
    }
  });
});

describe("CSRF token and Origin check (docs/admin.md §2)", () => {
  const projectCount = async () => (await server.cli(["project", "list", "--json"])).data.length;

  test("a form posted without its CSRF token, or with another one, is refused 403 and changes nothing", async () => {
    const { client } = await signedInAdmin(server.origin, server.env);
    const before = await projectCount();
    for (const token of ["", "not-the-token", "A".repeat(43)]) {
      const res = await client.post("/admin/projects", { name: "csrf victim", _csrf: token });
      expect(res.status).toBe(403);
      expect(res.text).toContain("Form refused");
    }
    expect(await projectCount()).toBe(before);
    expect((await client.post("/admin/projects", { name: "with its token" })).status).toBe(303);
    expect(await projectCount()).toBe(before + 1);
  });

  test("another session's token is refused: the token belongs to the session", async () => {
    const first = await signedInAdmin(server.origin, server.env);
    const second = await signedInAdmin(server.origin, server.env);
    const res = await first.client.post("/admin/projects", { name: "cross", _csrf: second.client.csrf });
    expect(res.status).toBe(403);
  });

  test("a POST from another Origin, or with none, is refused 403 even with a valid token", async () => {
    const { client } = await signedInAdmin(server.origin, server.env);
    const before = await projectCount();
    expect((await client.post("/admin/projects", { name: "x" }, { Origin: "https://evil.example" })).status).toBe(403);
    expect((await client.post("/admin/projects", { name: "x" }, { Origin: "null" })).status).toBe(403);
    const noOrigin = await client.request("POST", "/admin/projects", {
      body: new URLSearchParams({ _csrf: client.csrf, name: "x" }),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(noOrigin.status).toBe(403);
    expect(await projectCount()).toBe(before);
  });

  test("the sign-in form needs its pre-session token too (no login CSRF)", async () => {
    const account = await createAdminAccount(server.env);
    const client = new AdminClient(server.origin);
    const res = await client.post("/admin/sign-in", { email: account.email, password: account.password, _csrf: "forged" });
    expect(res.status).toBe(403);
    expect(sessionCookie(res.headers)).toBeUndefined();
  });
});

describe("anonymous requests (docs/admin.md §3)", () => {
  /** Every route of the console, from its own route table, with ids filled in. */
  const routes = adminApp()
    .routes.filter((r) => r.method !== "ALL" && r.path !== "/*" && !r.path.endsWith("/*"))
    .map((r) => ({ method: r.method, path: r.path }))
    .filter((r, i, all) => all.findIndex((o) => o.method === r.method && o.path === r.path) === i);
  const PUBLIC = ["/sign-in", "/sign-out", "/setup", "/assets/:name"];

  test("the route table is the one being checked (it lists the sections)", () => {
    const paths = routes.map((r) => r.path);
    expect(paths).toContain("/projects");
    expect(paths.some((p) => p.includes("/keys"))).toBe(true);
    expect(routes.length).toBeGreaterThan(10);
  });

  test("every route but sign-in, setup and assets refuses a request without a session: pages redirect to sign-in, actions are 403", async () => {
    const anonymous = new AdminClient(server.origin);
    await anonymous.get("/admin/sign-in"); // a pre-session token, so only the missing session can refuse
    const checked: string[] = [];
    for (const route of routes.filter((r) => !PUBLIC.includes(r.path))) {
      const path = `/admin${route.path}`
        .replace(":projectId", server.projectId)
        .replace(/:[A-Za-z]+\{[^}]*\}|:[A-Za-z]+/g, "x1")
        .replace(/\/$/, "");
      const res = route.method === "GET" ? await anonymous.get(path || "/admin") : await anonymous.post(path, { name: "anonymous" });
      if (route.method === "GET") {
        expect([route.path, res.status, res.location?.startsWith("/admin/sign-in")]).toEqual([route.path, 303, true]);
      } else {
        expect([route.method, route.path, res.status]).toEqual([route.method, route.path, 403]);
      }
      expect(res.text).not.toContain(server.projectId);
      checked.push(`${route.method} ${route.path}`);
    }
    expect(checked.length).toBeGreaterThan(8);
  });

  test("an unknown /admin path answers the sign-in redirect without a session and a 404 page with one", async () => {
    const anonymous = new AdminClient(server.origin);
    expect((await anonymous.get("/admin/nothing-here")).status).toBe(303);
    const { client } = await signedInAdmin(server.origin, server.env);
    const page = await client.get("/admin/nothing-here");
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toContain("text/html");
  });
});

describe("sessions live in the database (docs/admin.md §2: every node knows them)", () => {
  test("a session made on one node opens pages on another node of the same database", async () => {
    const { client } = await signedInAdmin(server.origin, server.env);
    const other = await startServer({ dir: server.dir, expectBootstrapKey: false });
    try {
      const elsewhere = new AdminClient(other.origin);
      elsewhere.cookies.set("crm_admin", client.cookies.get("crm_admin")!);
      const page = await elsewhere.get("/admin/projects");
      expect(page.status).toBe(200);
      expect(page.text).toContain("<h1>Projects</h1>");
    } finally {
      await other.stop(true);
    }
  }, 60_000);
});

describe("the one-time setup link (docs/admin.md §1)", () => {
  test("the first start prints /admin/setup?token=…; it creates the first admin once, then is refused; a later start prints none", async () => {
    const fresh = await startServer();
    try {
      const link = /http:\/\/\S+\/admin\/setup\?token=([A-Za-z0-9_-]+)/.exec(fresh.stdout());
      expect(link).not.toBeNull();
      const path = `/admin/setup?token=${link![1]}`;
      const client = new AdminClient(fresh.origin);
      expect((await client.get(path)).status).toBe(200);
      const short = await client.post(path, { email: "owner@example.com", password: "too short" });
      expect(short.status).toBe(422);
      expect(short.text).toContain("at least 12 characters");
      const made = await client.post(path, { email: "owner@example.com", password: ADMIN_PASSWORD });
      expect(made.status).toBe(303);
      expect((await client.get("/admin/projects")).status).toBe(200);
      const list = await fresh.cli(["admin", "list", "--json"]);
      expect(list.data.map((a: { email: string }) => a.email)).toEqual(["owner@example.com"]);

      const again = new AdminClient(fresh.origin);
      expect((await again.get(path)).status).toBe(404);
      await again.get("/admin/sign-in");
      expect((await again.post(path, { email: "second@example.com", password: ADMIN_PASSWORD })).status).toBe(404);
      expect((await fresh.cli(["admin", "list", "--json"])).data).toHaveLength(1);
    } finally {
      await fresh.stop(true);
    }
    const restarted = await startServer({ dir: fresh.dir, expectBootstrapKey: false });
    try {
      expect(restarted.stdout()).not.toContain("/admin/setup");
    } finally {
      await restarted.stop();
    }
  }, 90_000);

  test("a made-up token opens nothing", async () => {
    const client = new AdminClient(server.origin);
    expect((await client.get("/admin/setup?token=made-up")).status).toBe(404);
    expect((await client.get("/admin/setup")).status).toBe(404);
  });
});

describe("time windows, with the service's clock moved by the test", () => {
  const clock = new ManualClock(Date.now() + 400 * 24 * HOUR);
  let node: InProcessServer;
  let printed = "";

  beforeAll(async () => {
    const log = spyOn(console, "log").mockImplementation((...args: unknown[]) => void (printed += `${args.join(" ")}\n`));
    try {
      // Behind a trusted proxy (loopback): X-Forwarded-For tells the tests' client addresses apart.
      node = await startInProcess({ overrides: { clock }, env: { CRM_TRUST_PROXY: "127.0.0.1" } });
    } finally {
      log.mockRestore();
    }
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
  }, 30_000);

  test("the setup link expires after 24 hours", async () => {
    const token = /\/admin\/setup\?token=([A-Za-z0-9_-]+)/.exec(printed)![1];
    const client = new AdminClient(node.origin);
    expect((await client.get(`/admin/setup?token=${token}`)).status).toBe(200);
    clock.advance(24 * HOUR);
    expect((await client.get(`/admin/setup?token=${token}`)).status).toBe(404);
  });

  test("a session ends after 12 hours without a request, and each request renews it", async () => {
    const { client } = await signedInAdmin(node.origin, node.env);
    clock.advance(11 * HOUR);
    expect((await client.get("/admin/projects")).status).toBe(200);
    clock.advance(11 * HOUR);
    expect((await client.get("/admin/projects")).status).toBe(200);
    clock.advance(12 * HOUR);
    const page = await client.get("/admin/projects");
    expect(page.status).toBe(303);
    expect(page.location).toStartWith("/admin/sign-in");
  });

  const from = (address: string) => ({ "X-Forwarded-For": address });

  test("behind a trusted proxy that says the request came over HTTPS, the session cookie is Secure; an untrusted claim is ignored", async () => {
    const account = await createAdminAccount(node.env);
    const viaProxy = new AdminClient(node.origin);
    await viaProxy.get("/admin/sign-in");
    const secure = await viaProxy.post("/admin/sign-in", { email: account.email, password: account.password }, { "X-Forwarded-Proto": "https" });
    expect(secure.status).toBe(303);
    expect(sessionCookie(secure.headers)).toMatch(/; Secure/);

    // The other server trusts no proxy: the same header from the client changes nothing.
    const direct = new AdminClient(server.origin);
    await direct.get("/admin/sign-in");
    const plain = await direct.post("/admin/sign-in", { email: (await createAdminAccount(server.env)).email, password: ADMIN_PASSWORD }, { "X-Forwarded-Proto": "https" });
    expect(plain.status).toBe(303);
    expect(sessionCookie(plain.headers)).not.toMatch(/; Secure/);
  });

  test("ten failed sign-ins for one email, from any addresses, lock it for 15 minutes, even with the right password; then it opens", async () => {
    const account = await createAdminAccount(node.env);
    const client = new AdminClient(node.origin);
    await client.get("/admin/sign-in");
    for (let i = 0; i < 10; i++) {
      const res = await client.post("/admin/sign-in", { email: account.email, password: `wrong ${i}` }, from(`203.0.113.${i}`));
      expect(res.status).toBe(401);
    }
    const locked = await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.1"));
    expect(locked.status).toBe(429);
    expect(locked.text).toContain("Too many failed sign-ins. Try again in 15 minutes.");
    expect(Number(locked.headers.get("retry-after"))).toBe(900);
    expect(sessionCookie(locked.headers)).toBeUndefined();
    clock.advance(14 * MINUTE);
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.1"))).status).toBe(429);
    clock.advance(MINUTE);
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.1"))).status).toBe(303);
  });

  test("nine failures do not lock, and failures older than 15 minutes do not count", async () => {
    const account = await createAdminAccount(node.env);
    const client = new AdminClient(node.origin);
    await client.get("/admin/sign-in");
    for (let i = 0; i < 9; i++) await client.post("/admin/sign-in", { email: account.email, password: "wrong password!" }, from("198.51.100.2"));
    clock.advance(15 * MINUTE);
    for (let i = 0; i < 9; i++) await client.post("/admin/sign-in", { email: account.email, password: "wrong password!" }, from("198.51.100.2"));
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.2"))).status).toBe(303);
  });

  test("ten failed sign-ins from one address, whatever the emails, lock that address for every account, and only that address", async () => {
    const account = await createAdminAccount(node.env);
    const client = new AdminClient(node.origin);
    await client.get("/admin/sign-in");
    for (let i = 0; i < 10; i++) await client.post("/admin/sign-in", { email: `guess${i}@example.com`, password: "wrong password!" }, from("198.51.100.3"));
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.3"))).status).toBe(429);
    const elsewhere = new AdminClient(node.origin);
    await elsewhere.get("/admin/sign-in");
    expect((await elsewhere.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.4"))).status).toBe(303);
    clock.advance(15 * MINUTE);
    expect((await client.post("/admin/sign-in", { email: account.email, password: account.password }, from("198.51.100.3"))).status).toBe(303);
  });
});
