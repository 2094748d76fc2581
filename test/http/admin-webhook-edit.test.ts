/**
 * A subscription's page in the console, beyond its attempts (docs/admin.md §2, §3; docs/webhooks.md §2, §4):
 * edit its URL, events and description through the API's PATCH rules; delete it after a
 * confirmation; the waiting deliveries with their next try; and the list's health, where
 * an old failure never stands as current beside a newer success.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { until } from "../helpers/until.ts";

setDefaultTimeout(60_000);

let server: ServerHandle;
let admin: AdminClient;
const receivers: Receiver[] = [];

beforeAll(async () => {
  server = await startServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s,1s", CRM_OUTBOX_POLL_MS: "50" } });
  admin = (await signedInAdmin(server.origin, server.env)).client;
}, 60_000);

afterEach(async () => {
  for (const r of receivers.splice(0)) await r.stop();
});

afterAll(async () => {
  await server?.stop();
}, 30_000);

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

const hooksPath = (p: { id: string }) => `/admin/projects/${p.id}/webhooks`;

/** Creates a subscription in the console and opens its page (the secret's one showing); returns its id. */
async function createInConsole(p: ProjectInfo, fields: { url: string; events?: string[]; description?: string }) {
  await admin.get(hooksPath(p));
  const made = await admin.post(hooksPath(p), { url: fields.url, events: fields.events ?? ["contact.created"], description: fields.description ?? "" });
  expect(made.status).toBe(303);
  await admin.get(made.location!);
  return /webhooks\/(wh_[A-Za-z0-9]+)\?/.exec(made.location!)![1]!;
}

describe("editing and deleting a subscription", () => {
  test("Edit changes the URL, events and description as PATCH /v1/webhooks/{id} would, and refuses what it refuses", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const id = await createInConsole(p, { url: r.url, description: "Before" });
    const page = await admin.get(`${hooksPath(p)}/${id}`);
    expect(page.text).toContain('aria-label="Edit subscription"');
    expect(page.text).toContain('<button type="submit">Save changes</button>');

    const saved = await admin.post(`${hooksPath(p)}/${id}/edit`, { url: `${r.url}?v=2`, events: ["contact.updated", "contact.deleted"], description: "After" });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`${hooksPath(p)}/${id}?done=edited`);
    expect((await p.api("GET", `/webhooks/${id}`)).json).toMatchObject({ url: `${r.url}?v=2`, events: ["contact.updated", "contact.deleted"], description: "After", status: "active" });
    const after = await admin.get(saved.location!);
    expect(pageText(after.text)).toContain("Changes saved.");
    expect(after.text).toMatch(/<h1[^>]*>After<\/h1>/);

    // A blank description removes it; the URL unchanged is not sent again.
    expect((await admin.post(`${hooksPath(p)}/${id}/edit`, { url: `${r.url}?v=2`, events: ["*"], description: "" })).status).toBe(303);
    expect((await p.api("GET", `/webhooks/${id}`)).json).toMatchObject({ events: ["*"], description: null });

    const none = await admin.post(`${hooksPath(p)}/${id}/edit`, { url: `${r.url}?v=3`, description: "x" });
    expect(none.status).toBe(422);
    expect(pageText(none.text)).toContain("events must have at least 1 item");
    expect(none.text).toContain(`value="${r.url}?v=3"`); // what was typed is kept
    const credentials = await admin.post(`${hooksPath(p)}/${id}/edit`, { url: "http://user:pass@127.0.0.1:9/hook", events: ["*"] });
    expect(credentials.status).toBe(422);
    expect(pageText(credentials.text)).toContain("url must not contain credentials");
    expect((await p.api("GET", `/webhooks/${id}`)).json).toMatchObject({ url: `${r.url}?v=2`, events: ["*"], description: null });
  });

  test("Delete asks for confirmation first (the first post deletes nothing), then deletes and leads back to the list", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const id = await createInConsole(p, { url: r.url, description: "Doomed" });
    const ask = await admin.post(`${hooksPath(p)}/${id}/delete`);
    expect(ask.status).toBe(200);
    expect(pageText(ask.text)).toContain('Delete the subscription "Doomed"?');
    expect(ask.text).toContain('<input type="hidden" name="confirm" value="yes"/>');
    expect(ask.text).toContain(`<a href="${hooksPath(p)}/${id}" class="button secondary">Cancel</a>`);
    expect((await p.api("GET", `/webhooks/${id}`)).status).toBe(200);

    const done = await admin.post(`${hooksPath(p)}/${id}/delete`, { confirm: "yes" });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`${hooksPath(p)}?done=deleted`);
    expect((await p.api("GET", `/webhooks/${id}`)).status).toBe(404);
    const list = await admin.get(done.location!);
    expect(pageText(list.text)).toContain("Subscription deleted");
    expect(tableRows(list.text, "Subscriptions")).toEqual([]);
    expect((await admin.get(`${hooksPath(p)}/${id}`)).status).toBe(404);
  });
});

describe("health and waiting deliveries", () => {
  test("a failed attempt is marked Failed with its event's name and the next try; the delivery waits with that time; the list says Failing with the failure", async () => {
    const p = await server.newProject();
    // 429 with Retry-After one hour: the next try is an hour away, so the page is seen while it waits.
    const r = await receiver({ status: 429, retryAfter: 3600, body: "slow down" });
    const id = await createInConsole(p, { url: r.url, description: "Throttled" });
    expect((await p.api("POST", "/contacts", { body: { firstName: "Waits" } })).status).toBe(201);
    const page = await until(
      async () => {
        const got = await admin.get(`${hooksPath(p)}/${id}`);
        return tableRows(got.text, "Attempts, newest first").length >= 1 && got;
      },
      { timeoutMs: 20_000, what: "the failed attempt on the page" },
    );
    const eventId = (await p.api("GET", "/events")).json.data[0].id;
    const [attempt] = tableRows(page.text, "Attempts, newest first");
    const next = (await p.api("GET", `/webhooks/${id}/attempts`)).json.data[0].at as string;
    expect(attempt![1]).toMatch(/^Failed Next try \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const nextTry = attempt![1]!.replace("Failed Next try ", "");
    // About an hour after the attempt.
    const gap = Date.parse(nextTry.replace(" ", "T").replace(" UTC", "Z")) - Date.parse(next);
    expect(gap).toBeGreaterThan(3_500_000);
    expect(gap).toBeLessThan(3_700_000);
    expect(attempt!.slice(2, 5)).toEqual(["429", `contact.created ${eventId}`, "1"]);
    expect(attempt![6]).toBe("HTTP 429");

    const waiting = tableRows(page.text, "Waiting deliveries, soonest first");
    expect(waiting).toEqual([[`contact.created ${eventId}`, "1", nextTry]]);
    expect(pageText(page.text)).toContain("Status Failing Consecutive failures 1");

    const list = await admin.get(hooksPath(p));
    const [row] = tableRows(list.text, "Subscriptions");
    expect(row!.slice(3, 5)).toEqual(["Failing", "1"]);
    expect(row![6]).toMatch(/^HTTP 429 \d{4}-\d\d-\d\d /);
  });

  test("the list never shows an old failure as current beside a newer success: it says none since the last success, and when the earlier one was", async () => {
    const p = await server.newProject();
    const r = await receiver();
    await r.script([{ status: 500, body: "broke" }], { status: 200, body: "ok" });
    const id = await createInConsole(p, { url: r.url, description: "Recovered" });
    expect((await p.api("POST", "/contacts", { body: { firstName: "Again" } })).status).toBe(201);
    await until(async () => (await p.api("GET", `/webhooks/${id}`)).json.lastSuccessAt !== null, { timeoutMs: 20_000, what: "the success after the failure" });
    const hook = (await p.api("GET", `/webhooks/${id}`)).json;
    expect(hook).toMatchObject({ consecutiveFailures: 0, lastFailureReason: "HTTP 500" }); // the API keeps the old reason

    const list = await admin.get(hooksPath(p));
    const [row] = tableRows(list.text, "Subscriptions");
    expect(row!.slice(3, 5)).toEqual(["Active", "0"]);
    expect(row![6]).toMatch(/^None since the last success\. Earlier: HTTP 500 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    const failedAt = Date.parse(row![6]!.replace(/^.*HTTP 500 /, "").replace(" ", "T").replace(" UTC", "Z"));
    expect(failedAt).toBeLessThan(Date.parse(hook.lastSuccessAt));

    const page = await admin.get(`${hooksPath(p)}/${id}`);
    expect(pageText(page.text)).toMatch(/Status Active Consecutive failures 0 Last success \S+ \S+ UTC Last failure None since the last success\. Earlier: HTTP 500/);
    expect(tableRows(page.text, "Waiting deliveries, soonest first")).toEqual([]);
  });
});

describe("the page's layout (docs/admin.md §3)", () => {
  const detailsTag = (html: string, id: string) => new RegExp(`<details[^>]*id="${id}"[^>]*>`).exec(html)?.[0] ?? "";

  test("the summary and every action come first; Edit and Filter and ordering are closed above the deliveries and attempts until a refused form opens its own", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const id = await createInConsole(p, { url: r.url, description: "Laid out" });
    const page = (await admin.get(`${hooksPath(p)}/${id}`)).text;
    const at = (s: string) => {
      const i = page.indexOf(s);
      expect(i).toBeGreaterThan(-1);
      return i;
    };
    const order = [
      "<dt>Status</dt>",
      ">Send test ping</button>",
      ">Disable</button>",
      ">Rotate secret</button>",
      ">Delete subscription</button>",
      "<summary>Edit subscription</summary>",
      "<summary>Filter and ordering</summary>",
      ">Waiting deliveries</h2>",
      ">Attempts</h2>",
    ].map(at);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    for (const section of ["edit", "filter", "redeliver"]) expect(detailsTag(page, section)).not.toContain("open");

    const refused = await admin.post(`${hooksPath(p)}/${id}/edit`, { url: r.url, description: "x" });
    expect(refused.status).toBe(422);
    expect(detailsTag(refused.text, "edit")).toContain("open");
    expect(detailsTag(refused.text, "filter")).not.toContain("open");
    const unknownTag = await admin.post(`${hooksPath(p)}/${id}/filter`, { tags: "no-such-tag", ordering: "none" });
    expect(unknownTag.status).toBe(422);
    expect(detailsTag(unknownTag.text, "filter")).toContain("open");
    expect(detailsTag(unknownTag.text, "edit")).not.toContain("open");
    const noSince = await admin.post(`${hooksPath(p)}/${id}/redeliver`, { since: "" });
    expect(noSince.status).toBe(422);
    expect(detailsTag(noSince.text, "redeliver")).toContain("open");
  });

  test("Ordering's choices are short enough for a phone's select; what they mean is the hint under it", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const id = await createInConsole(p, { url: r.url });
    const page = (await admin.get(`${hooksPath(p)}/${id}`)).text;
    const select = /<select id="f-ordering"[^>]*>([\s\S]*?)<\/select>\s*<p class="hint" id="f-ordering-hint">([^<]*)<\/p>/.exec(page)!;
    const options = [...select[1]!.matchAll(/<option[^>]*>([^<]*)<\/option>/g)].map((m) => m[1]!.trim());
    expect(options).toEqual(["None", "Per contact, in order"]);
    expect(select[0]).toContain('aria-describedby="f-ordering-hint"');
    expect(select[2]).toContain("None: deliveries may overtake each other.");
  });

  test("waiting deliveries show the 10 due soonest and how many wait in all", async () => {
    const p = await server.newProject();
    const r = await receiver({ status: 429, retryAfter: 3600, body: "slow down" });
    const id = await createInConsole(p, { url: r.url, description: "Backlog" });
    for (let i = 0; i < 12; i++) expect((await p.api("POST", "/contacts", { body: { firstName: `W${i}` } })).status).toBe(201);
    const page = await until(
      async () => {
        const got = await admin.get(`${hooksPath(p)}/${id}`);
        return pageText(got.text).includes("12 waiting") && tableRows(got.text, "Attempts, newest first").length >= 12 && got;
      },
      { timeoutMs: 20_000, what: "12 deliveries waiting" },
    );
    expect(pageText(page.text)).toContain("12 waiting; the 10 due soonest are shown.");
    expect(tableRows(page.text, "Waiting deliveries, soonest first")).toHaveLength(10);
  });
});
