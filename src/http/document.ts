import type { OpenAPIHono } from "@hono/zod-openapi";
import pkg from "../../package.json" with { type: "json" };
import { registerEventWebhooks } from "../events/webhooks-document.ts";
import { completeExamples } from "./document-examples.ts";
import { headerComponents, IdempotencyKeyParameter, IfMatchParameter } from "./document-headers.ts";
import { documentScopes } from "./document-scopes.ts";
import type { AppEnv } from "./env.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const TAGS = [
  { name: "Service", description: "Verify a key and see its project and scopes." },
  { name: "Reference data", description: "Contact types, interaction types, tags and custom fields of the project (read-only here)." },
  { name: "Contacts", description: "Create, read, list, search, merge-patch, delete and restore contacts; a contact's change history." },
  { name: "Duplicates", description: "Groups of likely duplicate contacts, merging them (the survivor keeps its contactId) and undoing a merge within 30 days." },
  { name: "Changes", description: "The project's change feed: every change in order, deletions and erasures included, to keep a copy in sync." },
  { name: "Interaction logs", description: "The timeline of a contact: notes, calls, emails, meetings." },
  { name: "Webhooks", description: "Signed outbound deliveries of events: subscriptions, attempts, redelivery, test pings." },
  { name: "Events", description: "The project's events of the last 30 days, the same bodies webhooks deliver." },
  { name: "Web forms", description: "Public form submissions (no key), for lead capture." },
];

const DESCRIPTION = `Contacts, interaction logs and signed webhooks of a self-hosted CRM.

Every request carries \`Authorization: Bearer <API key>\` (keys are made in the product settings, \`crm key create\`).
Errors share one envelope (\`success\`, \`statusCode\`, \`error\`, \`code\`, \`message\`, \`fieldName\`).
Retry 429 and 5xx with exponential backoff plus jitter and a cap on attempts; on 429 wait at least \`Retry-After\`.
Send an \`Idempotency-Key\` with a POST to make its retry safe: the repeat answers the stored response with \`Idempotent-Replayed: true\`.`;

/**
 * The OpenAPI 3.1 document of the API (docs/api.md §16.1), built once (src/app.ts keeps it):
 * the routes never change, so every GET /v1/openapi.json answers the same bytes (docs/api.md §16.1).
 * The zod schemas and route definitions describe the operations; this adds what every
 * operation shares (headers, Idempotency-Key, 500, examples) so it cannot be forgotten
 * on one route.
 */
export function openApiDocument(api: OpenAPIHono<AppEnv>): string {
  registerEventWebhooks(api);
  const document: Json = api.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "CRM service",
      version: pkg.version,
      description: DESCRIPTION,
      // 3.1 takes an SPDX identifier; the generator's types are 3.0's.
      license: { name: pkg.license, identifier: pkg.license } as { name: string },
      contact: { name: "CRM service maintainers" },
    },
    servers: [{ url: "/v1", description: "This server." }],
    tags: TAGS,
  });
  // The default of every operation (the web form overrides it with none), so the reference
  // page and generators start from the bearer key.
  document.security = [{ bearerAuth: [] }];
  documentScopes(api, document);
  document.components.headers = headerComponents;
  document.components.parameters = { ...document.components.parameters, IdempotencyKey: IdempotencyKeyParameter, IfMatch: IfMatchParameter };
  for (const [method, operation, path] of operations(document)) completeOperation(method, operation, path);
  exclusiveShapes(document, "CreateInteraction", { CreateTypedInteraction: "interactionTypeId", CreateNoteInteraction: "type" });
  completeExamples(document);
  // `additionalProperties: {}` (zod's record of unknown) means "any value", as `true` does;
  // Scalar's reference page (GET /docs) refuses the empty schema there, so it gets `true`.
  return JSON.stringify(document, (key, value) =>
    key === "additionalProperties" && value !== null && typeof value === "object" && Object.keys(value).length === 0 ? true : value,
  );
}

function* operations(document: Json): Generator<[string, Json, string]> {
  for (const [path, item] of Object.entries(document.paths ?? {}) as [string, Json][]) {
    for (const method of ["get", "post", "put", "patch", "delete"]) if (item[method]) yield [method, item[method], path];
  }
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const RATE_LIMIT_HEADERS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "RateLimit"];

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** What every operation of the service shares, added in one place (docs/api.md §16). */
function completeOperation(method: string, operation: Json, path: string) {
  if (!operation.operationId) throw new Error(`${method.toUpperCase()} operation without operationId`);
  const authenticated = (operation.security ?? []).length > 0;
  // Every POST and PUT takes an Idempotency-Key (docs/api.md §8, §18.2); a form submission's belong to its form.
  const idempotent = method === "post" || method === "put";
  const responses = operation.responses;
  responses[500] ??= errorResponse("Unexpected server error; retry with backoff. Also answered while the database is unreachable, with Retry-After.");
  // Every write holds what is sent to its limit, also where no body is expected (docs/security.md §2).
  // Every operation refuses a query parameter it does not define (docs/api.md §3.3).
  responses[422] ??= errorResponse("Validation failed; fieldName names the field or query parameter.");
  if (method !== "get") responses[413] ??= errorResponse("Body over 1 MiB.");
  if (operation.requestBody) responses[415] ??= errorResponse("Body is not application/json.");
  // The writes that honour If-Match on a contact (docs/api.md §18.1).
  if (operation.operationId === "updateContact" || operation.operationId === "upsertContact") {
    operation.parameters = [...(operation.parameters ?? []), { $ref: "#/components/parameters/IfMatch" }];
  }
  // A merged-away contactId (docs/api.md §20.3): GET leads to the survivor, a write is refused.
  if (path.startsWith("/contacts/{contactId}")) {
    if (method === "get") responses[308] ??= { description: "The contact was merged into another: Location is the same path of the survivor.", headers: { Location: ref("Location") } };
    else responses[409] ??= errorResponse("The contact was merged into another (ERR_CONTACT_MERGED, with mergedInto).");
  }
  if (idempotent) {
    operation.parameters = [...(operation.parameters ?? []), { $ref: "#/components/parameters/IdempotencyKey" }];
    responses[409] ??= errorResponse("A request with this Idempotency-Key is still being processed (with Retry-After).");
  }
  for (const [status, response] of Object.entries(responses) as [string, Json][]) {
    const headers: Json = { "X-Request-Id": ref("X-Request-Id"), ...response.headers };
    if (authenticated && status !== "401") for (const name of RATE_LIMIT_HEADERS) headers[name] = ref(name);
    // A 409 of a keyed POST may be an Idempotency-Key still in flight, answered with Retry-After: 1.
    if (status === "429" || status === "500" || (idempotent && status === "409")) headers["Retry-After"] = ref("Retry-After");
    if (idempotent && status.startsWith("2")) headers["Idempotent-Replayed"] = ref("Idempotent-Replayed");
    response.headers = headers;
  }
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * A body that takes exactly one of two fields, validated by a refinement in zod
 * (src/interactions/schemas.ts), is shown as a `oneOf` of its shapes (docs/api.md §16): each
 * shape has the shared fields and requires its own, so generated clients get a union type.
 */
function exclusiveShapes(document: Json, name: string, shapes: Record<string, string>) {
  const schemas = document.components.schemas;
  const { properties, required = [], example, ...rest } = schemas[name];
  const own = Object.values(shapes);
  for (const [shape, field] of Object.entries(shapes)) {
    const shared = Object.fromEntries(Object.entries(properties).filter(([key]) => !own.includes(key) || key === field));
    schemas[shape] = { ...rest, properties: shared, required: [...required, field] };
  }
  schemas[name] = { oneOf: Object.keys(shapes).map((shape) => ({ $ref: `#/components/schemas/${shape}` })), ...(example ? { example } : {}) };
}
