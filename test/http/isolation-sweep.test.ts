/**
 * Isolation and scope sweep over the whole OpenAPI document (docs/api.md §1, §2;
 * docs/api.md §2). The routes come from GET /v1/openapi.json; ROUTES below holds the expected scope
 * and a request for each, and the sweep fails when the two lists differ, so a route added
 * to the document without an entry here breaks the test.
 *
 * 1. Project B's every-scope key, with project A's real ids in the path (and, where a body
 *    names reference records, A's ids in the body): 404 for A's resources; lists and
 *    key-level routes answer B's own data with none of A's ids or values.
 * 2. A key of project A lacking exactly the route's scope: 403 ERR_FORBIDDEN naming it; a
 *    key holding only that scope gets through (so the table's scope is the one needed).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectError, expectStatus } from "../helpers/expect.ts";
import { serviceSignatureIndex, startReceiver, type ReceivedRequest, type Receiver } from "../helpers/receiver.ts";
import { ALL_SCOPES, makeApi, startServer, type ApiResponse, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";

setDefaultTimeout(60_000);

type Kind =
  /** Addresses one of A's resources by path: B gets 404. */
  | "item"
  /** A list of the key's project: B gets 200 and nothing of A. */
  | "list"
  /** Creates in the key's project: B gets 2xx, with nothing of A. */
  | "create"
  /** About the key itself: B gets 200 and its own project. */
  | "self"
  /** Takes no key (docs/api.md §3): the key cannot move the request into its own project. */
  | "public"
  /** A batch naming A's contact (docs/api.md §18.4): B gets 200, and every item 404. */
  | "batch";

interface Ctx {
  /** A's ids by path parameter name. */
  params: Record<string, string>;
  a: Fixture;
  b: Fixture;
}

interface RouteSpec {
  /** The scope the route needs; null: any valid key (ping); "public": no key at all. */
  scope: string | null | "public";
  kind: Kind;
  body?: (ctx: Ctx, side: "A" | "B") => unknown;
  /** A query string the operation needs (PUT /contacts's matchOn). */
  query?: string;
  /** Non-2xx answers that still show the scope let the request through (restoring a contact not in the trash: 409). */
  through?: number[];
}

/** Every route of the OpenAPI document, with its scope (docs/api.md §3, §2, docs/webhooks.md §2). */
const ROUTES: Record<string, RouteSpec> = {
  "GET /ping": { scope: null, kind: "self" },
  "GET /contact-types": { scope: "contacts:read", kind: "list" },
  "GET /interaction-types": { scope: "contacts:read", kind: "list" },
  "GET /tags": { scope: "contacts:read", kind: "list" },
  "GET /custom-fields": { scope: "contacts:read", kind: "list" },
  "POST /contacts": { scope: "contacts:write", kind: "create", body: (_c, side) => ({ firstName: `Sweep${side}`, email: `sweep-${side.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}@b.example.com` }) },
  "GET /contacts": { scope: "contacts:read", kind: "list" },
  "PUT /contacts": {
    scope: "contacts:write",
    kind: "create",
    query: "?matchOn=email",
    body: (_c, side) => ({ firstName: `Upsert${side}`, email: `upsert-${side.toLowerCase()}-${crypto.randomUUID().slice(0, 8)}@b.example.com` }),
  },
  "POST /contacts/batch": { scope: "contacts:write", kind: "batch", body: (c) => ({ operation: "update", items: [{ contactId: c.params.contactId, notes: "hijacked" }] }) },
  "POST /interactions/batch": { scope: "interactions:write", kind: "batch", body: (c) => ({ items: [{ contactId: c.params.contactId, type: "note", note: "hijacked" }] }) },
  "GET /contacts/{contactId}": { scope: "contacts:read", kind: "item" },
  "PATCH /contacts/{contactId}": { scope: "contacts:write", kind: "item", body: () => ({ notes: "hijacked" }) },
  "POST /contacts/{contactId}/interactions": { scope: "interactions:write", kind: "item", body: () => ({ type: "note", note: "hijacked" }) },
  "GET /contacts/{contactId}/interactions": { scope: "contacts:read", kind: "item" },
  "DELETE /contacts/{contactId}": { scope: "contacts:write", kind: "item" },
  "POST /contacts/{contactId}/restore": { scope: "contacts:write", kind: "item", through: [409] },
  "GET /contacts/{contactId}/history": { scope: "contacts:read", kind: "item" },
  "GET /changes": { scope: "contacts:read", kind: "list" },
  "GET /duplicates": { scope: "contacts:read", kind: "list" },
  // The first merge of A's contact with its spare one goes through; later ones find the spare merged away (409).
  "POST /contacts/{contactId}/merge": { scope: "contacts:write", kind: "item", through: [409], body: (c) => ({ contactIds: [c.a.spareContactId] }) },
  // A's merge, undone by the first call that may; later ones are 409 (undone already).
  "POST /merges/{mergeId}/undo": { scope: "contacts:write", kind: "item", through: [409] },
  "GET /webhooks": { scope: "webhooks:manage", kind: "list" },
  "POST /webhooks": { scope: "webhooks:manage", kind: "create", body: (c, side) => ({ url: (side === "A" ? c.a : c.b).rx.url, events: ["*"], description: "sweep" }) },
  "GET /webhooks/{id}": { scope: "webhooks:manage", kind: "item" },
  "PATCH /webhooks/{id}": { scope: "webhooks:manage", kind: "item", body: () => ({ description: "hijacked" }) },
  "DELETE /webhooks/{id}": { scope: "webhooks:manage", kind: "item" },
  "POST /webhooks/{id}/test": { scope: "webhooks:manage", kind: "item" },
  "POST /webhooks/{id}/rotate-secret": { scope: "webhooks:manage", kind: "item" },
  "POST /webhooks/{id}/redeliver": { scope: "webhooks:manage", kind: "item", body: (c) => ({ eventIds: [c.a.eventId] }) },
  "GET /webhooks/{id}/attempts": { scope: "webhooks:manage", kind: "item" },
  "GET /events": { scope: "webhooks:manage", kind: "list" },
  "POST /forms/{formId}/submissions": { scope: "public", kind: "public", body: () => ({ email: `form-${crypto.randomUUID().slice(0, 8)}@sweep.example.com`, firstName: "FormSweep" }) },
};

interface Fixture {
  project: ProjectInfo;
  rx: Receiver;
  contactId: string;
  email: string;
  webhookId: string;
  webhookSecret: string;
  formId: string;
  eventId: string;
  /** A merge of two other contacts of the project, and a contact a merge into `contactId` may take (docs/api.md §20). */
  mergeId: string;
  spareContactId: string;
  logId: string;
  /** Every id and distinctive value of the project: none may show in the other project's answers. */
  secrets: string[];
}

let srv: ServerHandle;
let ctx: Ctx;
let docRoutes: { key: string; method: string; path: string; params: string[] }[] = [];

async function fixture(p: ProjectInfo, tag: string, contactIdLabel: string | null): Promise<Fixture> {
  const cf = await srv.cli(["custom-field", "create", "--project", p.id, "--title", `Secret Field ${tag}`, "--type", "text", "--json"]);
  const ct = await srv.cli(["contact-type", "create", "--project", p.id, "--name", `Secret Type ${tag}`, "--category", "Lead", "--json"]);
  const it = await srv.cli(["interaction-type", "create", "--project", p.id, "--name", `Secret Kind ${tag}`, "--json"]);
  const form = await srv.cli(["form", "create", "--project", p.id, "--name", `Secret Form ${tag}`, "--fields", "email,firstName", "--json"]);
  // The server reads reference data and forms from the database on each request: no wait needed.
  const rx = await startReceiver();
  const api = p.api;
  const email = `zq${tag.toLowerCase()}secret@${tag.toLowerCase()}-only.example.com`;
  const created = await api("POST", "/contacts", {
    body: {
      firstName: `Zorblax${tag}`,
      lastName: `Quintessa${tag}`,
      email,
      phone: tag === "A" ? "+14155550171" : "+14155550172",
      contactTypeId: ct.id,
      tags: [`secret-tag-${tag.toLowerCase()}`],
      customFields: { [cf.id]: `secret-value-${tag}` },
      notes: `secret-notes-${tag}`,
    },
  });
  expectStatus(created, 201);
  let contactId: string = created.json.contactId;
  if (contactIdLabel) {
    // A contactId no other project holds: B's own CR-n must never answer for A's.
    const relabel = await api("PATCH", `/contacts/${contactId}`, { body: { contactId: contactIdLabel } });
    expectStatus(relabel, 200);
    contactId = contactIdLabel;
  }
  const log = await api("POST", `/contacts/${contactId}/interactions`, {
    body: { interactionTypeId: it.id, note: `secret-log-${tag}`, fields: { secretKey: `secret-field-${tag}` }, uniqueIdentifier: `uid-${tag}` },
  });
  expectStatus(log, 201);
  const hook = await api("POST", "/webhooks", { body: { url: rx.url, events: ["*"], description: `secret-hook-${tag}` } });
  expectStatus(hook, 201);
  // An event after the subscription exists, so the project has a delivery and a recorded attempt.
  expectStatus(await api("PATCH", `/contacts/${contactId}`, { body: { lastName: `Quintessa${tag}2` } }), 200);
  await rx.waitUntil((r) => r.length >= 1, 10_000);
  const events = await api("GET", "/events", { query: { limit: 200 } });
  expectStatus(events, 200);
  // Oldest first: the creation (before the subscription: never delivered), the relabel, the log, the PATCH.
  const types = events.json.data.map((e: any) => e.event);
  if (contactIdLabel) expect(types).toEqual(["contact.created", "contact.updated", "interaction_log.created", "contact.updated"]);
  else expect(types).toEqual(["contact.created", "interaction_log.created", "contact.updated"]);
  const ping = await api("GET", "/ping");
  const tagObj = created.json.tags[0];
  const other = async (firstName: string) => (await api("POST", "/contacts", { body: { firstName } })).json.contactId as string;
  const [kept, gone, spareContactId] = [await other(`Kept${tag}`), await other(`Gone${tag}`), await other(`Spare${tag}`)];
  const merged = await api("POST", `/contacts/${kept}/merge`, { body: { contactIds: [gone] } });
  expectStatus(merged, 200);
  return {
    project: p,
    rx,
    contactId,
    email,
    webhookId: hook.json.id,
    webhookSecret: hook.json.secret,
    formId: form.id,
    eventId: events.json.data[0].id,
    mergeId: merged.json.merge.id,
    spareContactId,
    logId: log.json.id,
    secrets: [
      p.id,
      p.keyId,
      ping.json.keyId,
      contactIdLabel ?? "",
      email,
      `Zorblax${tag}`,
      `Quintessa${tag}`,
      `secret-notes-${tag}`,
      `secret-tag-${tag.toLowerCase()}`,
      tagObj.id,
      cf.id,
      `Secret Field ${tag}`,
      ct.id,
      `Secret Type ${tag}`,
      it.id,
      `Secret Kind ${tag}`,
      form.id,
      log.json.id,
      merged.json.merge.id,
      `secret-log-${tag}`,
      `secret-field-${tag}`,
      hook.json.id,
      hook.json.secret,
      rx.url,
      `secret-hook-${tag}`,
      ...events.json.data.map((e: any) => e.id),
    ].filter((s) => s.length > 0),
  };
}

beforeAll(async () => {
  srv = await startServer({ env: "sandbox" });
  const doc = await fetch(`${srv.origin}/v1/openapi.json`).then((r) => r.json());
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const method of Object.keys(ops)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const params = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
      docRoutes.push({ key: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, params });
    }
  }
  const pa = await srv.newProject({ name: "sweep-a" });
  const pb = await srv.newProject({ name: "sweep-b" });
  const a = await fixture(pa, "A", "CR-987654");
  const b = await fixture(pb, "B", null);
  ctx = { params: { contactId: a.contactId, id: a.webhookId, formId: a.formId, mergeId: a.mergeId }, a, b };
}, 60_000);

afterAll(async () => {
  await ctx?.a.rx.stop();
  await ctx?.b.rx.stop();
  await srv?.stop();
}, 60_000);

function pathFor(route: { path: string; params: string[] }, params: Record<string, string>) {
  let p = route.path;
  for (const name of route.params) {
    const value = params[name];
    if (!value) throw new Error(`no id to substitute for {${name}} in ${route.path}: add it to the sweep`);
    p = p.replace(`{${name}}`, encodeURIComponent(value));
  }
  return p;
}

function leaks(res: { text: string }, secrets: string[]) {
  return secrets.filter((s) => res.text.includes(s));
}

describe("the sweep covers the whole OpenAPI document", () => {
  test("every route of /v1/openapi.json has an entry in the scope table, and every entry is a route of the document", () => {
    const documented = docRoutes.map((r) => r.key).sort();
    expect(documented).toEqual(Object.keys(ROUTES).sort());
  });

  test("every path parameter of the document has one of A's ids to substitute", () => {
    for (const r of docRoutes) for (const name of r.params) expect(Object.keys(ctx.params), `${r.key} {${name}}`).toContain(name);
  });

  test("the document marks exactly the keyless routes as needing no bearer key", async () => {
    const doc = await fetch(`${srv.origin}/v1/openapi.json`).then((r) => r.json());
    for (const r of docRoutes) {
      const security = doc.paths[r.path][r.method.toLowerCase()].security ?? doc.security ?? [];
      const needsKey = security.some((s: Record<string, unknown>) => "bearerAuth" in s);
      expect(needsKey, r.key).toBe(ROUTES[r.key]!.scope !== "public");
    }
  });
});

describe("project B's every-scope key never reaches project A's data", () => {
  test("each route with A's ids: 404 for A's resources; lists, creates and ping show nothing of A", async () => {
    const bApi = makeApi(srv.baseUrl, async () => ctx.b.project.key);
    const failures: string[] = [];
    for (const route of docRoutes) {
      const spec = ROUTES[route.key]!;
      const path = pathFor(route, ctx.params) + (spec.query ?? "");
      const body = spec.body?.(ctx, "B");
      const res = await bApi(route.method, path, { body });
      const where = `${route.method} ${path} → ${res.status} ${res.text.slice(0, 300)}`;
      const leaked = spec.kind === "public" ? [] : leaks(res, ctx.a.secrets);
      if (leaked.length > 0) failures.push(`${where}: shows A's ${JSON.stringify(leaked)}`);
      if (spec.kind === "item") {
        if (res.status !== 404 || res.json?.code !== "ERR_NOT_FOUND") failures.push(`${where}: expected 404 ERR_NOT_FOUND`);
      } else if (spec.kind === "list") {
        if (res.status !== 200 || !Array.isArray(res.json?.data)) failures.push(`${where}: expected 200 with a list`);
      } else if (spec.kind === "create") {
        if (res.status !== 201) failures.push(`${where}: expected 201 in B's own project`);
      } else if (spec.kind === "batch") {
        const statuses = (res.json?.results ?? []).map((r: { status: number }) => r.status);
        if (res.status !== 200 || statuses.length === 0 || statuses.some((st: number) => st !== 404)) failures.push(`${where}: expected 200 with every item 404`);
      } else if (spec.kind === "self") {
        if (res.status !== 200 || res.json?.projectId !== ctx.b.project.id) failures.push(`${where}: expected 200 naming B's project`);
      } else if (spec.kind === "public") {
        // A's form takes the submission for A whatever key comes along; B must not get it.
        if (res.status !== 201) failures.push(`${where}: expected 201 (a form takes no key)`);
        const email = (body as { email: string }).email;
        const inB = await bApi("GET", "/contacts", { query: { email } });
        if (inB.status !== 200 || inB.json.data.length !== 0) failures.push(`${where}: the submission landed in B (${inB.text.slice(0, 200)})`);
        const inA = await ctx.a.project.api("GET", "/contacts", { query: { email } });
        if (inA.status !== 200 || inA.json.data.length !== 1) failures.push(`${where}: the submission did not land in A, whose form it is (${inA.text.slice(0, 200)})`);
      }
    }
    expect(failures).toEqual([]);
  });

  test("filters and lists with A's values, and bodies naming A's reference ids, find nothing of A", async () => {
    const b = ctx.b.project.api;
    const a = ctx.a;
    const secretsOf = (res: ApiResponse) => leaks(res, a.secrets);
    const queries: Record<string, string>[] = [{ email: a.email }, { search: "ZorblaxA" }, { phone: "+14155550171" }, { tag: "secret-tag-a" }];
    for (const query of queries) {
      const res = await b("GET", "/contacts", { query });
      expectStatus(res, 200);
      expect(secretsOf(res), JSON.stringify(query)).toEqual([]);
      // B's own ZorblaxB is one typo from ZorblaxA (docs/api.md §11.6): that search may find it, and only it.
      const found = res.json.data.map((c: { firstName: string }) => c.firstName);
      expect(found, JSON.stringify(query)).toEqual(query.search ? found.filter((name: string) => name === "ZorblaxB") : []);
    }
    // Each list, and a value of A's that A's own key finds in it (so the check can see a leak).
    const visibleToA: Record<string, string> = {
      "/contacts": a.email,
      "/tags": "secret-tag-a",
      "/custom-fields": "Secret Field A",
      "/contact-types": "Secret Type A",
      "/interaction-types": "Secret Kind A",
      "/webhooks": a.webhookId,
      "/events": a.eventId,
    };
    for (const [path, value] of Object.entries(visibleToA)) {
      const res = await b("GET", path, { query: { limit: 200 } });
      expectStatus(res, 200);
      expect(secretsOf(res), path).toEqual([]);
      const own = await a.project.api("GET", path, { query: { limit: 200 } });
      expect(secretsOf(own), path).toContain(value);
    }
    // A's reference ids are unknown in B (docs/api.md §3).
    const ct = a.secrets.find((s) => s.startsWith("ct_"))!;
    const cf = a.secrets.find((s) => s.startsWith("cf_"))!;
    const it = a.secrets.find((s) => s.startsWith("it_"))!;
    expectError(await b("POST", "/contacts", { body: { firstName: "X", contactTypeId: ct } }), "ERR_FORM_VALIDATION", "contactTypeId");
    expectError(await b("POST", "/contacts", { body: { firstName: "X", customFields: { [cf]: "v" } } }), "ERR_FORM_VALIDATION", `customFields.${cf}`);
    expectError(await b("PATCH", `/contacts/${ctx.b.contactId}`, { body: { contactTypeId: ct } }), "ERR_FORM_VALIDATION", "contactTypeId");
    expectError(await b("POST", `/contacts/${ctx.b.contactId}/interactions`, { body: { interactionTypeId: it, note: "x" } }), "ERR_FORM_VALIDATION", "interactionTypeId");
  });

  test("B's own subscription cannot be made to redeliver A's events: A's event ids are unknown in B (422 eventIds)", async () => {
    const b = ctx.b.project.api;
    const a = ctx.a;
    // docs/decisions.md: by eventIds exactly those events are queued; unknown ids are 422 eventIds, queueing nothing.
    expectError(await b("POST", `/webhooks/${ctx.b.webhookId}/redeliver`, { body: { eventIds: [a.eventId] } }), "ERR_FORM_VALIDATION", "eventIds");
    expectError(
      await b("POST", `/webhooks/${ctx.b.webhookId}/redeliver`, { body: { eventIds: [ctx.b.eventId, a.eventId] } }),
      "ERR_FORM_VALIDATION",
      "eventIds",
    );
    // A marker queued after the refusals: B's first event (made before its subscription, so
    // never delivered until now). Anything the refusals had queued would be due before it.
    expect(ctx.b.rx.forEvent(ctx.b.eventId)).toEqual([]);
    const marker = await b("POST", `/webhooks/${ctx.b.webhookId}/redeliver`, { body: { eventIds: [ctx.b.eventId] } });
    expectStatus(marker, 202);
    expect(marker.json).toEqual({ queued: 1 });
    await ctx.b.rx.waitUntil((r) => r.some((x) => x.json?.id === ctx.b.eventId), 10_000, "the marker redelivery");
    expect(ctx.b.rx.forEvent(ctx.b.eventId)).toHaveLength(1);
    expect(ctx.b.rx.requests.filter((r) => r.json?.projectId !== ctx.b.project.id)).toEqual([]);
    expect(ctx.b.rx.requests.filter((r) => leaks(r, a.secrets).length > 0)).toEqual([]);
  });

  test("project A's data is untouched by B's attempts to write it", async () => {
    const a = ctx.a.project.api;
    const bApi = makeApi(srv.baseUrl, async () => ctx.b.project.key);
    const { contactId, webhookId } = ctx.a;
    const snapshot = async () => {
      const c = await a("GET", `/contacts/${contactId}`);
      const logs = await a("GET", `/contacts/${contactId}/interactions`);
      const hook = await a("GET", `/webhooks/${webhookId}`);
      for (const res of [c, logs, hook]) expectStatus(res, 200);
      // The subscription's own settings (its delivery counters move with A's traffic).
      const { id, url, events, description, status } = hook.json;
      return { contact: c.json, logs: logs.json.data, hook: { id, url, events, description, status } };
    };
    const before = await snapshot();
    expect(before.hook.description).toBe("secret-hook-A");
    const attempts: [string, string, unknown][] = [
      ["PATCH", `/contacts/${contactId}`, { notes: "hijacked" }],
      ["POST", `/contacts/${contactId}/interactions`, { type: "note", note: "hijacked" }],
      ["PATCH", `/webhooks/${webhookId}`, { description: "hijacked" }],
      ["POST", `/webhooks/${webhookId}/rotate-secret`, undefined],
      ["POST", `/webhooks/${webhookId}/redeliver`, { eventIds: [ctx.a.eventId] }],
      ["DELETE", `/webhooks/${webhookId}`, undefined],
    ];
    for (const [method, path, body] of attempts) expectError(await bApi(method, path, { body }), "ERR_NOT_FOUND");
    expect(await snapshot()).toEqual(before);
    // The secret was not rotated: a new event reaches A's subscription signed with its first secret only.
    const lastName = `QuintessaA-${crypto.randomUUID()}`;
    expectStatus(await a("PATCH", `/contacts/${contactId}`, { body: { lastName } }), 200);
    const signedWithFirstSecret = (x: ReceivedRequest) => x.json?.data?.contact?.lastName === lastName && serviceSignatureIndex(ctx.a.webhookSecret, x) === 0;
    const received = await ctx.a.rx.waitUntil((r) => r.some(signedWithFirstSecret), 10_000, "the PATCH's delivery signed with A's first secret");
    const delivery = received.find(signedWithFirstSecret);
    expect(delivery!.headers["x-service-signature"].match(/v1=/g)).toHaveLength(1);
  });
});

describe("a key of project A without the route's scope is refused", () => {
  const without = new Map<string, string>();
  const only = new Map<string, string>();

  beforeAll(async () => {
    const pid = ctx.a.project.id;
    for (const s of ALL_SCOPES) {
      without.set(s, (await srv.createKey({ projectId: pid, scopes: ALL_SCOPES.filter((x) => x !== s) })).key);
      only.set(s, (await srv.createKey({ projectId: pid, scopes: [s] })).key);
    }
  });

  test("each scoped route: 403 ERR_FORBIDDEN naming the scope; ping and public routes need none", async () => {
    const failures: string[] = [];
    for (const route of docRoutes) {
      const spec = ROUTES[route.key]!;
      const path = pathFor(route, ctx.params) + (ROUTES[route.key]!.query ?? "");
      const body = spec.body?.(ctx, "A");
      if (spec.scope === "public") {
        const res = await makeApi(srv.baseUrl, async () => null)(route.method, path, { body });
        if (res.status !== 201) failures.push(`${route.key} without a key → ${res.status} ${res.text.slice(0, 200)}: a public route takes no key`);
        continue;
      }
      if (spec.scope === null) {
        for (const s of ALL_SCOPES) {
          const res = await makeApi(srv.baseUrl, async () => only.get(s)!)(route.method, path, { body });
          if (res.status !== 200) failures.push(`${route.key} with only ${s} → ${res.status}: needs no scope`);
        }
        continue;
      }
      const res = await makeApi(srv.baseUrl, async () => without.get(spec.scope!)!)(route.method, path, { body });
      const ok = res.status === 403 && res.json?.code === "ERR_FORBIDDEN" && typeof res.json?.message === "string" && res.json.message.includes(spec.scope);
      if (!ok) failures.push(`${route.key} with every scope but ${spec.scope} → ${res.status} ${res.text.slice(0, 200)}: expected 403 naming ${spec.scope}`);
    }
    expect(failures).toEqual([]);
  });

  test("each scoped route: a key with only that scope gets through (no 403), so the table names the scope needed", async () => {
    // A scratch subscription of A for the webhook routes (DELETE runs last and removes it).
    const scratch = await ctx.a.project.api("POST", "/webhooks", { body: { url: ctx.a.rx.url, events: ["contact.created"], description: "scratch" } });
    expectStatus(scratch, 201);
    const params = { ...ctx.params, id: scratch.json.id };
    const ordered = [...docRoutes].sort((x, y) => Number(x.method === "DELETE") - Number(y.method === "DELETE"));
    const failures: string[] = [];
    for (const route of ordered) {
      const spec = ROUTES[route.key]!;
      if (spec.scope === null || spec.scope === "public") continue;
      const res = await makeApi(srv.baseUrl, async () => only.get(spec.scope!)!)(route.method, pathFor(route, params) + (spec.query ?? ""), { body: spec.body?.(ctx, "A") });
      const through = (res.status >= 200 && res.status < 300) || (spec.through ?? []).includes(res.status);
      if (!through) failures.push(`${route.key} with only ${spec.scope} → ${res.status} ${res.text.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});
