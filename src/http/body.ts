import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

export const MAX_BODY_BYTES = 1_048_576;

const tooLarge = () => new ApiError("ERR_PAYLOAD_TOO_LARGE", "Request body exceeds 1 MiB.");

/**
 * Reads at most `limit` bytes: 413 from Content-Length before reading, or as soon as the
 * stream passes the limit, without reading the rest.
 */
export async function readCapped(request: Request, limit = MAX_BODY_BYTES): Promise<string> {
  if (Number(request.headers.get("content-length") ?? "0") > limit) throw tooLarge();
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

/**
 * Body gate of every JSON write route (decisions §8, §12): 413 past 1 MiB, judged on
 * Content-Length before reading; 415 for a body that is not `application/json`; 422
 * ERR_INVALID_JSON (fieldName `body`) for malformed JSON. The raw text is kept for the
 * Idempotency-Key fingerprint, and the route's zod schema validates the parsed value.
 */
export function jsonBody(): MiddlewareHandler<AppEnv> {
  return async function jsonBody(c, next) {
    const type = c.req.header("content-type");
    const isJson = type !== undefined && /^application\/json\s*(;|$)/i.test(type.trim());
    const text = await readCapped(c.req.raw);
    if (text.length > 0 && !isJson) {
      throw new ApiError("ERR_UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
    }
    try {
      JSON.parse(text);
    } catch {
      throw new ApiError("ERR_INVALID_JSON", "The body is not valid JSON.", "body");
    }
    c.set("rawBody", text);
    // The stream is consumed: hand the text to the route's validator through Hono's body cache.
    (c.req.bodyCache as Record<string, unknown>).text = Promise.resolve(text);
    await next();
  };
}
