/**
 * Finding the console (docs/admin.md §1): every start prints where the console and the
 * reference page are, not only the first; `GET /` leads to the console, which sends a
 * browser without a session to sign in; and the sign-in page tells how to make the first
 * admin while there is none, and nothing of the kind once there is one. The real server,
 * started and restarted on the same data.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, createAdminAccount, pageText } from "../helpers/admin.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(90_000);

let srv: ServerHandle | undefined;
afterAll(() => srv?.stop(), 60_000);

const HINT = "No admin account yet";

/** Waits until the server's standard output holds the console's and the reference's addresses, and returns it. */
const addressesPrinted = (s: ServerHandle) =>
  until(() => (s.stdout().includes(`Reference: ${s.origin}/docs`) ? s.stdout() : false), { what: () => `the addresses on stdout:\n${s.stdout()}` });

async function signInPage(s: ServerHandle) {
  const page = await new AdminClient(s.origin).get("/admin/sign-in");
  expect(page.status).toBe(200);
  return page.text;
}

describe("finding the console", () => {
  test("every start prints the console's and the reference's addresses; the setup hint shows only while no admin exists", async () => {
    srv = await startServer();
    const first = await addressesPrinted(srv);
    expect(first).toContain(`Console:   ${srv.origin}/admin\nReference: ${srv.origin}/docs\n`);
    expect(first).toMatch(/\/admin\/setup\?token=/);
    // Both addresses answer.
    expect((await fetch(`${srv.origin}/docs`)).status).toBe(200);
    expect((await fetch(`${srv.origin}/admin`, { redirect: "manual" })).headers.get("location")).toBe("/admin/sign-in");

    const hinted = await signInPage(srv);
    expect(pageText(hinted)).toContain(
      "No admin account yet Open the one-time setup link the server printed when it started (it works for 24 hours; once it has expired, a restart prints a new one), " +
        "or create an account on the server with crm admin create --email you@example.com (the password on standard input).",
    );
    // A failed sign-in's page says it too (there is nobody to sign in as).
    const client = new AdminClient(srv.origin);
    await client.get("/admin/sign-in");
    const refused = await client.post("/admin/sign-in", { email: "nobody@example.com", password: "not a password at all" });
    expect(refused.status).toBe(401);
    expect(refused.text).toContain(HINT);

    // A restart before any admin exists: the addresses again; the link printed first still works, so no new one.
    await srv.stop(true);
    srv = await startServer({ dir: srv.dir, expectBootstrapKey: false });
    const second = await addressesPrinted(srv);
    expect(second).toContain(`Console:   ${srv.origin}/admin\nReference: ${srv.origin}/docs\n`);
    expect(second).not.toContain("Created project");
    expect(await signInPage(srv)).toContain(HINT);

    // Once an admin exists the page says nothing of accounts, and a restart prints the addresses without a link.
    const account = await createAdminAccount(srv.env);
    expect(await signInPage(srv)).not.toContain(HINT);
    expect(await signInPage(srv)).not.toContain("crm admin create");
    await srv.stop(true);
    srv = await startServer({ dir: srv.dir, expectBootstrapKey: false });
    const third = await addressesPrinted(srv);
    expect(third).toContain(`Console:   ${srv.origin}/admin\nReference: ${srv.origin}/docs\n`);
    expect(third).not.toContain("/admin/setup?token=");
    const signedIn = new AdminClient(srv.origin);
    await signedIn.signIn(account.email, account.password);
    expect((await signedIn.get("/admin/projects")).status).toBe(200);
    expect(await signInPage(srv)).not.toContain(HINT);
  });

  test("GET / leads to the console (302 to /admin), which sends a browser without a session to sign in", async () => {
    const root = await fetch(`${srv!.origin}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/admin");
    const console = await fetch(`${srv!.origin}/admin`, { redirect: "manual" });
    expect(console.status).toBe(303);
    expect(console.headers.get("location")).toBe("/admin/sign-in");
    // Followed as a browser would, the trip ends on the sign-in form.
    const followed = await fetch(`${srv!.origin}/`);
    expect(followed.status).toBe(200);
    expect(followed.url).toBe(`${srv!.origin}/admin/sign-in`);
    expect(await followed.text()).toContain("<h1>Sign in</h1>");
  });
});
