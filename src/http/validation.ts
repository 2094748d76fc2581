import type { z } from "@hono/zod-openapi";
import { ApiError } from "../errors.ts";

/*
 * Validation messages (docs/api.md §4.3): a message names the field once and says what is
 * wrong with its value: "firstName must be a string.", "firstName is required.",
 * "identityType must be one of personal, business.". Zod's own texts ("Invalid input:
 * expected string, received number", "Too big: …", "Invalid option: …") are never shown.
 *
 * The convention for messages written in schemas (src/<domain>/schemas.ts, src/lib/pagination.ts,
 * src/lib/time.ts): a schema message is a PREDICATE, the rest of a sentence whose subject is
 * the field, starting with a lowercase letter and ending with a period:
 *
 *     z.string().max(255, "must be at most 255 characters.")
 *     isoTimeSchema: "must be an ISO 8601 timestamp, such as 2024-05-01T10:00:00Z or 2024-05-01."
 *     superRefine: 'or type "note" is required, but not both.'
 *
 * This file puts the field's name in front of it, once: "firstName must be at most 255
 * characters.". A schema message never contains its own field's name. The custom-field
 * checks (src/reference/custom-fields.ts) return predicates too; their callers put the
 * field in front: "customFields.cf_… (Seats) must be a number.". A message of an item
 * of an array is written about the item; it reads "each item of tags must be …". Zod's own
 * texts all start with a capital letter, so a message starting with a lowercase letter is
 * the schema's; any other is replaced by one made here from the issue's kind:
 *
 *     absent from input   "X is required." (an invalid_type or invalid_value issue)
 *     repeated in a query "X must be given once."
 *     invalid_type        "X must be a string.", "X must be an integer.", "X must be true or false."
 *     invalid_value       "X must be one of a, b." / 'X must be "note".'
 *     too_small, too_big  "X must be at most 255 characters.", "X must not be empty.",
 *                         "X must have at least 1 item.", "X must be at most 200."
 *     invalid_format      "X must be a valid email address.", "X must be a valid URL."
 *     unrecognized_keys   "Unknown field X." (fieldName X, the key's own path: docs/api.md §4.3)
 *     custom and others   "X is not valid."
 *
 * Missing or wrong type: zod 4 does not carry the input in its issues, so the value at the
 * issue's path is looked up in the input that was validated (the zod hook passes it). A
 * missing value reads "is required." whatever the schema's message says.
 */

type Issue = z.ZodError["issues"][number];
type Key = PropertyKey;

/** What was validated: the input (a body, a query) and where it came from (the validator's target). */
export interface ValidatedInput {
  input?: unknown;
  target?: string;
}

/**
 * Maps the first zod issue to ERR_FORM_VALIDATION with a dotted fieldName (docs/api.md §4):
 * `address.city`, `customFields.cf_…`, `fields.<key>`. An unknown key names the key itself
 * (docs/api.md §4.3); positions inside arrays are left out (`tags`, not `tags.3`).
 */
export function validationFailure(error: z.ZodError, validated: ValidatedInput = {}): ApiError {
  const { issue, path } = innermost(error.issues[0]!, []);
  if (issue.code === "unrecognized_keys") {
    const fieldName = nameOf([...path, issue.keys[0]!]);
    return new ApiError("ERR_FORM_VALIDATION", `Unknown field ${fieldName}.`, fieldName);
  }
  const fieldName = nameOf(path) || "body";
  // An item of an array is named by its array: "each item of tags must be a string."
  const subject = typeof path[path.length - 1] === "number" ? `each item of ${fieldName}` : fieldName;
  return new ApiError("ERR_FORM_VALIDATION", `${subject} ${predicateOf(issue, path, validated)}`, fieldName);
}

const nameOf = (path: Key[]) => path.filter((p) => typeof p !== "number").map(String).join(".");

/** A union's issue → the issue of the branch the value came closest to (one whose type matched), with its whole path. */
function innermost(issue: Issue, prefix: Key[]): { issue: Issue; path: Key[] } {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const matched = issue.errors.find((branch) => branch.some((i) => !(i.code === "invalid_type" && i.path.length === 0)));
    if (matched?.[0]) return innermost(matched[0], path);
  }
  return { issue, path };
}

/** A message written by the schema (see the convention above). */
const isPredicate = (message: string) => /^[a-z]/.test(message);
const sentence = (text: string) => (text.endsWith(".") ? text : `${text}.`);

function predicateOf(issue: Issue, path: Key[], validated: ValidatedInput): string {
  if (issue.code === "invalid_type" || issue.code === "invalid_value") {
    const { present, value } = lookUp(issue, path, validated);
    if (!present) return "is required.";
    // A query parameter given twice arrives as an array where one value is expected.
    if (validated.target === "query" && Array.isArray(value)) return "must be given once.";
  }
  if (isPredicate(issue.message)) return sentence(issue.message);
  return sentence(generated(issue));
}

/** Whether the field has a value in the input; without the input, what zod's own text says. */
function lookUp(issue: Issue, path: Key[], validated: ValidatedInput): { present: boolean; value?: unknown } {
  if (!("input" in validated)) return { present: !/received undefined$/.test(issue.message) };
  let value = validated.input;
  for (const key of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, key)) return { present: false };
    value = (value as Record<Key, unknown>)[key];
  }
  return { present: value !== undefined, value };
}

const TYPES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  bigint: "an integer",
  boolean: "true or false",
  object: "an object",
  record: "an object",
  array: "an array",
  tuple: "an array",
  date: "a date",
  null: "null",
};

const FORMATS: Record<string, string> = {
  email: "a valid email address",
  url: "a valid URL",
  uuid: "a valid UUID",
  guid: "a valid UUID",
  datetime: "an ISO 8601 date-time",
  date: "an ISO 8601 date",
  time: "an ISO 8601 time",
  duration: "an ISO 8601 duration",
  ipv4: "an IPv4 address",
  ipv6: "an IPv6 address",
  e164: "a phone number in E.164 form",
};

const plural = (n: number | bigint, one: string) => `${n} ${one}${n === 1 || n === 1n ? "" : "s"}`;
const shown = (v: unknown) => (typeof v === "string" ? v : String(v));

/** What is wrong, from the issue's kind and its parameters: never zod's text. */
function generated(issue: Issue): string {
  switch (issue.code) {
    case "invalid_type":
      return `must be ${TYPES[issue.expected] ?? `${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}`}`;
    case "invalid_value":
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0]) ?? shown(issue.values[0])}`
        : `must be one of ${issue.values.map(shown).join(", ")}`;
    case "too_small":
    case "too_big":
      return sizeOf(issue);
    case "invalid_format":
      if (issue.format === "starts_with") return `must start with "${(issue as { prefix?: string }).prefix}"`;
      if (issue.format === "ends_with") return `must end with "${(issue as { suffix?: string }).suffix}"`;
      if (issue.format === "includes") return `must contain "${(issue as { includes?: string }).includes}"`;
      if (issue.format === "regex") return "is not in the expected format";
      return `must be ${FORMATS[issue.format] ?? `a valid ${issue.format}`}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "invalid_key":
      return issue.issues[0] && isPredicate(issue.issues[0].message) ? issue.issues[0].message : "has a key that is not valid";
    case "invalid_union":
      return "options" in issue && issue.options?.length ? `must be one of ${issue.options.map(shown).join(", ")}` : "is not valid";
    default:
      return "is not valid";
  }
}

/** too_small / too_big: "must be at most 255 characters", "must not be empty", "must have at least 1 item". */
function sizeOf(issue: Extract<Issue, { code: "too_small" | "too_big" }>): string {
  const big = issue.code === "too_big";
  const n = big ? issue.maximum : issue.minimum;
  const bound = issue.exact ? "exactly" : big ? (issue.inclusive ? "at most" : "less than") : issue.inclusive ? "at least" : "more than";
  switch (issue.origin) {
    case "string":
      if (!big && !issue.exact && issue.inclusive && Number(n) === 1) return "must not be empty";
      return `must be ${bound} ${plural(n, "character")}`;
    case "array":
    case "set":
      return `must have ${bound} ${plural(n, "item")}`;
    case "file":
      return `must be ${bound} ${plural(n, "byte")}`;
    default:
      return `must be ${bound} ${n}`;
  }
}
