/**
 * Filtered subscriptions, black box (docs/webhooks.md §8.1, docs/api.md §13.1, decisions
 * §19): a subscription's `filter` takes a contact event only when the contact has one of the
 * categories and one of the tags and, for contact.updated, one of the changedFields changed;
 * tags are written by name or id and answered by id; unknown fields, categories or tags are
 * 422 `filter.<key>`; redeliver ignores the filter. "Nothing else arrives" is checked once
 * the whole outbox is drained, never after a sleep.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { pageText, signedInAdmin, tableRows } from "../helpers/admin.ts";
import { expectError, expectStatus } from "../helpers/expect.ts";
import type { Api } from "../helpers/server.ts";
import { useWebhookServer } from "../helpers/webhook-fixture.ts";

setDefaultTimeout(60_000);

const fx = useWebhookServer({ env: "sandbox", extraEnv: { CRM_WEBHOOK_RETRY_SCHEDULE: "1s", CRM_OUTBOX_POLL_MS: "50", CRM_WEBHOOK_TIMEOUT_MS: "30000" } });
const { receiver, newContact, untilOutboxDrained } = fx;

let seq = 0;
/** A tag name no other test uses. */
const tagName = (what: string) => `${what}-${process.pid}-${++seq}`;

/** POST /webhooks with `body` besides url; 201 asserted, deleted after the test. */
async function subscribe(url: string, body: Record<string, unknown>, call: Api = fx.api) {
  const res = await call("POST", "/webhooks", { body: { url, events: ["*"], ...body } });
  expectStatus(res, 201);
  fx.track(res.json.id, call);
  return res.json;
}

/** A tag of the project, made by naming it on a contact; its id. */
async function makeTag(name: string): Promise<string> {
  await newContact({ tags: [name] });
  const tags = (await fx.api("GET", "/tags", { query: { limit: 200 } })).json.data as Array<{ id: string; name: string }>;
  return tags.find((t) => t.name === name)!.id;
}

async function typeOfCategory(category: string): Promise<string> {
  const types = (await fx.api("GET", "/contact-types")).json.data as Array<{ id: string; category: string }>;
  return types.find((t) => t.category === category)!.id;
}

/** The events the receiver got, as `<event> <contactId>`. */
const received = (rx: { requests: Array<{ json: any }> }) =>
  rx.requests.map((r) => `${r.json.event} ${r.json.data.contact?.contactId ?? r.json.data.contactId}`);

describe("filter by tags (docs/webhooks.md §8.1)", () => {
  test("a subscription filtered by a tag receives the events of contacts with that tag only", async () => {
    const name = tagName("vip");
    const tagId = await makeTag(name);
    const rx = await receiver();
    // Written by name in another case; answered by id.
    const hook = await subscribe(rx.url, { events: ["contact.created", "contact.updated"], filter: { tags: [name.toUpperCase()] } });
    expect(hook.filter).toEqual({ tags: [tagId] });
    expect((await fx.api("GET", `/webhooks/${hook.id}`)).json.filter).toEqual({ tags: [tagId] });

    const tagged = await newContact({ tags: [name] });
    const plain = await newContact();
    expectStatus(await fx.api("PATCH", `/contacts/${plain.contactId}`, { body: { firstName: "Still plain" } }), 200);
    expectStatus(await fx.api("PATCH", `/contacts/${tagged.contactId}`, { body: { firstName: "Tagged" } }), 200);
    await untilOutboxDrained();
    expect(received(rx)).toEqual([`contact.created ${tagged.contactId}`, `contact.updated ${tagged.contactId}`]);
  });

  test("a contact that gains the tag is delivered from that change on", async () => {
    const name = tagName("gain");
    await makeTag(name);
    const rx = await receiver();
    await subscribe(rx.url, { events: ["contact.updated"], filter: { tags: [name] } });
    const c = await newContact();
    expectStatus(await fx.api("PATCH", `/contacts/${c.contactId}`, { body: { tags: [name] } }), 200);
    const [req] = await rx.waitFor(1);
    expect(req!.json.data.changedFields).toContain("tags");
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(1);
  });

  test("interaction_log.created is judged on its contact", async () => {
    const name = tagName("logs");
    await makeTag(name);
    const tagged = await newContact({ tags: [name] });
    const plain = await newContact();
    const rx = await receiver();
    await subscribe(rx.url, { events: ["interaction_log.created"], filter: { tags: [name] } });
    expectStatus(await fx.api("POST", `/contacts/${plain.contactId}/interactions`, { body: { type: "note", note: "no" } }), 201);
    expectStatus(await fx.api("POST", `/contacts/${tagged.contactId}/interactions`, { body: { type: "note", note: "yes" } }), 201);
    await untilOutboxDrained();
    expect(received(rx)).toEqual([`interaction_log.created ${tagged.contactId}`]);
  });
});

describe("filter by contactTypeCategory (docs/webhooks.md §8.1)", () => {
  test("a subscription filtered by a category receives the events of contacts of that category only", async () => {
    const lead = await typeOfCategory("Lead");
    const customer = await typeOfCategory("Customer");
    const rx = await receiver();
    const hook = await subscribe(rx.url, { events: ["contact.created"], filter: { contactTypeCategory: ["Lead"] } });
    expect(hook.filter).toEqual({ contactTypeCategory: ["Lead"] });
    const aLead = await newContact({ contactTypeId: lead });
    await newContact({ contactTypeId: customer });
    await untilOutboxDrained();
    expect(received(rx)).toEqual([`contact.created ${aLead.contactId}`]);
  });

  test("category and tags must both hold", async () => {
    const name = tagName("both");
    await makeTag(name);
    const lead = await typeOfCategory("Lead");
    const customer = await typeOfCategory("Customer");
    const rx = await receiver();
    await subscribe(rx.url, { events: ["contact.created"], filter: { contactTypeCategory: ["Lead"], tags: [name] } });
    const both = await newContact({ contactTypeId: lead, tags: [name] });
    await newContact({ contactTypeId: lead });
    await newContact({ contactTypeId: customer, tags: [name] });
    await untilOutboxDrained();
    expect(received(rx)).toEqual([`contact.created ${both.contactId}`]);
  });
});

describe("filter by changedFields (docs/webhooks.md §8.1)", () => {
  test("contact.updated is delivered only when one of the filter's changedFields changed", async () => {
    const rx = await receiver();
    await subscribe(rx.url, { events: ["contact.updated"], filter: { changedFields: ["email", "address"] } });
    const c = await newContact();
    const patch = async (body: Record<string, unknown>) => expectStatus(await fx.api("PATCH", `/contacts/${c.contactId}`, { body }), 200);
    await patch({ phone: "+15555550100" });
    await patch({ address: { city: "Lisbon" } }); // address takes address.city
    await patch({ firstName: "Renamed" });
    await patch({ email: `renamed.${Date.now()}@example.com` });
    await untilOutboxDrained();
    const changed = rx.requests.map((r) => r.json.data.changedFields);
    expect(changed).toHaveLength(2);
    expect(changed[0].some((f: string) => f.startsWith("address"))).toBe(true);
    expect(changed[1]).toContain("email");
  });

  test("a dotted entry matches that part only", async () => {
    const rx = await receiver();
    await subscribe(rx.url, { events: ["contact.updated"], filter: { changedFields: ["address.zip"] } });
    const c = await newContact();
    expectStatus(await fx.api("PATCH", `/contacts/${c.contactId}`, { body: { address: { city: "Porto" } } }), 200);
    expectStatus(await fx.api("PATCH", `/contacts/${c.contactId}`, { body: { address: { zip: "4000-001" } } }), 200);
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(1);
    expect(rx.requests[0]!.json.data.contact.address.zip).toBe("4000-001");
  });

  test("changedFields do not hold back other events: contact.created is delivered", async () => {
    const rx = await receiver();
    await subscribe(rx.url, { events: ["contact.created"], filter: { changedFields: ["email"] } });
    const c = await newContact();
    const [req] = await rx.waitFor(1);
    expect(req!.json.data.contact.contactId).toBe(c.contactId);
  });
});

describe("writing filter and ordering (docs/api.md §13.1)", () => {
  test("a subscription without a filter answers filter null and ordering none", async () => {
    const rx = await receiver();
    const hook = await subscribe(rx.url, {});
    expect(hook.filter).toBeNull();
    expect(hook.ordering).toBe("none");
  });

  test("PATCH replaces the filter whole, null removes it, and sets ordering", async () => {
    const name = tagName("patch");
    const tagId = await makeTag(name);
    const rx = await receiver();
    const hook = await subscribe(rx.url, { filter: { changedFields: ["email"] } });
    const patched = await fx.api("PATCH", `/webhooks/${hook.id}`, { body: { filter: { tags: [tagId] }, ordering: "per-contact" } });
    expectStatus(patched, 200);
    expect(patched.json.filter).toEqual({ tags: [tagId] });
    expect(patched.json.ordering).toBe("per-contact");
    const cleared = await fx.api("PATCH", `/webhooks/${hook.id}`, { body: { filter: null } });
    expect(cleared.json.filter).toBeNull();
    expect(cleared.json.ordering).toBe("per-contact");
    // A filter without keys takes everything: stored as none.
    expect((await fx.api("PATCH", `/webhooks/${hook.id}`, { body: { filter: {} } })).json.filter).toBeNull();
    expect((await fx.api("GET", "/webhooks", { query: { limit: 200 } })).json.data.find((w: any) => w.id === hook.id)).toMatchObject({ filter: null, ordering: "per-contact" });
  });

  const refusals: Array<{ name: string; body: Record<string, unknown>; fieldName: string }> = [
    { name: "an unknown tag is 422 filter.tags", body: { filter: { tags: ["no-such-tag-anywhere"] } }, fieldName: "filter.tags" },
    { name: "an unknown changed field is 422 filter.changedFields", body: { filter: { changedFields: ["emial"] } }, fieldName: "filter.changedFields" },
    { name: "an unknown custom field is 422 filter.changedFields", body: { filter: { changedFields: ["customFields.cf_nope"] } }, fieldName: "filter.changedFields" },
    { name: "an unknown category is 422 filter.contactTypeCategory", body: { filter: { contactTypeCategory: ["Vendor"] } }, fieldName: "filter.contactTypeCategory" },
    { name: "an unknown filter key is 422 naming it", body: { filter: { tag: ["x"] } }, fieldName: "filter.tag" },
    { name: "an unknown ordering is 422 ordering", body: { ordering: "fifo" }, fieldName: "ordering" },
  ];
  for (const r of refusals) {
    test(`POST: ${r.name}, and nothing is created`, async () => {
      const before = (await fx.api("GET", "/webhooks", { query: { limit: 200 } })).json.data.length;
      expectError(await fx.api("POST", "/webhooks", { body: { url: "http://127.0.0.1:9/hook", events: ["*"], ...r.body } }), "ERR_FORM_VALIDATION", r.fieldName);
      expect((await fx.api("GET", "/webhooks", { query: { limit: 200 } })).json.data.length).toBe(before);
    });
    test(`PATCH: ${r.name}, and the subscription is unchanged`, async () => {
      const rx = await receiver();
      const hook = await subscribe(rx.url, { filter: { contactTypeCategory: ["Customer"] } });
      expectError(await fx.api("PATCH", `/webhooks/${hook.id}`, { body: r.body }), "ERR_FORM_VALIDATION", r.fieldName);
      expect((await fx.api("GET", `/webhooks/${hook.id}`)).json).toMatchObject({ filter: { contactTypeCategory: ["Customer"] }, ordering: "none" });
    });
  }
});

describe("redeliver and the filter (docs/webhooks.md §8.1)", () => {
  test("redeliver sends the events it names even when the filter holds them back", async () => {
    const name = tagName("redeliver");
    await makeTag(name);
    const rx = await receiver();
    const hook = await subscribe(rx.url, { events: ["contact.created"], filter: { tags: [name] } });
    const since = new Date().toISOString();
    const plain = await newContact();
    await untilOutboxDrained();
    expect(rx.requests).toHaveLength(0);
    const events = (await fx.api("GET", "/events", { query: { since } })).json.data.filter((e: any) => e.data.contact?.contactId === plain.contactId);
    expect(events).toHaveLength(1);
    const res = await fx.api("POST", `/webhooks/${hook.id}/redeliver`, { body: { eventIds: [events[0].id] } });
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ queued: 1 });
    const [req] = await rx.waitFor(1);
    expect(req!.json.id).toBe(events[0].id);
  });
});

describe("the console's filter editor (docs/webhooks.md §8, docs/admin.md §3)", () => {
  test("saving the editor stores the filter and ordering through the API's rules, and the page and list show them by name", async () => {
    const name = tagName("console");
    const tagId = await makeTag(name);
    const rx = await receiver();
    const hook = await subscribe(rx.url, { description: `console-${seq}` });
    const { client } = await signedInAdmin(fx.srv.origin, fx.srv.env);
    const page = `/admin/projects/${fx.srv.projectId}/webhooks/${hook.id}`;
    expect(pageText((await client.get(page)).text)).toContain("Filter and ordering");

    const saved = await client.post(`${page}/filter`, { contactTypeCategory: ["Customer"], tags: `${name.toUpperCase()}\n`, changedFields: ["email", "address"], ordering: "per-contact" });
    expect(saved.status).toBe(303);
    expect((await fx.api("GET", `/webhooks/${hook.id}`)).json).toMatchObject({
      filter: { contactTypeCategory: ["Customer"], tags: [tagId], changedFields: ["email", "address"] },
      ordering: "per-contact",
    });
    const shown = pageText((await client.get(saved.location!)).text);
    expect(shown).toContain(`Tags: ${name}`);
    expect(shown).toContain("Categories: Customer");
    expect(shown).toContain("Per contact: one at a time, in order");
    const row = tableRows((await client.get(`/admin/projects/${fx.srv.projectId}/webhooks`)).text, "Subscriptions").find((r) => r[0] === `console-${seq}`);
    expect(row?.[2]).toContain(`Tags: ${name}`);
    expect(row?.[2]).toContain("Ordered per contact");

    // Nothing chosen: every event again.
    expect((await client.post(`${page}/filter`, { tags: "", ordering: "none" })).status).toBe(303);
    expect((await fx.api("GET", `/webhooks/${hook.id}`)).json).toMatchObject({ filter: null, ordering: "none" });
  });

  test("an unknown tag is shown on the editor as the API's error, and nothing is saved", async () => {
    const rx = await receiver();
    const hook = await subscribe(rx.url, { filter: { contactTypeCategory: ["Lead"] } });
    const { client } = await signedInAdmin(fx.srv.origin, fx.srv.env);
    const page = `/admin/projects/${fx.srv.projectId}/webhooks/${hook.id}`;
    await client.get(page);
    const refused = await client.post(`${page}/filter`, { tags: "no-such-tag-here", ordering: "per-contact" });
    expect(refused.status).toBe(422);
    const text = pageText(refused.text);
    expect(text).toContain('filter.tags names tags unknown in this project: "no-such-tag-here".');
    expect(refused.text).toContain('href="#f-filter-tags"');
    // The form keeps what was sent.
    expect(refused.text).toContain("no-such-tag-here</textarea>");
    expect((await fx.api("GET", `/webhooks/${hook.id}`)).json).toMatchObject({ filter: { contactTypeCategory: ["Lead"] }, ordering: "none" });
  });
});
