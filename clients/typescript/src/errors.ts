import type { components } from "./schema.js";

/**
 * The error envelope every failed call answers (docs/api.md §4):
 * `{ success: false, statusCode, error, code, message, fieldName? }`.
 */
export type ErrorEnvelope = components["schemas"]["Error"];

/** The stable machine-readable codes, e.g. `ERR_FORM_VALIDATION` (docs/api.md §4). */
export type ErrorCode = ErrorEnvelope["code"];

/** True when `value` has the envelope's shape (a proxy in between may answer something else). */
export function isErrorEnvelope(value: unknown): value is ErrorEnvelope {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.success === false && typeof v.statusCode === "number" && typeof v.code === "string" && typeof v.message === "string";
}

/**
 * A failed call as an exception: thrown by `paginate`, `unwrap` and the helpers. Carries the
 * envelope's fields and the `X-Request-Id` to quote when reporting a problem.
 */
export class CrmApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly fieldName: string | undefined;
  /** 409 ERR_CONTACT_MERGED: the contactId the contact was merged into (docs/api.md §20.3); undefined on other errors. */
  readonly mergedInto: string | undefined;
  /** The envelope as answered; undefined when the body was not one (e.g. a proxy's 502 page). */
  readonly envelope: ErrorEnvelope | undefined;
  readonly requestId: string | null;

  constructor(body: unknown, response: Response) {
    const envelope = isErrorEnvelope(body) ? body : undefined;
    super(envelope ? `${envelope.code}: ${envelope.message}` : `HTTP ${response.status} ${response.statusText}`.trim());
    this.name = "CrmApiError";
    this.status = response.status;
    this.code = envelope?.code;
    this.fieldName = envelope?.fieldName;
    this.mergedInto = envelope?.mergedInto;
    this.envelope = envelope;
    this.requestId = response.headers.get("x-request-id");
  }
}

/**
 * The data of an openapi-fetch result, or a `CrmApiError` thrown for its error:
 * `const contact = unwrap(await crm.POST("/contacts", { body }))`.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) throw new CrmApiError(result.error, result.response);
  return result.data as T;
}
