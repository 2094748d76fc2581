import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
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
 * The first gate of every request after its id (docs/security.md §2): a body over its
 * route's limit is 413 before anything reads it, a session, a key or a CSRF token
 * included. A declared Content-Length is judged before one byte is read; a body without
 * one (chunked) is counted as it streams and refused the moment it passes the limit, so
 * a request holds at most its limit in memory. The error is answered in the form of the
 * route (the console's page, a browser form's page, the envelope) by the one error handler.
 */
export function limitBodies(): MiddlewareHandler<AppEnv> {
  return async function limitBodies(c, next) {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const maxSize = bodyLimitOf(c.req.method, c.req.path);
    return bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError("ERR_PAYLOAD_TOO_LARGE", `Request body exceeds ${inWords(maxSize)}.`);
      },
    })(c, next);
  };
}
