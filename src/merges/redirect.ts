import type { Context } from "hono";
import type { AppDeps, AppEnv } from "../http/env.ts";
import { ApiError, contactMerged as mergedError } from "../errors.ts";
import { parseContactId, formatContactId } from "../contacts/service.ts";
import { mergedTarget } from "./repository.ts";

export { contactMerged as mergedError } from "../errors.ts";

const CONTACT_PATH = /^\/v1\/contacts\/(CR-\d{1,15})(\/.*)?$/;

/**
 * A contact route's 404 for a merged-away contactId (docs/api.md §20.3), looked up only
 * once the route found no live contact: a GET answers 308 to the same path of the contact
 * it was merged into (following later merges), a write 409 ERR_CONTACT_MERGED naming it.
 * null when the path names no merged-away contact.
 */
export async function mergedAnswer(c: Context<AppEnv>, deps: AppDeps): Promise<Response | ApiError | null> {
  const match = CONTACT_PATH.exec(c.req.path);
  const caller = c.get("caller");
  if (!match || !caller) return null;
  const n = parseContactId(match[1]!);
  if (n === null) return null;
  // The request's own executor: a write's transaction is still open here (the error handler runs inside it).
  const target = await mergedTarget(c.get("db") ?? deps.db, caller.projectId, n);
  if (target === null) return null;
  const survivor = formatContactId(target);
  if (c.req.method !== "GET" && c.req.method !== "HEAD") return mergedError(match[1]!, survivor);
  const query = new URL(c.req.url).search;
  c.header("Location", `/v1/contacts/${survivor}${match[2] ?? ""}${query}`);
  return c.body(null, 308);
}
