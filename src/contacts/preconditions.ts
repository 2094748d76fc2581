import type { Context } from "hono";
import { ApiError } from "../errors.ts";

/**
 * Optimistic concurrency on contacts (docs/api.md §18.1): a contact's `version` is its
 * entity tag, `"<version>"`. `If-Match` holds `*` or a list of strong tags; a weak tag
 * (`W/"3"`) never matches, as RFC 9110 §13.1.1 asks of If-Match's strong comparison.
 */
export type Precondition = { any: true } | { versions: number[] };

export const etagOf = (version: number) => `"${version}"`;

/** The request's If-Match, or undefined when it has none. */
export function ifMatchOf(c: Context): Precondition | undefined {
  const header = c.req.header("if-match");
  if (header === undefined) return undefined;
  if (header.trim() === "*") return { any: true };
  const versions: number[] = [];
  for (const tag of header.split(",")) {
    const strong = /^\s*"(\d{1,15})"\s*$/.exec(tag);
    if (strong) versions.push(Number(strong[1]));
  }
  return { versions };
}

/** 412 unless the stored contact (its version, or undefined when there is none) satisfies `precondition`. */
export function checkPrecondition(precondition: Precondition | undefined, version: number | undefined): void {
  if (precondition === undefined) return;
  const holds = version !== undefined && ("any" in precondition || precondition.versions.includes(version));
  if (!holds) {
    throw new ApiError(
      "ERR_PRECONDITION_FAILED",
      version === undefined
        ? "If-Match names a version, and no contact matches: nothing was written."
        : `The contact has changed since: its version is ${version}, If-Match named another. Nothing was written.`,
    );
  }
}
