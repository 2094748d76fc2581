import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";

/** The middleware `limitCreates()` returns: what a route's declaration is recognised by. */
const createLimited = new WeakSet<Function>();

/**
 * Declares on a route that each request to it also takes a token from the key's hourly
 * create bucket (docs/api.md §6: the project's contactCreatesPerHour, its default in
 * src/projects/limits.ts). The token is taken by `authenticate`, in the same decision as
 * the minute bucket's, so a refused request consumes neither; this middleware itself only
 * marks the route.
 */
export function limitCreates(): MiddlewareHandler {
  const declared: MiddlewareHandler = async function limitCreates(_c, next) {
    await next();
  };
  createLimited.add(declared);
  return declared;
}

/** Whether the route this request matched declared `limitCreates()`. */
export function limitsCreates(c: Context): boolean {
  return matchedRoutes(c).some((route) => createLimited.has(route.handler));
}
