import { DEFAULT_CONTACT_CREATES_PER_HOUR, DEFAULT_REQUESTS_PER_MINUTE } from "../projects/limits.ts";

/**
 * Response headers and the Idempotency-Key parameter as the OpenAPI document shows them
 * (docs/api.md §16); src/http/document.ts puts them on every operation they apply to.
 */
const integer = (description: string, example: number) => ({ description, schema: { type: "integer", minimum: 0 }, example });
const text = (description: string, example: string) => ({ description, schema: { type: "string" }, example });

export const headerComponents = {
  "RateLimit-Limit": integer(
    `Requests the tightest of the key's windows allows (${DEFAULT_REQUESTS_PER_MINUTE} a minute; POST /contacts also ${DEFAULT_CONTACT_CREATES_PER_HOUR} an hour).`,
    DEFAULT_REQUESTS_PER_MINUTE,
  ),
  "RateLimit-Remaining": integer("Requests left in that window.", 117),
  "RateLimit-Reset": integer("Seconds until that window is full again.", 2),
  "RateLimit-Policy": text("The window, IETF RateLimit draft syntax.", '"minute";q=120;w=60'),
  RateLimit: text("Remaining and reset of the window, IETF RateLimit draft syntax.", '"minute";r=117;t=2'),
  "X-Request-Id": text("Unique id of this request; give it when reporting a problem. It is in the server's log line.", "req_5a31d74e7ae9430cbb625e9468392949"),
  "Retry-After": integer("Seconds to wait before retrying.", 7),
  Location: { description: "Path of the created resource.", schema: { type: "string", format: "uri-reference" }, example: "/v1/contacts/CR-1" },
  "Idempotent-Replayed": {
    description: "Present when the answer is the stored answer of an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
    example: "true",
  },
};

export const IfMatchParameter = {
  name: "If-Match",
  in: "header",
  required: false,
  description:
    'Makes the write conditional (docs/api.md §18.1): "<version>" (or a list of them, or *) the contact must still have; ' +
    "else 412 ERR_PRECONDITION_FAILED and nothing is written. A weak tag never matches.",
  schema: { type: "string", maxLength: 255 },
  example: '"3"',
};

export const IdempotencyKeyParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    "Makes a retry of this POST or PUT safe for 24 hours: a repeat with the same key and body answers the stored response " +
    "(Idempotent-Replayed: true); the same key with another body is 422; while the first is in flight, 409.",
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[\\x20-\\x7E]+$" },
  example: "5f0c6a8e-3f1d-4d8b-9a55-2b7c1e0d4f7a",
};
