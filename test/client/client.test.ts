/**
 * The typed client against the real server (docs/api.md §16.3): typed calls of every kind,
 * the `/v1` base, the error envelope, and auto-pagination with `for await` (docs/api.md §11).
 * Retries and idempotency keys: retries.test.ts; webhooks: webhooks.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { apiBaseUrl, createClient, CrmApiError, unwrap, type CrmClient, type ListItem, type Schema } from "@crm-service/client";
import { startServer, type ProjectInfo, type ServerHandle } from "../helpers/server.ts";
import { recordingFetch } from "./recording-fetch.ts";

let srv: ServerHandle;

beforeAll(async () => {
  // Sandbox: a webhook may point at a loopback address, so no test depends on DNS.
  srv = await startServer({ env: "sandbox" });
}, 30_000);

afterAll(async () => {
  await srv?.stop();
}, 30_000);

let seq = 0;
const uniqueEmail = () => `client${++seq}.${Date.now()}@example.com`;

/**
 * The whole contact of a write's answer: the document types it `Contact | ContactReceipt |
 * ErasedContact | ErasedContactReceipt`, the receipt being for keys without contacts:read (docs/security.md §3) and
 * the erased shape for a replay after an erase; these keys have every scope.
 */
function whole(answer: object): Schema<"Contact"> {
  if (!("identityType" in answer) || typeof answer.identityType !== "string") throw new Error(`not the whole contact: ${JSON.stringify(answer)}`);
  return answer as Schema<"Contact">;
}

/** A fresh project and a client of it (an every-scope key), recording what it sends. */
async function projectClient(): Promise<{ project: ProjectInfo; crm: CrmClient; sent: ReturnType<typeof recordingFetch>["sent"] }> {
  const project = await srv.newProject();
  const recorder = recordingFetch();
  return { project, crm: createClient({ baseUrl: srv.origin, apiKey: project.key, fetch: recorder.fetch }), sent: recorder.sent };
}

describe("typed calls", () => {
  test("POST /contacts, GET /contacts/{contactId} and GET /contacts?email= answer typed contacts", async () => {
    const { crm } = await projectClient();
    const email = uniqueEmail();
    const created = await crm.POST("/contacts", { body: { firstName: "Ada", lastName: "Lovelace", email, tags: ["vip"] } });
    expect(created.response.status).toBe(201);
    const contact: Schema<"Contact"> = whole(created.data!);
    expect(contact).toMatchObject({ firstName: "Ada", lastName: "Lovelace", email });
    expect(contact.tags.map((t) => t.name)).toEqual(["vip"]);

    const got = await crm.GET("/contacts/{contactId}", { params: { path: { contactId: contact.contactId } } });
    expect(got.response.status).toBe(200);
    expect(got.data!.contactId).toBe(contact.contactId);
    expect(got.data!.duplicateSignal).toBeDefined();

    const list = await crm.GET("/contacts", { params: { query: { email: email.toUpperCase() } } });
    expect(list.data!.data.map((c) => c.contactId)).toEqual([contact.contactId]);
    expect(list.data!.pagination).toEqual({ nextCursor: null, hasMore: false });
  });

  test("PATCH, an interaction with the note shape of the oneOf, GET /ping and DELETE are typed calls too", async () => {
    const { project, crm } = await projectClient();
    const contact = unwrap(await crm.POST("/contacts", { body: { firstName: "Grace", email: uniqueEmail() } }));
    const patched = unwrap(await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: contact.contactId } }, body: { notes: "met at the fair", phone: null } }));
    expect(whole(patched).notes).toBe("met at the fair");

    const log = await crm.POST("/contacts/{contactId}/interactions", {
      params: { path: { contactId: contact.contactId } },
      body: { type: "note", note: "called back", uniqueIdentifier: `call-${Date.now()}` },
    });
    expect(log.response.status).toBe(201);
    expect(log.data!.contactId).toBe(contact.contactId);

    const ping = unwrap(await crm.GET("/ping"));
    expect(ping.projectId).toBe(project.id);

    const hook = unwrap(await crm.POST("/webhooks", { body: { url: "http://127.0.0.1:9/hooks/crm", events: ["contact.created"] } }));
    expect(hook.secret).toStartWith("whsec_");
    const deleted = await crm.DELETE("/webhooks/{id}", { params: { path: { id: hook.id } } });
    expect(deleted.response.status).toBe(204);
  });

  test("the compiler rejects a wrong path, a wrong body type and a missing path parameter (checked by npx tsc)", () => {
    // Never called: these lines exist for the type checker. Each @ts-expect-error fails
    // `tsc --noEmit` if the generated types stopped catching the mistake below it.
    const mistakes = (crm: CrmClient) => [
      // @ts-expect-error no such path
      crm.GET("/contact"),
      // @ts-expect-error firstName is a string
      crm.POST("/contacts", { body: { firstName: 1 } }),
      // @ts-expect-error the contactId path parameter is required
      crm.GET("/contacts/{contactId}", {}),
      // @ts-expect-error the interaction body is one of its two shapes: type "note" or interactionTypeId
      crm.POST("/contacts/{contactId}/interactions", { params: { path: { contactId: "CR-1" } }, body: { type: "call" } }),
    ];
    expect(typeof mistakes).toBe("function");
  });

  test("baseUrl may be the origin, the origin with a trailing slash, or already end in /v1", async () => {
    expect(apiBaseUrl("http://127.0.0.1:3000")).toBe("http://127.0.0.1:3000/v1");
    expect(apiBaseUrl("http://127.0.0.1:3000/")).toBe("http://127.0.0.1:3000/v1");
    expect(apiBaseUrl("https://crm.example.com/v1/")).toBe("https://crm.example.com/v1");
    expect(apiBaseUrl("https://example.com/crm")).toBe("https://example.com/crm/v1");
    for (const baseUrl of [srv.origin, `${srv.origin}/`, srv.baseUrl]) {
      const recorder = recordingFetch();
      const crm = createClient({ baseUrl, apiKey: srv.key, fetch: recorder.fetch });
      expect((await crm.GET("/ping")).response.status).toBe(200);
      expect(recorder.sent[0]!.url.pathname).toBe("/v1/ping");
      expect(recorder.sent[0]!.headers.get("authorization")).toBe(`Bearer ${srv.key}`);
    }
  });
});

describe("errors", () => {
  test("a 404 answers the typed envelope; unwrap throws CrmApiError with its code, status and X-Request-Id", async () => {
    const { crm } = await projectClient();
    const missing = await crm.GET("/contacts/{contactId}", { params: { path: { contactId: "CR-999999" } } });
    expect(missing.data).toBeUndefined();
    expect(missing.error).toMatchObject({ success: false, statusCode: 404, error: "Not Found", code: "ERR_NOT_FOUND" });
    expect(typeof missing.error!.message).toBe("string");
    const thrown = (() => {
      try {
        unwrap(missing);
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(CrmApiError);
    const apiError = thrown as CrmApiError;
    expect([apiError.status, apiError.code, apiError.fieldName]).toEqual([404, "ERR_NOT_FOUND", undefined]);
    expect(apiError.requestId).toBe(missing.response.headers.get("x-request-id"));
    expect(apiError.requestId).toBeTruthy();
  });

  test("a validation error carries fieldName", async () => {
    const { crm } = await projectClient();
    const invalid = await crm.POST("/contacts", { body: { firstName: "Bad", email: "not-an-email" } });
    expect(invalid.response.status).toBe(422);
    expect(invalid.error).toMatchObject({ code: "ERR_FORM_VALIDATION", fieldName: "email" });
  });
});

describe("paginate", () => {
  test("for await walks every page of GET /contacts (limit 2, 5 contacts: 3 GETs, each after the first with the previous nextCursor)", async () => {
    const { crm, sent } = await projectClient();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(unwrap(await crm.POST("/contacts", { body: { firstName: `Page${i}`, email: uniqueEmail() } })).contactId);
    sent.length = 0;

    const seen: ListItem<"/contacts">[] = [];
    for await (const contact of crm.paginate("/contacts", { params: { query: { limit: 2 } } })) seen.push(contact);

    // Newest first (docs/api.md §11): the reverse of creation.
    expect(seen.map((c) => c.contactId)).toEqual([...made].reverse());
    expect(sent.map((s) => s.method)).toEqual(["GET", "GET", "GET"]);
    expect(sent.map((s) => s.url.searchParams.get("limit"))).toEqual(["2", "2", "2"]);
    expect(sent[0]!.url.searchParams.has("cursor")).toBe(false);
    expect(sent[1]!.url.searchParams.get("cursor")).toBeTruthy();
    expect(sent[2]!.url.searchParams.get("cursor")).not.toBe(sent[1]!.url.searchParams.get("cursor"));
  });

  test("paginate keeps the filters on every page, fills path parameters, and fetches no page the loop does not ask for", async () => {
    const { crm, sent } = await projectClient();
    const contact = unwrap(await crm.POST("/contacts", { body: { firstName: "Logs", email: uniqueEmail() } }));
    const path = { contactId: contact.contactId };
    for (let i = 0; i < 3; i++) unwrap(await crm.POST("/contacts/{contactId}/interactions", { params: { path }, body: { type: "note", note: `n${i}` } }));
    sent.length = 0;

    const notes: string[] = [];
    for await (const log of crm.paginate("/contacts/{contactId}/interactions", { params: { path, query: { limit: 1 } } })) notes.push(log.note!);
    expect(notes.sort()).toEqual(["n0", "n1", "n2"]);
    expect(sent.every((s) => s.url.pathname === `/v1/contacts/${contact.contactId}/interactions`)).toBe(true);

    sent.length = 0;
    for await (const _ of crm.paginate("/contacts/{contactId}/interactions", { params: { path, query: { limit: 1 } } })) break;
    expect(sent).toHaveLength(1);
  });

  test("a page that fails throws CrmApiError out of the loop", async () => {
    const { crm } = await projectClient();
    const walk = async () => {
      for await (const _ of crm.paginate("/contacts", { params: { query: { limit: 0 } } })) void _;
    };
    const error = await walk().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 422, code: "ERR_FORM_VALIDATION", fieldName: "limit" });
  });
});

describe("the upsert recipe of docs/api.md §11 (GET, then PATCH or POST)", () => {
  test("GET /contacts?email=; PATCH the contact found, else POST: the second run updates instead of creating", async () => {
    const { crm } = await projectClient();
    const email = uniqueEmail();
    const upsert = async (fields: { firstName: string; phone?: string }) => {
      const found = unwrap(await crm.GET("/contacts", { params: { query: { email, limit: 1 } } })).data[0];
      if (found) return unwrap(await crm.PATCH("/contacts/{contactId}", { params: { path: { contactId: found.contactId } }, body: fields }));
      return unwrap(await crm.POST("/contacts", { body: { ...fields, email } }));
    };
    const first = await upsert({ firstName: "Alan" });
    const second = await upsert({ firstName: "Alan", phone: "+44 20 7946 0958" });
    expect(second.contactId).toBe(first.contactId);
    expect(whole(second).phone).toBeTruthy();
    expect(unwrap(await crm.GET("/contacts", { params: { query: { email } } })).data).toHaveLength(1);
  });
});
