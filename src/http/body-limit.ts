import type { MiddlewareHandler } from "hono";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

const MiB = 1024 * 1024;

/** Every request body's limit unless a row below names its route (docs/security.md §2). */
export const DEFAULT_BODY_BYTES = 1 * MiB;
/** The batch routes (1,000 items a request). */
export const BATCH_BODY_BYTES = 5 * MiB;
/** The console's CSV upload, the only route that takes more. */
export const UPLOAD_BODY_BYTES = 20 * MiB;

/**
 * The routes with a limit of their own, matched on the exact method and the whole path:
 * no other path reaches a larger limit by its shape (a path that merely ends in `/import`
 * gets the default).
 */
const LARGER_LIMITS: { method: string; path: RegExp; bytes: number }[] = [
  { method: "POST", path: /^\/admin\/projects\/[^/]+\/import$/, bytes: UPLOAD_BODY_BYTES },
  { method: "POST", path: /^\/v1\/(contacts|interactions)\/batch$/, bytes: BATCH_BODY_BYTES },
];

/** The most bytes a request to `method path` may send. */
export function bodyLimitOf(method: string, path: string): number {
  return LARGER_LIMITS.find((row) => row.method === method && row.path.test(path))?.bytes ?? DEFAULT_BODY_BYTES;
}

const inWords = (bytes: number) => `${bytes / MiB} MiB`;

/**
 * The body gate (docs/security.md §2), mounted where a body is first wanted: ahead of the
 * console's session and CSRF checks, after an API key and scope (which read only headers),
 * first on a web form. A body over its route's limit is 413 before anything holds it.
 * A declared Content-Length is judged before one byte is read. A body without one
 * (chunked) is counted as it streams: the read that passes the limit fails with the 413,
 * so a request never holds more than its limit, and a body nobody reads (a request refused
 * for its session first) is never held at all. The error is answered in the form of the
 * route (the console's page, a browser form's page, the envelope) by the one error handler.
 */
export function limitBodies(): MiddlewareHandler<AppEnv> {
  return async function limitBodies(c, next) {
    const request = c.req.raw;
    if (!request.body) return next();
    const limit = bodyLimitOf(c.req.method, c.req.path);
    const tooLarge = () => new ApiError("ERR_PAYLOAD_TOO_LARGE", `Request body exceeds ${inWords(limit)}.`);
    const declared = request.headers.get("content-length");
    if (declared !== null && !request.headers.has("transfer-encoding")) {
      if (Number(declared) > limit) throw tooLarge();
      return next();
    }
    let seen = 0;
    const counted = request.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, stream) {
          seen += chunk.byteLength;
          if (seen > limit) stream.error(tooLarge());
          else stream.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(request, { body: counted, duplex: "half" } as RequestInit);
    return next();
  };
}
