/**
 * The admin console's webhooks pages over HTTP (docs/webhooks.md §2, docs/admin.md §3, docs/api.md §7): subscriptions
 * created in the console and checked through the API, their attempts as a loopback
 * receiver answers, and the actions (test ping, disable/enable, rotate the secret,
 * redeliver since a time). A sandbox server with a compressed retry schedule delivers to
 * loopback receivers; every wait is on a condition, never a fixed time.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { AdminClient, pageText, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { serviceSignatureIndex, standardSignatureIndex, startReceiver, type Receiver } from "../helpers/receiver.ts";
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

const SECRET = /whsec_[A-Za-z0-9+/]{43}=/g;
const hooksPath = (p: { id: string }) => `/admin/projects/${p.id}/webhooks`;

/**
 * Creates a subscription in the console: the form redirects (303) to the subscription's page,
 * which shows the secret once. Returns its id, that secret, and the page.
 */
async function createInConsole(project: ProjectInfo, fields: { url: string; events?: string[]; description?: string }) {
  await admin.get(hooksPath(project));
  const made = await admin.post(hooksPath(project), { url: fields.url, events: fields.events ?? ["contact.created"], description: fields.description ?? "" });
  expect(made.status, made.text.slice(0, 500)).toBe(303);
  expect(made.location).not.toMatch(SECRET); // never in a URL
  const id = /webhooks\/(wh_[A-Za-z0-9]+)\?done=created$/.exec(made.location ?? "")?.[1];
  expect(id).toBeDefined();
  const page = await admin.get(made.location!);
  expect(page.status).toBe(200);
  const secrets = page.text.match(SECRET) ?? [];
  expect(secrets).toHaveLength(1);
  return { id: id!, secret: secrets[0]!, page };
}

describe("webhooks list and create (docs/admin.md §3)", () => {
  test("a subscription created in the console is served by the API, and its secret is shown once, labelled", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const { id, secret, page } = await createInConsole(p, { url: r.url, events: ["contact.created", "contact.updated"], description: "Billing sync" });
    expect(page.text).toContain('<label for="once-value" id="once-label">Signing secret</label>');
    expect(page.text).toMatch(/<h1[^>]*>Billing sync<\/h1>/);
    const res = await p.api("GET", `/webhooks/${id}`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ url: r.url, events: ["contact.created", "contact.updated"], description: "Billing sync", status: "active", consecutiveFailures: 0 });
    expect(res.json.secret).toBeUndefined();
    // The secret shown is the one deliveries are signed with.
    expect((await p.api("POST", "/contacts", { body: { firstName: "Signed" } })).status).toBe(201);
    const [delivery] = await r.waitFor(1);
    expect(serviceSignatureIndex(secret, delivery!)).toBe(0);
    expect(standardSignatureIndex(secret, delivery!)).toBe(0);
    // Shown once: the subscription's page never shows it again, not even on a reload of the same address.
    expect((await admin.get(`${hooksPath(p)}/${id}?done=created`)).text).not.toMatch(SECRET);
    expect((await admin.get(`${hooksPath(p)}/${id}`)).text).not.toMatch(SECRET);
    expect((await p.api("GET", "/webhooks")).json.data).toHaveLength(1); // and no second subscription
  });

  test("the list names each subscription by a link with its description, or its URL without one, with status and health", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const described = await createInConsole(p, { url: r.url, description: "CRM → warehouse" });
    const bare = await createInConsole(p, { url: `${r.url}?bare=1`, events: ["*"] });
    const list = await admin.get(hooksPath(p));
    expect(list.status).toBe(200);
    expect(list.text).toMatch(/<h1[^>]*>Webhooks<\/h1>/);
    expect(list.text).toContain(`<a href="${hooksPath(p)}/${described.id}">CRM → warehouse</a>`);
    expect(list.text).toContain(`<a href="${hooksPath(p)}/${bare.id}">${r.url}?bare=1</a>`);
    const rows = tableRows(list.text, "Subscriptions");
    expect(rows).toHaveLength(2);
    // subscription, URL, events, status, consecutive failures, last success, last failure reason
    expect(rows[0]).toEqual(["CRM → warehouse", r.url, "contact.created", "Active", "0", "—", "—"]);
    expect(rows[1]).toEqual([`${r.url}?bare=1`, `${r.url}?bare=1`, "*", "Active", "0", "—", "—"]);
  });

  test("the form refuses what the API refuses, and creates nothing", async () => {
    const p = await server.newProject();
    await admin.get(hooksPath(p));
    const noEvents = await admin.post(hooksPath(p), { url: "http://127.0.0.1:9/hook", description: "x" });
    expect(noEvents.status).toBe(422);
    expect(pageText(noEvents.text)).toContain("events must have at least 1 item");
    const credentials = await admin.post(hooksPath(p), { url: "http://user:pass@127.0.0.1:9/hook", events: ["*"] });
    expect(credentials.status).toBe(422);
    expect(pageText(credentials.text)).toContain("url must not contain credentials");
    // The form keeps what was typed.
    expect(credentials.text).toContain('value="http://user:pass@127.0.0.1:9/hook"');
    const mixed = await admin.post(hooksPath(p), { url: "http://127.0.0.1:9/hook", events: ["*", "contact.created"] });
    expect(mixed.status).toBe(422);
    expect(pageText(mixed.text)).toContain('events must not mix "*" with other values.');
    expect((await p.api("GET", "/webhooks")).json.data).toEqual([]);
  });

  test("an unknown subscription, or another project's, is a 404 page", async () => {
    const p = await server.newProject();
    const other = await server.newProject();
    const r = await receiver();
    const { id } = await createInConsole(other, { url: r.url });
    expect((await admin.get(`${hooksPath(p)}/wh_nope`)).status).toBe(404);
    expect((await admin.get(`${hooksPath(p)}/${id}`)).status).toBe(404);
    await admin.get(hooksPath(p));
    expect((await admin.post(`${hooksPath(p)}/${id}/rotate-secret`)).status).toBe(404);
  });
});

describe("a subscription's page (docs/webhooks.md §2, docs/admin.md §3)", () => {
  test("the attempts table shows a failing attempt, then the 2xx that followed with its answer snippet, newest first", async () => {
    const p = await server.newProject();
    const r = await receiver();
    await r.script([{ status: 500, body: "receiver broke" }], { status: 200, body: "thanks, got it" });
    const { id } = await createInConsole(p, { url: r.url, description: "Flaky" });
    const contact = await p.api("POST", "/contacts", { body: { firstName: "Retry" } });
    expect(contact.status).toBe(201);
    const page = await until(
      async () => {
        const got = await admin.get(`${hooksPath(p)}/${id}`);
        return tableRows(got.text, "Attempts, newest first").length >= 2 && got;
      },
      { timeoutMs: 20_000, what: "two attempts on the subscription's page" },
    );
    const [latest, first] = tableRows(page.text, "Attempts, newest first");
    const eventId = (await p.api("GET", "/events")).json.data[0].id;
    // time, result, status code, event (name, then id), attempt, duration, error, answer
    expect(latest!.slice(1, 5)).toEqual(["Delivered", "200", `contact.created ${eventId}`, "2"]);
    expect(latest![6]).toBe("—");
    expect(latest![7]).toBe("thanks, got it");
    // The failure is marked in words, with what became of it.
    expect(first!.slice(1, 5)).toEqual(["Failed Tried again", "500", `contact.created ${eventId}`, "1"]);
    expect(first![6]).toBe("HTTP 500");
    expect(first![7]).toBe("receiver broke");
    expect(latest![5]).toMatch(/^\d+ ms$/);
    // The health after the success.
    expect(pageText(page.text)).toMatch(/Consecutive failures 0 Last success \d{4}-\d{2}-\d{2} /);
  });

  test("Send test ping: the receiver gets a signed ping and the page says delivered, or says why not", async () => {
    const p = await server.newProject();
    const r = await receiver({ status: 204 });
    const { id, secret } = await createInConsole(p, { url: r.url });
    await admin.get(`${hooksPath(p)}/${id}`);
    const sent = await admin.post(`${hooksPath(p)}/${id}/test`);
    expect(sent.status).toBe(200);
    expect(pageText(sent.text)).toContain("Test ping delivered: the receiver answered HTTP 204.");
    const [ping] = await r.waitFor(1);
    expect(ping!.headers["x-service-event"]).toBe("ping");
    expect(ping!.json).toMatchObject({ event: "ping", data: { webhookId: id } });
    expect(serviceSignatureIndex(secret, ping!)).toBe(0);

    await r.respond({ status: 503 });
    const failed = await admin.post(`${hooksPath(p)}/${id}/test`);
    expect(failed.status).toBe(200);
    expect(pageText(failed.text)).toContain("Test ping not delivered The receiver answered HTTP 503.");
    // A ping is no delivery: it never counts as a failure of the subscription.
    expect((await p.api("GET", `/webhooks/${id}`)).json.consecutiveFailures).toBe(0);
  });

  test("disabled, redeliver is a visible conflict; enabled again, redeliver since a time queues the events since then", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const since = new Date(Date.now() - 1000).toISOString().slice(0, 19); // datetime-local, read as UTC
    const { id } = await createInConsole(p, { url: r.url, events: ["contact.created"] });
    for (const firstName of ["One", "Two"]) expect((await p.api("POST", "/contacts", { body: { firstName } })).status).toBe(201);
    const delivered = await r.waitFor(2);
    const eventIds = delivered.map((d) => d.json.id).sort();

    await admin.get(`${hooksPath(p)}/${id}`);
    // Disable asks first: the first post changes nothing.
    const ask = await admin.post(`${hooksPath(p)}/${id}/status`, { status: "disabled" });
    expect(ask.status).toBe(200);
    expect(pageText(ask.text)).toContain("Events recorded while it is disabled are not queued for it");
    expect((await p.api("GET", `/webhooks/${id}`)).json.status).toBe("active");
    const disable = await admin.post(`${hooksPath(p)}/${id}/status`, { status: "disabled", confirm: "yes" });
    expect(disable.status).toBe(303);
    const disabledPage = await admin.get(disable.location!);
    expect(pageText(disabledPage.text)).toContain("Subscription disabled");
    expect(disabledPage.text).toContain('<button type="submit" class="secondary">Enable</button>');
    expect((await p.api("GET", `/webhooks/${id}`)).json.status).toBe("disabled");

    const conflict = await admin.post(`${hooksPath(p)}/${id}/redeliver`, { since });
    expect(conflict.status).toBe(409);
    expect(pageText(conflict.text)).toContain("This subscription is disabled: enable it");
    expect(conflict.text).toContain(`value="${since}"`);

    const enable = await admin.post(`${hooksPath(p)}/${id}/status`, { status: "active" });
    expect(enable.status).toBe(303);
    expect((await p.api("GET", `/webhooks/${id}`)).json).toMatchObject({ status: "active", consecutiveFailures: 0 });
    await admin.get(enable.location!);

    const bad = await admin.post(`${hooksPath(p)}/${id}/redeliver`, { since: "yesterday" });
    expect(bad.status).toBe(422);
    expect(pageText(bad.text)).toContain("since must be an ISO 8601 timestamp");

    const queued = await admin.post(`${hooksPath(p)}/${id}/redeliver`, { since });
    expect(queued.status).toBe(303);
    expect(queued.location).toBe(`${hooksPath(p)}/${id}?done=redelivered&queued=2`);
    expect(pageText((await admin.get(queued.location!)).text)).toContain("2 events queued for redelivery.");
    const again = await r.waitFor(4);
    expect(again.slice(2).map((d) => d.json.id).sort()).toEqual(eventIds);
    expect(new Set(again.map((d) => d.headers["x-service-delivery"])).size).toBe(4);

    // A time after the events queues none.
    const later = new Date(Date.now() + 60_000).toISOString();
    const none = await admin.post(`${hooksPath(p)}/${id}/redeliver`, { since: later });
    expect(none.location).toBe(`${hooksPath(p)}/${id}?done=redelivered&queued=0`);
  });

  test("Rotate secret asks first, then shows the new secret once after a redirect; deliveries then carry the new signature first, the old second", async () => {
    const p = await server.newProject();
    const r = await receiver();
    const { id, secret: old } = await createInConsole(p, { url: r.url, description: "Rotating" });
    await admin.get(`${hooksPath(p)}/${id}`);
    const ask = await admin.post(`${hooksPath(p)}/${id}/rotate-secret`);
    expect(ask.status).toBe(200);
    expect(pageText(ask.text)).toContain('Rotate the secret of "Rotating"?');
    expect(ask.text).not.toMatch(SECRET);
    const confirmed = await admin.post(`${hooksPath(p)}/${id}/rotate-secret`, { confirm: "yes" });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe(`${hooksPath(p)}/${id}?done=rotated`);
    const rotated = await admin.get(confirmed.location!);
    expect(rotated.text).toContain('<label for="once-value" id="once-label">New signing secret</label>');
    expect(rotated.text).toContain('data-copy="once-value"'); // its copy button
    const shown = rotated.text.match(SECRET) ?? [];
    expect(shown).toHaveLength(1);
    expect(shown[0]).not.toBe(old);
    // A reload of the same address shows it no more, and rotates nothing.
    expect((await admin.get(confirmed.location!)).text).not.toMatch(SECRET);
    const api = await p.api("GET", `/webhooks/${id}`);
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({ id, description: "Rotating", status: "active" });
    expect(api.json.secret).toBeUndefined();

    await admin.post(`${hooksPath(p)}/${id}/test`);
    const [ping] = await r.waitFor(1);
    expect(serviceSignatureIndex(shown[0]!, ping!)).toBe(0);
    expect(serviceSignatureIndex(old, ping!)).toBe(1);
  });

  test("attempts come in pages of 20, newest first, the older ones a link away", async () => {
    const p = await server.newProject();
    const r = await receiver({ status: 200, body: "ok" });
    const { id } = await createInConsole(p, { url: r.url });
    for (let i = 0; i < 21; i++) expect((await p.api("POST", "/contacts", { body: { firstName: `P${i}` } })).status).toBe(201);
    await r.waitFor(21, 20_000);
    const first = await until(
      async () => {
        const got = await admin.get(`${hooksPath(p)}/${id}`);
        return got.text.includes("Older attempts") && got;
      },
      { timeoutMs: 20_000, what: "a second page of attempts" },
    );
    expect(tableRows(first.text, "Attempts, newest first")).toHaveLength(20);
    const older = /<a href="([^"]+)">Older attempts<\/a>/.exec(first.text)![1]!.replace(/&amp;/g, "&");
    expect(older).toMatch(/#attempts$/); // the next page opens at the attempts, past the forms above them
    const second = await admin.get(older);
    expect(second.status).toBe(200);
    const rows = tableRows(second.text, "Attempts, newest first");
    expect(rows).toHaveLength(1);
    const apiOldest = (await p.api("GET", `/webhooks/${id}/attempts`, { query: { limit: 200 } })).json.data.at(-1);
    expect(rows[0]![3]).toBe(`contact.created ${apiOldest.eventId}`);
    expect(second.text).toContain(">Newest attempts</a>");
  });
});
