/**
 * The check applied to every fuzzed answer: never a 5xx; a 4xx is the error envelope of
 * docs/api.md §4 / docs/api.md §4 with a code of the closed set that fits the status; every
 * answer has X-Request-Id; a 2xx parses as JSON of the documented shape.
 */
import type { FuzzRequest } from "./requests.ts";

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export const CODE_STATUS: Record<string, number> = {
  ERR_UNAUTHORIZED: 401, ERR_QUOTA_EXCEEDED: 402, ERR_FORBIDDEN: 403, ERR_NOT_FOUND: 404, ERR_METHOD_NOT_ALLOWED: 405,
  ERR_CONFLICT: 409, ERR_PAYLOAD_TOO_LARGE: 413, ERR_UNSUPPORTED_MEDIA_TYPE: 415, ERR_IDEMPOTENCY_KEY_REUSED: 422,
  ERR_FORM_VALIDATION: 422, ERR_INVALID_JSON: 422, ERR_RATE_LIMITED: 429, ERR_INTERNAL: 500,
};

const REASONS: Record<number, string> = {
  401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 409: "Conflict",
  413: "Payload Too Large", 415: "Unsupported Media Type", 422: "Unprocessable Entity", 429: "Too Many Requests",
  500: "Internal Server Error",
};

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const CONTACT_KEYS = ["contactId", "version", "identityType", "source", "firstName", "lastName", "email", "phone", "businessName", "website", "address", "contactType", "tags", "subscribed", "smsSubscribed", "notes", "customFields", "createdAt", "updatedAt"];
const ADDRESS_KEYS = ["line1", "line2", "city", "state", "zip", "country"];

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const sameKeys = (o: object, keys: string[]) => JSON.stringify(Object.keys(o).sort()) === JSON.stringify([...keys].sort());

/** Problems with a contact (docs/api.md §11.1, §3); empty when it is well formed. */
export function contactProblems(c: any, withDuplicateSignal = false): string[] {
  if (!isObj(c)) return ["contact is not an object"];
  const p: string[] = [];
  if (!sameKeys(c, withDuplicateSignal ? [...CONTACT_KEYS, "duplicateSignal"] : CONTACT_KEYS)) p.push(`contact keys ${Object.keys(c).sort().join(",")}`);
  if (!/^CR-\d+$/.test(c.contactId)) p.push(`contactId ${c.contactId}`);
  if (!["personal", "business"].includes(c.identityType)) p.push(`identityType ${c.identityType}`);
  if (!isObj(c.address) || !sameKeys(c.address, ADDRESS_KEYS)) p.push("address keys");
  if (!Array.isArray(c.tags) || c.tags.some((t: any) => !isObj(t) || !sameKeys(t, ["id", "name"]))) p.push("tags");
  if (typeof c.subscribed !== "boolean" || typeof c.smsSubscribed !== "boolean") p.push("subscribed flags");
  if (!isObj(c.customFields)) p.push("customFields");
  if (!ISO.test(c.createdAt) || !ISO.test(c.updatedAt)) p.push("timestamps");
  if (c.contactType !== null && (!isObj(c.contactType) || !sameKeys(c.contactType, ["id", "name", "category"]))) p.push("contactType");
  for (const k of ["source", "firstName", "lastName", "email", "phone", "businessName", "website", "notes"]) {
    if (c[k] !== null && typeof c[k] !== "string") p.push(`${k} type`);
  }
  if (withDuplicateSignal && !(isObj(c.duplicateSignal) && Number.isInteger(c.duplicateSignal.emailMatches) && Number.isInteger(c.duplicateSignal.phoneMatches))) p.push("duplicateSignal");
  return p;
}

function listProblems(body: any, item?: (x: any) => string[]): string[] {
  if (!isObj(body) || !Array.isArray(body.data) || !isObj(body.pagination)) return ["not a { data, pagination } list"];
  const { nextCursor, hasMore } = body.pagination;
  const p: string[] = [];
  if (typeof hasMore !== "boolean" || !(nextCursor === null || typeof nextCursor === "string") || hasMore !== (nextCursor !== null)) p.push(`pagination ${JSON.stringify(body.pagination)}`);
  if (item) for (const x of body.data) p.push(...item(x));
  return p;
}

function interactionProblems(l: any): string[] {
  if (!isObj(l)) return ["log is not an object"];
  const p: string[] = [];
  if (!/^il_/.test(l.id)) p.push(`log id ${l.id}`);
  if (!/^CR-\d+$/.test(l.contactId)) p.push("log contactId");
  if (!isObj(l.interactionType) || typeof l.interactionType.id !== "string") p.push("interactionType");
  if (!isObj(l.fields) || Object.values(l.fields).some((v) => typeof v !== "string")) p.push("fields");
  if (!ISO.test(l.date) || !ISO.test(l.createdAt)) p.push("log timestamps");
  return p;
}

function webhookProblems(w: any, withSecret: boolean): string[] {
  if (!isObj(w)) return ["webhook is not an object"];
  const p: string[] = [];
  if (!/^wh_/.test(w.id)) p.push(`webhook id ${w.id}`);
  if (typeof w.url !== "string" || !Array.isArray(w.events) || !["active", "disabled"].includes(w.status)) p.push("webhook fields");
  if (withSecret !== (typeof w.secret === "string" && w.secret.startsWith("whsec_"))) p.push(withSecret ? "secret missing" : "secret shown");
  return p;
}

/** Shape of a 2xx body by route; [] when fine or when the route has no stated shape. */
function successProblems(req: FuzzRequest, status: number, body: any, text: string): string[] {
  switch (req.route) {
    case "POST /contacts":
    case "PATCH /contacts/{contactId}":
      return contactProblems(body);
    case "GET /contacts/{contactId}":
      return contactProblems(body, true);
    case "GET /contacts":
      return listProblems(body, (c) => contactProblems(c));
    case "POST /contacts/{contactId}/interactions":
      return interactionProblems(body);
    case "GET /contacts/{contactId}/interactions":
      return listProblems(body, interactionProblems);
    case "POST /webhooks":
      return webhookProblems(body, true);
    case "PATCH /webhooks/{id}":
    case "GET /webhooks/{id}":
      return webhookProblems(body, false);
    case "GET /webhooks":
      return listProblems(body, (w) => webhookProblems(w, false));
    case "POST /webhooks/{id}/redeliver":
      return status === 202 && isObj(body) && Number.isInteger(body.queued) ? [] : [`redeliver answer ${status} ${text.slice(0, 200)}`];
    case "DELETE /webhooks/{id}":
      return status === 204 && text === "" ? [] : [`delete answer ${status}`];
    case "POST /forms/{formId}/submissions":
      if (req.headers["Content-Type"]?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return [];
      return isObj(body) && typeof body.submissionId === "string" && ISO.test(body.submittedAt) ? [] : ["submission answer"];
    default:
      return req.route.startsWith("GET /") && req.route !== "GET /ping" && (!req.route.includes("{") || req.route.endsWith("/attempts")) ? listProblems(body) : [];
  }
}

/** Every violation of the fuzz invariants by one answer (empty when it is fine). */
export function violations(req: FuzzRequest, res: Answer): string[] {
  const p: string[] = [];
  const type = res.headers.get("content-type") ?? "";
  if (res.status >= 500) p.push(`status ${res.status}`);
  if (!res.headers.get("x-request-id")) p.push("no X-Request-Id");
  const keyed = req.auth === "a" || req.auth === "b" || req.auth === "a-read";
  if (keyed && req.path.startsWith("/v1/") && !req.path.startsWith("/v1/forms/") && !res.headers.get("ratelimit-limit")) p.push("no RateLimit-Limit with a valid key");
  const htmlForm = req.route.startsWith("POST /forms") && type.startsWith("text/html");
  if (res.status === 204 || res.status === 303 || htmlForm) {
    if (res.status === 303 && !req.route.startsWith("POST /forms")) p.push("unexpected 303");
  } else {
    let body: any;
    try {
      body = JSON.parse(res.text);
    } catch {
      return [...p, `body is not JSON (${type}): ${res.text.slice(0, 200)}`];
    }
    if (res.status >= 400) p.push(...envelopeProblems(res, body));
    else if (res.status >= 200 && res.status < 300) p.push(...successProblems(req, res.status, body, res.text));
    else p.push(`unexpected status ${res.status}`);
  }
  return p;
}

function envelopeProblems(res: Answer, b: any): string[] {
  if (!isObj(b)) return ["error body is not an object"];
  const p: string[] = [];
  const extra = Object.keys(b).filter((k) => !["success", "statusCode", "error", "code", "message", "fieldName"].includes(k));
  if (extra.length) p.push(`extra envelope keys ${extra}`);
  if (b.success !== false) p.push("success is not false");
  if (b.statusCode !== res.status) p.push(`statusCode ${b.statusCode} on a ${res.status}`);
  if (b.error !== REASONS[res.status]) p.push(`error ${JSON.stringify(b.error)} on a ${res.status}`);
  if (CODE_STATUS[b.code] !== res.status) p.push(`code ${b.code} on a ${res.status}`);
  if (typeof b.message !== "string" || b.message.length === 0) p.push("message");
  if ((b.code === "ERR_FORM_VALIDATION" || b.code === "ERR_INVALID_JSON") && typeof b.fieldName !== "string") p.push(`${b.code} without fieldName`);
  if (b.code === "ERR_INVALID_JSON" && b.fieldName !== "body") p.push(`ERR_INVALID_JSON fieldName ${b.fieldName}`);
  if (b.fieldName !== undefined && typeof b.fieldName !== "string") p.push("fieldName type");
  if (res.status === 429 && !res.headers.get("retry-after")) p.push("429 without Retry-After");
  if (res.status === 405 && !res.headers.get("allow")) p.push("405 without Allow");
  return p;
}
