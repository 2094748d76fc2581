import { ApiError, envelope, errorStatus, type ErrorCode } from "../errors.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/**
 * Request and response examples of every operation and webhook (docs/api.md §16), made from
 * the schemas' own examples: an object's example is its schema's, else one built from its
 * properties', so an example never drifts from the schema it illustrates.
 */
export function completeExamples(document: Json) {
  const example = exampleMaker(document);
  const items = [...Object.values(document.paths ?? {}), ...Object.values(document.webhooks ?? {})] as Json[];
  for (const item of items) {
    for (const operation of Object.values(item) as Json[]) {
      for (const media of Object.values(operation.requestBody?.content ?? {}) as Json[]) media.example ??= example(media.schema);
      for (const [status, response] of Object.entries(operation.responses ?? {}) as [string, Json][]) {
        const media = response.content?.["application/json"];
        if (!media) continue;
        media.example ??= isError(media.schema) ? errorExample(Number(status)) : example(media.schema);
      }
    }
  }
}

const isError = (schema: Json) => schema?.$ref === "#/components/schemas/Error";

const ERROR_EXAMPLES: Record<number, [string, string?]> = {
  401: ["Invalid or missing API key."],
  402: ["The project's contact quota is exhausted."],
  403: ["This API key lacks the scope contacts:read."],
  404: ["Contact not found."],
  409: ["contactId CR-7 is already in use.", "contactId"],
  413: ["The body is larger than 1 MiB."],
  415: ["Send the body as application/json."],
  422: ["email must be a valid email address.", "email"],
  429: ["Rate limit exceeded; retry after the time in Retry-After."],
  500: ["Internal server error."],
};

/** The example of an error answer: built by the envelope's own function (src/errors.ts). */
function errorExample(status: number) {
  const [message, fieldName] = ERROR_EXAMPLES[status] ?? ["Request failed."];
  const code = status === 422 ? "ERR_FORM_VALIDATION" : ((Object.entries(errorStatus).find(([, s]) => s === status)?.[0] ?? "ERR_INTERNAL") as ErrorCode);
  return envelope(new ApiError(code, message, fieldName));
}

const FORMAT_EXAMPLES: Record<string, string> = {
  "date-time": "2026-01-15T09:30:00.000Z",
  email: "ada@example.com",
  uri: "https://hooks.example.com/crm",
  "uri-reference": "/v1/contacts/CR-1",
};

/** An example value of a schema of the document, following $refs. */
function exampleMaker(document: Json) {
  const components = document.components?.schemas ?? {};
  const example = (schema: Json, depth = 0): unknown => {
    if (!schema || depth > 12) return undefined;
    if (schema.$ref) {
      const target = components[schema.$ref.split("/").pop()];
      return target?.example ?? example(target, depth + 1);
    }
    if (schema.example !== undefined) return schema.example;
    if (schema.examples?.length) return schema.examples[0];
    if (schema.const !== undefined) return schema.const;
    if (schema.enum) return schema.enum[0];
    if (schema.default !== undefined) return schema.default;
    const variants = schema.oneOf ?? schema.anyOf;
    if (variants) return example(variants.find((v: Json) => v.type !== "null") ?? variants[0], depth + 1);
    if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s: Json) => example(s, depth + 1)));
    const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
    if (type === "object" || schema.properties) {
      const properties = Object.entries(schema.properties ?? {}) as [string, Json][];
      return Object.fromEntries(properties.map(([name, property]) => [name, example(property, depth + 1)]).filter(([, v]) => v !== undefined));
    }
    if (type === "array") return [example(schema.items, depth + 1)].filter((v) => v !== undefined);
    if (type === "string") return FORMAT_EXAMPLES[schema.format] ?? (Array.isArray(schema.type) ? null : "string");
    if (type === "integer" || type === "number") return schema.minimum ?? 0;
    if (type === "boolean") return true;
    if (type === "null") return null;
    return undefined;
  };
  return example;
}
