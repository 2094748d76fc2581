import { z } from "@hono/zod-openapi";
import { requireScope } from "../auth/middleware.ts";
import type { Scope } from "../auth/scopes.ts";
import { ErrorSchema } from "../errors.ts";
import { jsonBody, noBody } from "./body.ts";
import { limitBodies } from "./body-limit.ts";
import { strictQuery } from "./strict-query.ts";
import { transactional, type Prepare } from "./transaction.ts";
import type { RunOptions } from "../storage/unit-of-work.ts";

const errorContent = (description: string) => ({ description, content: { "application/json": { schema: ErrorSchema } } });

/** Error answers every authenticated route may give. */
export const commonErrors = {
  401: errorContent("Missing, malformed, unknown, revoked or expired API key."),
  403: errorContent("The key lacks the scope."),
  422: errorContent("Validation failed; fieldName names the field."),
  429: errorContent("Rate limit exceeded; see Retry-After."),
} as const;

export const errors = {
  402: errorContent("Contact quota exhausted."),
  404: errorContent("Not found in this project."),
  409: errorContent("Uniqueness conflict, an ambiguous upsert match (ERR_AMBIGUOUS_MATCH), or the Idempotency-Key is in flight."),
  410: errorContent("The cursor is older than the change log's retention (ERR_CURSOR_EXPIRED): bootstrap again."),
  412: errorContent("If-Match named a version the contact no longer has (ERR_PRECONDITION_FAILED); nothing was written."),
  413: errorContent("Body over 1 MiB."),
  415: errorContent("Body is not application/json."),
} as const;

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

/** A 201 answer with its Location header (the header itself: src/http/document-headers.ts). */
export const created = <T extends z.ZodType>(schema: T, description: string) => ({
  ...json(schema, description),
  headers: { Location: { $ref: "#/components/headers/Location" } },
});

export const jsonRequest = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema } },
});

/**
 * A PATCH or PUT body (docs/api.md §3.1): `application/json` or RFC 7396's
 * `application/merge-patch+json`, the same schema under both (src/http/body.ts takes both
 * on these methods only).
 */
export const mergePatchRequest = <T extends z.ZodType>(schema: T) => ({
  required: true,
  content: { "application/json": { schema }, "application/merge-patch+json": { schema } },
});

export const security = [{ bearerAuth: [] }];

/** The scope each route's scope check requires, by the check itself: the document reads it from the routes (src/http/document-scopes.ts). */
const scopeChecks = new WeakMap<Function, Scope>();

/** The scope a route's middleware `handler` requires, if it is a scope check made here. */
export const scopeRequiredBy = (handler: Function): Scope | undefined => scopeChecks.get(handler);

function scopeCheck(scope: Scope) {
  const check = requireScope(scope);
  scopeChecks.set(check, scope);
  return check;
}

/** Middleware of a read route: the scope check, then strict queries (docs/api.md §3.3). */
export const reading = (scope?: Scope) => [...(scope ? [scopeCheck(scope)] : []), strictQuery()];

/**
 * Middleware of a write route: scope, the body gate (JSON, or none for `body: false`: a
 * route without a requestBody refuses any, docs/api.md §3.3), strict queries, then one
 * transaction (with Idempotency-Key). `transaction: false` is for the one route that
 * calls out over HTTP (the test ping), which must not hold the writer while it waits;
 * `prepare` runs before the transaction opens (network I/O, docs/api.md §7).
 */
export const writing = (scope: Scope, options: { body?: boolean; transaction?: boolean; prepare?: Prepare } & RunOptions = {}) => [
  scopeCheck(scope),
  // Also on routes that take no body: whatever is sent is held to the limit (docs/security.md §2).
  limitBodies(),
  options.body === false ? noBody() : jsonBody(),
  strictQuery(),
  transactional({ transaction: options.transaction !== false, prepare: options.prepare, alone: options.alone }),
];
