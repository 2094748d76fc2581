import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

/** `application/json`, any parameters (docs/api.md §3.1). */
const JSON_TYPE = /^application\/json\s*(;|$)/i;
/** RFC 7396's type, which PATCH and PUT take as well (docs/api.md §3.1). */
const MERGE_PATCH_TYPE = /^application\/merge-patch\+json\s*(;|$)/i;

/** Whether `type` is a JSON type the method takes: POST only application/json; PATCH and PUT merge-patch too. */
function takesType(method: string, type: string | undefined): boolean {
  if (type === undefined) return false;
  const trimmed = type.trim();
  return JSON_TYPE.test(trimmed) || ((method === "PATCH" || method === "PUT") && MERGE_PATCH_TYPE.test(trimmed));
}

/**
 * Body gate of every JSON write route (docs/api.md §3.1, §4.3); the size was judged before
 * anything read the body (src/http/body-limit.ts): 415 for a body of another type; 422
 * ERR_INVALID_JSON (fieldName `body`) for malformed JSON. The raw text is kept for the
 * Idempotency-Key fingerprint, and the route's zod schema validates the parsed value.
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async function jsonBody(c, next) {
    const text = await c.req.text();
    if (text.length > 0 && !takesType(c.req.method, c.req.header("content-type"))) {
      const types = c.req.method === "PATCH" || c.req.method === "PUT" ? "application/json or application/merge-patch+json" : "application/json";
      throw new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", `Send the body as ${types}.`);
    }
    try {
      JSON.parse(text);
    } catch {
      throw new ApiError("ERR_INVALID_JSON", "The body is not valid JSON.", "body");
    }
    // c.req.text() kept the text in Hono's body cache: the route's validator reads it from there.
    c.set("rawBody", text);
    await next();
  };
}

/**
 * Gate of a write route whose document defines no requestBody (docs/api.md §3.3): an
 * empty body is fine, any other is 422 fieldName `body`. It reads what was sent through
 * the body limit (src/http/body-limit.ts), so an oversized body is still 413 first.
 */
export function noBody(): MiddlewareHandler<AppEnv> {
  return async function noBody(c, next) {
    const text = await c.req.text();
    if (text.length > 0) throw new ApiError("ERR_FORM_VALIDATION", "This operation takes no body.", "body");
    c.set("rawBody", text);
    await next();
  };
}
