/**
 * The console's API keys page (docs/admin.md §2, §3; docs/api.md §2): a new key is shown once
 * after a redirect (a reload neither shows it again nor makes a second key), Revoke asks
 * for confirmation (the bootstrap key's page says what it is), and every action is checked
 * through the API or the CLI: the same services, the same rules. One sandbox server for the file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;
let other: ProjectInfo;

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  [p, other] = await Promise.all([srv.newProject({ name: "keys-project" }), srv.newProject({ name: "other-project" })]);
  admin = (await signedInAdmin(srv.origin, srv.env)).client;
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const decode = (s: string) => s.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
/** The secret in the ShownOnce box named `label`, if the page has one. */
const shownOnce = (html: string, label: string) =>
  new RegExp(`<label for="once-value" id="once-label">${label}</label>\\s*<textarea id="once-value"[^>]*>([^<]*)</textarea>`).exec(html)?.[1];
/** The error shown at the field (or group) whose id is `id`. */
const errorAt = (html: string, id: string) => {
  const m = new RegExp(`<p class="error" id="${id}-error">([^<]*)</p>`).exec(html);
  return m ? decode(m[1]!) : undefined;
};
const ping = (key: string) => srv.api("GET", "/ping", { key });
const keysPath = (projectId = p.id) => `/admin/projects/${projectId}/keys`;
const keyList = async (projectId = p.id) => (await srv.cli(["key", "list", "--project", projectId, "--json"])).data as any[];

/** Creates a key in the console: the form redirects (303) to the keys page, which shows it once. */
async function createKey(fields: Record<string, string | string[]>, projectId = p.id) {
  await admin.get(keysPath(projectId));
  const made = await admin.post(keysPath(projectId), fields);
  expect(made.status, made.text.slice(0, 300)).toBe(303);
  expect(made.location).toBe(keysPath(projectId));
  const page = await admin.get(made.location!);
  const key = shownOnce(page.text, "New API key");
  expect(key).toBeDefined();
  return { key: key!, page };
}

describe("API keys", () => {
  test("the keys page has the heading, the scope checkboxes labelled with each scope, and the Create key button", async () => {
    const page = await admin.get(keysPath());
    expect(page.status).toBe(200);
    expect(page.text).toContain("<h1>API keys</h1>");
    for (const scope of ["contacts:read", "contacts:write", "interactions:write", "webhooks:manage"]) {
      const id = `f-scopes-${scope.replace(":", "-")}`;
      expect(page.text).toContain(`<input type="checkbox" id="${id}" name="scopes" value="${scope}"/><label for="${id}">${scope}</label>`);
    }
    expect(page.text).toContain('<label for="f-name">Name</label>');
    expect(page.text).toContain('<button type="submit">Create key</button>');
  });

  test("a new key is shown once after a redirect, with a copy button; reloading shows nothing and creates no second key", async () => {
    const before = (await keyList()).length;
    const { key, page } = await createKey({ name: "ci-bot", scopes: ["contacts:read", "webhooks:manage"] });
    expect(key).toMatch(/^crm_test_[A-Za-z0-9]{46}$/); // the server's environment (sandbox)
    expect(page.text).toContain('data-copy="once-value"');
    expect(pageText(page.text)).toContain("Key created.");
    const pinged = await ping(key);
    expectStatus(pinged, 200);
    expect(pinged.json).toEqual({ projectId: p.id, keyId: pinged.json.keyId, scopes: ["contacts:read", "webhooks:manage"], environment: "sandbox" });
    // The table lists it, newest first, by name and hint; never the key itself outside the box.
    expect(page.text).toContain(`<td id="key-${pinged.json.keyId}" data-label="Name">ci-bot`);
    expect(page.text.indexOf(`key-${pinged.json.keyId}`)).toBeLessThan(page.text.indexOf(`key-${p.keyId}`));
    expect(page.text.split(key).length).toBe(2);

    // The reload: the same address, as a GET.
    const reload = await admin.get(keysPath());
    expect(reload.status).toBe(200);
    expect(shownOnce(reload.text, "New API key")).toBeUndefined();
    expect(reload.text).not.toContain(key);
    expect(reload.text).toContain(`<td id="key-${pinged.json.keyId}" data-label="Name">ci-bot`);
    expect(await keyList()).toHaveLength(before + 1);
  });

  test("Revoke asks for confirmation: the first post changes nothing (the key still works), the confirmed one revokes", async () => {
    const { key, page } = await createKey({ name: "to-revoke", scopes: ["contacts:write"] });
    const { keyId } = (await ping(key)).json;
    // Each Revoke button is named "Revoke" and described by its key's name cell.
    expect(page.text).toContain(`<button type="submit" class="danger" aria-describedby="key-${keyId}">Revoke</button>`);

    const ask = await admin.post(`${keysPath()}/${keyId}/revoke`);
    expect(ask.status).toBe(200);
    expect(pageText(ask.text)).toContain('Revoke the key "to-revoke"?');
    expect(pageText(ask.text)).toContain("is refused from the moment you confirm");
    expect(ask.text).toContain('<button type="submit" class="danger">Revoke key</button>');
    expect(ask.text).toContain(`<a href="${keysPath()}" class="button secondary">Cancel</a>`);
    expectStatus(await ping(key), 200);
    expect((await keyList()).find((k) => k.id === keyId).revokedAt).toBeNull();

    const res = await admin.post(`${keysPath()}/${keyId}/revoke`, { confirm: "yes" });
    expect(res.status).toBe(303);
    expect(res.location).toBe(`${keysPath()}?done=revoked`);
    expectStatus(await ping(key), 401);
    const after = await admin.get(res.location!);
    expect(after.text).toContain("Key revoked");
    expect(after.text).not.toContain(`aria-describedby="key-${keyId}"`);
    expect((await keyList()).find((k) => k.id === keyId).revokedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("the bootstrap key's confirmation says it is the key the server created at its first start, with every scope", async () => {
    const page = await admin.get(keysPath(srv.projectId));
    const bootstrap = (await keyList(srv.projectId)).find((k) => k.name === "bootstrap");
    expect(bootstrap).toBeDefined();
    expect(pageText(page.text)).toContain("Made at the server's first start");
    const ask = await admin.post(`${keysPath(srv.projectId)}/${bootstrap.id}/revoke`);
    expect(ask.status).toBe(200);
    expect(pageText(ask.text)).toContain("This is the key the server created at its first start, with every scope.");
    expectStatus(await ping(srv.key), 200); // asked, not revoked
  });

  test("a revoke without the CSRF token is refused (403) and the key keeps working", async () => {
    const { key } = await createKey({ name: "kept", scopes: ["contacts:read"] });
    const { keyId } = (await ping(key)).json;
    const res = await admin.post(`${keysPath()}/${keyId}/revoke`, { _csrf: "wrong", confirm: "yes" });
    expect(res.status).toBe(403);
    expectStatus(await ping(key), 200);
  });

  test("no scope checked is 422 with the error on the scopes group, and no key is made", async () => {
    const before = (await keyList()).length;
    await admin.get(keysPath());
    const res = await admin.post(keysPath(), { name: "no-scopes" });
    expect(res.status).toBe(422);
    expect(errorAt(res.text, "f-scopes")).toBe("Choose at least one scope.");
    expect(res.text).toContain('aria-describedby="f-scopes-error"');
    expect(shownOnce(res.text, "New API key")).toBeUndefined();
    expect(res.text).toContain('value="no-scopes"'); // what was typed is kept
    expect(await keyList()).toHaveLength(before);
  });

  test("an expiry in the past (by the service clock) is 422 at the field; a datetime-local one is stored as that UTC time", async () => {
    await admin.get(keysPath());
    const past = await admin.post(keysPath(), { name: "old", scopes: ["contacts:read"], expiresAt: "2001-01-01T00:00" });
    expect(past.status).toBe(422);
    expect(errorAt(past.text, "f-expiresAt")).toBe("Expires must be in the future.");
    const bad = await admin.post(keysPath(), { name: "bad", scopes: ["contacts:read"], expiresAt: "soon" });
    expect(bad.status).toBe(422);
    expect(errorAt(bad.text, "f-expiresAt")).toContain("must be a date and time");

    const { key } = await createKey({ name: "expiring", scopes: ["contacts:read"], expiresAt: "2099-01-31T12:00" });
    const { keyId } = (await ping(key)).json;
    expect((await keyList()).find((k) => k.id === keyId)).toMatchObject({ name: "expiring", expiresAt: "2099-01-31T12:00:00.000Z", scopes: ["contacts:read"] });
  });

  test("revoking a key of another project through this project's page is a 404 page, and that key still works", async () => {
    await admin.get(keysPath());
    const res = await admin.post(`${keysPath(p.id)}/${other.keyId}/revoke`, { confirm: "yes" });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.text).toContain("API key not found.");
    expectStatus(await ping(other.key), 200);
    expect((await keyList(other.id)).find((k) => k.id === other.keyId).revokedAt).toBeNull();
  });

  test("each cell of the keys table names its column (data-label), so a phone shows every row as a card with its Revoke button", async () => {
    const page = await admin.get(keysPath());
    const cells = page.text.slice(page.text.indexOf("<tbody>"), page.text.indexOf("</tbody>")).match(/<td[^>]*>/g)!;
    expect(cells.length).toBeGreaterThan(0);
    expect(cells.filter((td) => !td.includes("data-label="))).toEqual([]);
    expect(tableRows(page.text, "API keys of this project").every((row) => row.length === 7)).toBe(true);
  });
});
