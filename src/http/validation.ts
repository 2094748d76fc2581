import type { z } from "@hono/zod-openapi";
import { ApiError } from "../errors.ts";

/**
 * Maps the first zod issue to ERR_FORM_VALIDATION with a dotted fieldName (decisions §8):
 * `address.city`, `customFields.cf_…`, `fields.<key>`. An unknown key names the key itself
 * (decisions §12); positions inside arrays are left out (`tags`, not `tags.3`).
 */
export function validationFailure(error: z.ZodError): ApiError {
  const issue = error.issues[0]!;
  const path = issue.path.filter((p) => typeof p !== "number").map(String);
  if (issue.code === "unrecognized_keys") {
    const key = issue.keys[0]!;
    return new ApiError("ERR_FORM_VALIDATION", `Unknown field ${key}.`, [...path, key].join("."));
  }
  const fieldName = path.join(".") || "body";
  const message = issue.code === "invalid_type" && issue.input === undefined ? `${fieldName} is required.` : `${fieldName}: ${issue.message}`;
  return new ApiError("ERR_FORM_VALIDATION", message, fieldName);
}
