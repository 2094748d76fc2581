/**
 * The console's event log (docs/admin.md §3): a project's events of the last 30 days, newest
 * first, filtered by type and time (UTC), with pages and each event's payload.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signedInAdmin, type AdminClient, type AdminPage } from "../helpers/admin.ts";
import { startServer, walk, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

let srv: ServerHandle;
let admin: AdminClient;
let p: ProjectInfo;
let page: string;
/** Every event of the project, oldest first, as GET /v1/events gives them. */
let all: any[];

const unescape = (s: string) =>
  s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");

/** The events a page lists, in its order: [id, type]. */
const listed = (res: AdminPage) =>
  [...res.text.matchAll(/<span class="mono">(evt_[A-Za-z0-9]+)<\/span><\/p><p><strong>([a-z_.]+)<\/strong>/g)].map((m) => [m[1], m[2]]);
const nextLink = (res: AdminPage) => {
  const href = /href="([^"]*)">Next page</.exec(res.text)?.[1];
  return href ? unescape(href) : undefined;
};
/** Resolves once the clock is past `iso`, so the next event is stamped later (the order of the log is then the order of the writes). */
const past = (iso: string) => until(() => Date.now() > Date.parse(iso) + 1, { what: `the clock past ${iso}` });
/** An ISO time as a datetime-local field sends it (no zone, to the minute). */
const local = (ms: number) => new Date(ms).toISOString().slice(0, 16);

beforeAll(async () => {
  // The server's zone is not UTC, so a time without a zone read as local time would show.
  srv = await startServer({ env: "sandbox", extraEnv: { TZ: "America/New_York" } });
  ({ client: admin } = await signedInAdmin(srv.origin, srv.env));
  p = await srv.newProject({ name: "console-events" });
  page = `/admin/projects/${p.id}/events`;
  const a = await p.api("POST", "/contacts", { body: { firstName: "Ada", lastName: "<b>Lovelace</b>" } });
  expect(a.status).toBe(201);
  await past(a.json.updatedAt);
  const patched = await p.api("PATCH", `/contacts/${a.json.contactId}`, { body: { email: "ada@example.com" } });
  expect(patched.status).toBe(200);
  await past(patched.json.updatedAt);
  const note = await p.api("POST", `/contacts/${a.json.contactId}/interactions`, { body: { type: "note", note: "hello" } });
  expect(note.status).toBe(201);
  await past(note.json.createdAt);
  expect((await p.api("POST", "/contacts", { body: { firstName: "Charles" } })).status).toBe(201);
  // Another project's events never show here.
  expect((await srv.api("POST", "/contacts", { body: { firstName: "Elsewhere" } })).status).toBe(201);
  all = (await walk(p.api, "/events")).items;
  expect(all.map((e) => e.event)).toEqual(["contact.created", "contact.updated", "interaction_log.created", "contact.created"]);
});
afterAll(() => srv?.stop());

describe("the events page", () => {
  test("lists the project's events newest first, each with its payload in a disclosure", async () => {
    const res = await admin.get(page);
    expect(res.status).toBe(200);
    expect(res.text).toContain("<h1>Events</h1>");
    expect(listed(res)).toEqual([...all].reverse().map((e) => [e.id, e.event]));
    // The payload is the event as GET /v1/events gives it, pretty-printed and escaped.
    const pre = /<details><summary>Payload<\/summary><pre>([\s\S]*?)<\/pre><\/details>/.exec(res.text)?.[1];
    expect(JSON.parse(unescape(pre!))).toEqual(all[3]);
    expect(unescape(pre!)).toContain('\n  "event": "contact.created",');
    expect(res.text).not.toContain("<b>Lovelace</b>");
    expect(res.text).toContain("&lt;b&gt;Lovelace&lt;/b&gt;");
    // An event about a contact links to its page.
    expect(res.text).toContain(`href="/admin/projects/${p.id}/contacts/${all[0].data.contact.contactId}"`);
  });

  test("the type filter shows only that type; All shows every type", async () => {
    const created = await admin.get(`${page}?type=contact.created`);
    expect(created.status).toBe(200);
    expect(listed(created).map(([, t]) => t)).toEqual(["contact.created", "contact.created"]);
    expect(created.text).toMatch(/<option value="contact.created" selected="">/);
    const notes = await admin.get(`${page}?type=interaction_log.created`);
    expect(listed(notes)).toEqual([[all[2].id, "interaction_log.created"]]);
    expect(listed(await admin.get(`${page}?type=web_form.submitted`))).toEqual([]);
    expect(listed(await admin.get(`${page}?type=all&since=&until=`))).toHaveLength(4);
    for (const type of ["All", "contact.created", "contact.updated", "interaction_log.created", "web_form.submitted"]) {
      expect(created.text).toContain(`>${type}</option>`);
    }
  });

  test("since and until bound the time, inclusive, a time without a zone read as UTC", async () => {
    const second = Date.parse(all[1].createdAt);
    const exact = await admin.get(`${page}?since=${encodeURIComponent(all[1].createdAt)}&until=${encodeURIComponent(all[2].createdAt)}`);
    expect(listed(exact)).toEqual([
      [all[2].id, all[2].event],
      [all[1].id, all[1].event],
    ]);
    // datetime-local sends minutes without a zone: the minute containing every event, and the one after.
    const minute = Math.floor(second / 60_000) * 60_000;
    expect(listed(await admin.get(`${page}?since=${local(minute - 60_000)}`)).length).toBeGreaterThanOrEqual(3);
    expect(listed(await admin.get(`${page}?since=${local(Date.now() + 120_000)}`))).toEqual([]);
    expect(listed(await admin.get(`${page}?until=${local(Date.parse(all[0].createdAt) - 120_000)}`))).toEqual([]);
    // The field shows the filter back in its own format.
    const shown = await admin.get(`${page}?since=${encodeURIComponent("2026-01-15T09:30:00Z")}`);
    expect(shown.text).toMatch(/name="since" type="datetime-local" value="2026-01-15T09:30"/);
  });

  test("a time that is not ISO 8601 is refused at its field with the API's message, 422", async () => {
    const res = await admin.get(`${page}?since=yesterday`);
    expect(res.status).toBe(422);
    expect(res.text).toContain("since must be an ISO 8601 timestamp, such as 2024-05-01T10:00:00Z or 2024-05-01.");
    expect(res.text).toContain('href="#f-since"');
    const type = await admin.get(`${page}?type=contact.archived`);
    expect(type.status).toBe(422);
    expect(type.text).toContain(
      "type must be one of contact.created, contact.updated, contact.deleted, contact.restored, contact.erased, contact.merged, interaction_log.created, web_form.submitted.",
    );
  });

  test("pages: Next page carries the cursor and the filters; the cursor is bound to them", async () => {
    const first = await admin.get(`${page}?type=contact.created&limit=1`);
    expect(listed(first)).toEqual([[all[3].id, "contact.created"]]);
    const next = nextLink(first)!;
    expect(next).toContain("type=contact.created");
    const second = await admin.get(next);
    expect(listed(second)).toEqual([[all[0].id, "contact.created"]]);
    expect(nextLink(second)).toBeUndefined();

    const other = await admin.get(next.replace("type=contact.created", "type=contact.updated"));
    expect(other.status).toBe(422);
    expect(other.text).toContain("cursor was issued for other filters.");

    // Every event, one a page.
    const seen: string[] = [];
    let at: string | undefined = `${page}?limit=1`;
    while (at) {
      const res = await admin.get(at);
      seen.push(...listed(res).map(([id]) => id!));
      at = nextLink(res);
    }
    expect(seen).toEqual([...all].reverse().map((e) => e.id));
  });

  test("needs a session", async () => {
    const res = await fetch(srv.origin + page, { redirect: "manual" });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toContain("/admin/sign-in");
  });
});
