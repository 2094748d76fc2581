/**
 * GET /v1/openapi.json describes every operation completely (docs/api.md §16.1), and what it
 * says is what the server does: the documented headers are on real answers.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pkg from "../../package.json" with { type: "json" };
import { expectStatus } from "../helpers/expect.ts";
import { startServer, type ServerHandle } from "../helpers/server.ts";

let srv: ServerHandle;
// deno-lint-ignore no-explicit-any
let doc: any;
type Operation = { method: string; path: string; op: any };
let ops: Operation[];

beforeAll(async () => {
  // Sandbox: plain-http loopback webhook URLs are allowed (docs/api.md §2).
  srv = await startServer({ env: "sandbox" });
  doc = (await srv.api("GET", "/openapi.json", { key: null })).json;
  ops = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op })),
  );
}, 60_000);

afterAll(async () => {
  await srv?.stop();
}, 60_000);

const resolve = (node: any): any => (node?.$ref ? resolve(node.$ref.split("/").slice(1).reduce((o: any, k: string) => o[k], doc)) : node);
const headersOf = (response: any) => Object.keys(resolve(response).headers ?? {});
const keyed = (o: Operation) => (o.op.security ?? []).length > 0;

describe("operations", () => {
  test("every operation has a unique camelCase operationId", () => {
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => /^[a-z][a-zA-Z0-9]*$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain("createContact");
  });

  test("every operation documents a 500 answer in the error envelope", () => {
    for (const { op } of ops) expect(resolve(op.responses["500"]).content["application/json"].schema.$ref).toBe("#/components/schemas/Error");
  });

  test("every POST takes Idempotency-Key as a header parameter, the web form's included", () => {
    const posts = ops.filter((o) => o.method === "post");
    expect(posts.map((o) => o.op.operationId)).toContain("submitWebForm");
    expect(posts.length).toBeGreaterThanOrEqual(7);
    for (const { op } of posts) {
      const params = (op.parameters ?? []).map(resolve);
      expect(params.find((p: any) => p.name === "Idempotency-Key")).toMatchObject({ in: "header", schema: { maxLength: 255 } });
    }
  });

  test("every answer documents X-Request-Id; every keyed answer but 401 the five RateLimit headers", () => {
    for (const o of ops) {
      for (const [status, response] of Object.entries(o.op.responses)) {
        const names = headersOf(response);
        expect(names).toContain("X-Request-Id");
        if (keyed(o) && status !== "401") {
          for (const h of ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"]) expect(names).toContain(h);
        }
      }
    }
  });

  test("every operation documents its 429 with Retry-After; 2xx answers of POSTs document Idempotent-Replayed", () => {
    for (const o of ops) {
      expect(headersOf(o.op.responses["429"])).toContain("Retry-After");
      if (o.method !== "post") continue;
      for (const [status, response] of Object.entries(o.op.responses)) if (status.startsWith("2")) expect(headersOf(response)).toContain("Idempotent-Replayed");
    }
  });

  test("the 201 of POST /contacts and POST /webhooks documents Location", () => {
    const find = (id: string) => ops.find((o) => o.op.operationId === id)!.op;
    expect(headersOf(find("createContact").responses["201"])).toContain("Location");
    expect(headersOf(find("createWebhook").responses["201"])).toContain("Location");
  });

  test("every request body and every JSON answer has an example", () => {
    for (const { op } of ops) {
      for (const media of Object.values(op.requestBody?.content ?? {}) as any[]) expect(media.example).toBeDefined();
      for (const response of Object.values(op.responses) as any[]) {
        const media = resolve(response).content?.["application/json"];
        if (media) expect(media.example).toBeDefined();
      }
    }
  });

  test("every operation has a tag that the document's global tags describe", () => {
    const described = new Map(doc.tags.map((t: any) => [t.name, t.description]));
    for (const { op } of ops) for (const tag of op.tags) expect(described.get(tag)).toBeString();
  });
});

describe("schemas", () => {
  const schema = (name: string) => doc.components.schemas[name];

  test("timestamps are date-time, emails email, URLs uri", () => {
    expect(schema("Contact").properties.createdAt.format).toBe("date-time");
    expect(schema("Contact").properties.updatedAt.format).toBe("date-time");
    expect(schema("InteractionLog").properties.date.format).toBe("date-time");
    expect(schema("Contact").properties.email).toMatchObject({ format: "email" });
    // An input email is trimmed first (docs/api.md §11.7): the document says so rather than `format: email`.
    expect(schema("CreateContact").properties.email.description).toContain("trimmed");
    expect(schema("CreateContact").properties.website).toMatchObject({ format: "uri" });
    expect(schema("CreateWebhook").properties.url.format).toBe("uri");
    expect(schema("Webhook").properties.url.format).toBe("uri");
  });

  test("the interaction body is a oneOf of its two shapes, each requiring its own field", () => {
    const body = ops.find((o) => o.op.operationId === "createInteractionLog")!.op.requestBody.content["application/json"].schema;
    const shapes = resolve(body).oneOf.map(resolve);
    expect(shapes).toHaveLength(2);
    expect(shapes.map((s: any) => s.required).sort()).toEqual([["interactionTypeId"], ["type"]]);
    expect(shapes[0].properties.type).toBeUndefined();
    expect(shapes[1].properties.interactionTypeId).toBeUndefined();
  });
});

describe("info and webhooks", () => {
  test("info.version is package.json's, with a license", () => {
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.info.license.name).toBeString();
  });

  test("every event of the catalog and the test ping are in webhooks, each with its headers and a typed data", () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      "contact.created",
      "contact.deleted",
      "contact.erased",
      "contact.merged",
      "contact.restored",
      "contact.updated",
      "interaction_log.created",
      "ping",
      "web_form.submitted",
    ]);
    for (const [name, item] of Object.entries(doc.webhooks) as [string, any][]) {
      const headers = item.post.parameters.filter((p: any) => p.in === "header").map((p: any) => p.name);
      expect(headers).toEqual(expect.arrayContaining(["X-Service-Event", "X-Service-Delivery", "X-Service-Signature", "webhook-id", "webhook-timestamp", "webhook-signature"]));
      const body = resolve(item.post.requestBody.content["application/json"].schema);
      expect(body.properties.event.const ?? body.properties.event.enum?.[0]).toBe(name);
      expect(resolve(body.properties.data).properties).toBeObject();
    }
    const created = resolve(doc.webhooks["contact.created"].post.requestBody.content["application/json"].schema);
    // The contact, or the same contact erased since (docs/import-export.md §3: the event stays, its fields null).
    const contact = resolve(created.properties.data).properties.contact;
    expect((contact.anyOf ?? contact.oneOf).map((s: any) => s.$ref)).toEqual(["#/components/schemas/Contact", "#/components/schemas/ErasedContact"]);
    const erased = resolve({ $ref: "#/components/schemas/ErasedContact" });
    expect(erased.properties.contactId.type).toBe("string");
    expect(erased.properties.email.type).toBe("null");
  });
});

describe("the document matches the server", () => {
  test("a created contact's answer carries every header its documented 201 names", async () => {
    const res = await srv.api("POST", "/contacts", { body: { firstName: "Doc" }, headers: { "Idempotency-Key": crypto.randomUUID() } });
    expectStatus(res, 201);
    const documented = headersOf(ops.find((o) => o.op.operationId === "createContact")!.op.responses["201"]);
    const missing = documented.filter((h) => h !== "Idempotent-Replayed" && !res.headers.has(h));
    expect(missing).toEqual([]);
  });

  test("POST /webhooks answers 201 with Location naming the new subscription", async () => {
    const res = await srv.api("POST", "/webhooks", { body: { url: "http://127.0.0.1:9/hook", events: ["*"] } });
    expectStatus(res, 201);
    expect(res.headers.get("location")).toBe(`/v1/webhooks/${res.json.id}`);
    expectStatus(await srv.api("GET", res.headers.get("location")!.slice(3)), 200);
  });

  test("an event of GET /events has the shape its webhook documents", async () => {
    const events = (await srv.api("GET", "/events")).json.data;
    const created = events.find((e: any) => e.event === "contact.created");
    const schema = resolve(doc.webhooks["contact.created"].post.requestBody.content["application/json"].schema);
    expect(Object.keys(created).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(Object.keys(created.data)).toEqual(Object.keys(resolve(schema.properties.data).properties));
  });
});
