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
  return new ApiError("ERR_FORM_VALIDATION", messageOf(issue, fieldName), fieldName);
}

const article = (type: string) => (/^[aeiou]/.test(type) ? "an" : "a");

/** What is wrong with the value, in words (decisions §15): never zod's raw text for types and enums. */
function messageOf(issue: z.ZodError["issues"][number], fieldName: string): string {
  if (issue.code === "invalid_type") {
    // zod 4 reports the input only on request, but its message names what it received.
    const missing = /received undefined$/.test(issue.message);
    return missing ? `${fieldName} is required.` : `${fieldName} must be ${article(issue.expected)} ${issue.expected}.`;
  }
  if (issue.code === "invalid_value") return `${fieldName} must be one of ${issue.values.map(String).join(", ")}.`;
  return `${fieldName}: ${issue.message}`;
}
