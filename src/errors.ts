import { z } from "@hono/zod-openapi";
import type { Context } from "hono";

/** The closed set of error codes and their statuses (docs/api.md §4). */
export const errorStatus = {
  ERR_UNAUTHORIZED: 401,
  ERR_QUOTA_EXCEEDED: 402,
  ERR_FORBIDDEN: 403,
  ERR_NOT_FOUND: 404,
  ERR_METHOD_NOT_ALLOWED: 405,
  ERR_CONFLICT: 409,
  ERR_CONTACT_MERGED: 409,
  ERR_CURSOR_EXPIRED: 410,
  ERR_UNDO_EXPIRED: 410,
  ERR_AMBIGUOUS_MATCH: 409,
  ERR_PRECONDITION_FAILED: 412,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_IDEMPOTENCY_KEY_REUSED: 422,
  ERR_FORM_VALIDATION: 422,
  ERR_INVALID_JSON: 422,
  ERR_BATCH_REJECTED: 422,
  ERR_RATE_LIMITED: 429,
  ERR_INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

const reasons: Record<number, string> = {
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  410: "Gone",
  412: "Precondition Failed",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

/** The one opaque 401 message, whatever the cause (docs/api.md §2 rule 4). */
export const UNAUTHORIZED_MESSAGE = "Invalid or missing API key.";

/** Every expected failure is thrown as an ApiError and rendered by `errorResponse`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly fieldName?: string,
    readonly headers?: Record<string, string>,
    /** Members the envelope carries beside the usual ones: `matches` (docs/api.md §18.2), `results` (§18.4), `mergedInto` (§20.3). */
    readonly details?: Pick<ErrorEnvelope, "matches" | "results" | "mergedInto">,
  ) {
    super(message);
    this.status = errorStatus[code];
  }
}

export const validationError = (fieldName: string, message: string) =>
  new ApiError("ERR_FORM_VALIDATION", message, fieldName);
export const notFound = (what: string) => new ApiError("ERR_NOT_FOUND", `${what} not found.`);
/** A write to a merged-away contact (docs/api.md §20.3): 409 naming the contact it lives on in. */
export const contactMerged = (contactId: string, mergedInto: string, fieldName?: string) =>
  new ApiError("ERR_CONTACT_MERGED", `${contactId} was merged into ${mergedInto}.`, fieldName, undefined, { mergedInto });

/** The message of every contact's 404: the one a merged-away contactId is answered in place of (docs/api.md §20.3). */
export const CONTACT_NOT_FOUND = "Contact not found.";

/** The error envelope of docs/api.md §4: its one definition, which the OpenAPI document shows as `Error`. */
export const ErrorSchema = z
  .object({
    success: z.literal(false),
    statusCode: z.number().int(),
    error: z.string(),
    code: z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    fieldName: z.string().optional(),
    matches: z
      .array(z.string())
      .optional()
      .openapi({ description: "ERR_AMBIGUOUS_MATCH only: the contactIds (at most 10) that hold the matchOn value (docs/api.md §18.2)." }),
    results: z
      .array(z.record(z.string(), z.unknown()))
      .optional()
      .openapi({ description: "ERR_BATCH_REJECTED only: every item's result, as a batch's answer gives them (docs/api.md §18.4)." }),
    mergedInto: z
      .string()
      .optional()
      .openapi({ description: "ERR_CONTACT_MERGED only: the contactId the contact was merged into (docs/api.md §20.3).", example: "CR-3" }),
  })
  .openapi("Error");

export type ErrorEnvelope = z.infer<typeof ErrorSchema>;

/** Builds the envelope of docs/api.md §4; the only place that does. */
export function envelope(error: ApiError): ErrorEnvelope {
  const body: ErrorEnvelope = {
    success: false,
    statusCode: error.status,
    error: reasons[error.status] ?? "Error",
    code: error.code,
    message: error.message,
  };
  if (error.fieldName !== undefined) body.fieldName = error.fieldName;
  if (error.details) Object.assign(body, error.details);
  return body;
}

export function errorResponse(c: Context, error: ApiError): Response {
  for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
  return c.json(envelope(error), error.status as 401);
}
