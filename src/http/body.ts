import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

/**
 * Body gate of every JSON write route (docs/api.md §4, §4.3); the size was judged before
 * anything read the body (src/http/body-limit.ts): 415 for a body that is not `application/json`; 422
 * ERR_INVALID_JSON (fieldName `body`) for malformed JSON. The raw text is kept for the
 * Idempotency-Key fingerprint, and the route's zod schema validates the parsed value.
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async function jsonBody(c, next) {
    const type = c.req.header("content-type");
    const isJson = type !== undefined && /^application\/json\s*(;|$)/i.test(type.trim());
    const text = await c.req.text();
    if (text.length > 0 && !isJson) {
      throw new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
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
