/**
 * Headers built from stored or requested data never carry a control character
 * (docs/security.md §6): such input is 422 (or exit 2) when it would be stored, a value that
 * is already stored is never a 500, and a redirect asked for in a query falls back to a
 * safe page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, signedInAdmin } from "../helpers/admin.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";
import { openSideDatabase } from "../helpers/side-db.ts";

let srv: ServerHandle;
let admin: AdminClient;
beforeAll(async () => {
  srv = await startServer();
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);
afterAll(async () => {
  await srv?.stop();
});

const CRLF_URLS = ["https://example.com/thanks\r\nX-Evil: 1", "https://example.com/\nthanks", "https://example.com/\tthanks", "https://exa\u0001mple.com/", "https://example.com/\u007f"];

describe("the sign-in's `next`", () => {
  test("a signed-in GET with a line break in `next` is sent to the projects page, not a 500", async () => {
    for (const next of ["/admin/%0d%0aX-Evil:%201", "/admin/projects%0aX-Evil:1", "/admin/%09x", "/admin/%00"]) {
      const res = await admin.get(`/admin/sign-in?next=${next}`);
      expect(res.status).toBe(303);
      expect(res.location).toBe("/admin/projects");
      expect(res.headers.get("x-evil")).toBeNull();
    }
  });

  test("a sign-in POST with a line break in `next` lands on the projects page", async () => {
    const { account } = await signedInAdmin(srv.origin, srv.env);
    const browser = new AdminClient(srv.origin);
    await browser.get("/admin/sign-in");
    const res = await browser.post("/admin/sign-in?next=/admin/%0d%0aX-Evil:%201", { email: account.email, password: account.password });
    expect(res.status).toBe(303);
    expect(res.location).toBe("/admin/projects");
  });

  test("a clean console path in `next` is still followed", async () => {
    const res = await admin.get("/admin/sign-in?next=/admin/projects/prj_x/contacts%3Fq%3Dada");
    expect(res.status).toBe(303);
    expect(res.location).toBe("/admin/projects/prj_x/contacts?q=ada");
  });
});

describe("a web form's redirect URL", () => {
  test.each(CRLF_URLS)("`crm form create --redirect-url %j` is refused with exit 2, nothing stored", async (url) => {
    const r = await srv.cliRaw(["form", "create", "--project", srv.projectId, "--name", "Bad", "--fields", "email", "--redirect-url", url, "--json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("redirect");
    const listed = await srv.cli(["form", "list", "--project", srv.projectId, "--json"]);
    expect(listed.data.some((f: { redirectUrl: string | null }) => f.redirectUrl === url)).toBe(false);
  });

  test("the console refuses it with 422 at the field", async () => {
    const res = await admin.post(`/admin/projects/${srv.projectId}/forms`, { name: "Bad", fields: ["email"], redirectUrl: "https://example.com/thanks\r\nX-Evil: 1" });
    expect(res.status).toBe(422);
    expect(res.text).toContain("Redirect URL must be an http(s) URL");
  });

  test("a bad value stored before the check existed: the page and a browser submission answer without it, never a 500", async () => {
    const form = await srv.cli(["form", "create", "--project", srv.projectId, "--name", "Old", "--fields", "email", "--redirect-url", "https://example.com/thanks", "--json"]);
    const side = await openSideDatabase(srv.env);
    try {
      await side.run("UPDATE forms SET redirect_url = ? WHERE id = ?", "https://example.com/thanks\r\nX-Evil: 1", form.id);
    } finally {
      await side.close();
    }
    const page = await fetch(`${srv.origin}/f/${form.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self';");
    const res = await fetch(`${srv.baseUrl}/forms/${form.id}/submissions`, {
      method: "POST",
      redirect: "manual",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "stored-bad-redirect@example.com" }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("location")).toBeNull();
    expect(res.headers.get("x-evil")).toBeNull();
    expect(await res.text()).toContain("We received your submission to Old.");
    // The contact was kept (the answer did not fail after the write).
    const found = await srv.api("GET", "/contacts", { query: { email: "stored-bad-redirect@example.com" } });
    expect(found.json.data).toHaveLength(1);
  });
});

describe("other values that end up in headers", () => {
  test("a contact website or url custom value with a line break is 422 (its text would differ from what a URL parser keeps)", async () => {
    const res = await srv.api("POST", "/contacts", { body: { firstName: "Web", website: "https://example.com/\r\nx" } });
    expect(res.status).toBe(422);
    expect(res.json.fieldName).toBe("website");
  });
});
