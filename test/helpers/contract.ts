/**
 * The contract check (docs/testing.md): every answer the HTTP suite receives through
 * `api()` (test/helpers/server.ts `makeApi`, which the in-process harness uses too) is
 * checked against the document the server under test serves (GET /v1/openapi.json), with a
 * maintained validator: ajv's JSON Schema 2020-12 (the dialect of OpenAPI 3.1) and
 * ajv-formats. A violation throws, so the test that caused it fails:
 *
 *   - the status must be one the operation lists;
 *   - a body's media type must be one that status lists; a JSON body must validate against
 *     its schema;
 *   - a 2xx answer to a request the document refuses (an unknown or invalid query or header
 *     parameter, a body where none is defined, a body of an unlisted type or that fails the
 *     requestBody's schema) is a violation too: the server accepted what the document refuses.
 *
 * What the document cannot describe, and is skipped on purpose:
 *   - requests that match no operation (404 and 405 of the router, `/v1/openapi.json` itself,
 *     paths outside `/v1`): there is no operation to hold them to;
 *   - a bare 431 (a request head over 16 KiB): the HTTP parser answers it before the
 *     application runs (docs/api.md §3.5);
 *   - bodies of `text/html` answers (the web form's pages): their schema is only `string`;
 *   - response headers: the document lists them without saying when each is present;
 *   - a request body that is not JSON or urlencoded (sent to provoke a 415): nothing to
 *     validate, only its media type is checked.
 * Set CRM_TEST_CONTRACT=0 to switch the check off while debugging.
 */
import Ajv2020, { type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// deno-lint-ignore no-explicit-any
type Json = any;

export interface Exchange {
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody?: string | Uint8Array;
  status: number;
  responseHeaders: Headers;
  responseText: string;
}

export class ContractViolation extends Error {
  override name = "ContractViolation";
}

const DOCUMENT_ID = "https://crm.invalid/openapi.json";
const METHODS = ["get", "put", "post", "patch", "delete"];

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  pointer: string;
  definition: Json;
}

/** A checker for one served document: operations found by path, validators compiled once each. */
class ContractChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(
    private readonly basePath: string,
    private readonly document: Json,
  ) {
    addFormats(this.ajv);
    this.ajv.addSchema(document, DOCUMENT_ID);
    for (const [template, item] of Object.entries(document.paths ?? {}) as [string, Json][]) {
      for (const method of METHODS) {
        if (!item[method]) continue;
        const segments = template.split("/");
        this.operations.push({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "([^/]+)")}/?$`),
          literalSegments: segments.filter((s) => !s.startsWith("{")).length,
          pointer: `/paths/${escapePointer(template)}/${method}`,
          definition: item[method],
        });
      }
    }
  }

  check(exchange: Exchange): void {
    const url = new URL(exchange.url);
    if (!url.pathname.startsWith(`${this.basePath}/`) || exchange.status === 431) return;
    const path = url.pathname.slice(this.basePath.length);
    const method = exchange.method.toUpperCase();
    const operation = this.operations
      .filter((o) => o.method === method && o.pattern.test(path))
      .sort((a, b) => b.literalSegments - a.literalSegments)[0];
    if (!operation) return;
    const name = `${method} ${operation.template} (${operation.definition.operationId})`;
    const fail = (what: string, errors?: ErrorObject[] | null) => {
      const details = errors ? `\n${this.ajv.errorsText(errors, { separator: "\n" })}` : "";
      throw new ContractViolation(`Contract violation, ${name} answered ${exchange.status}: ${what}${details}\n(request ${method} ${url.pathname}${url.search})`);
    };

    const status = String(exchange.status);
    const response = operation.definition.responses?.[status] ?? operation.definition.responses?.default;
    if (!response) return fail(`status ${status} is not among the operation's responses (${Object.keys(operation.definition.responses ?? {}).join(", ")})`);
    this.checkResponseBody(operation, status, response, exchange, fail);
    if (exchange.status >= 200 && exchange.status < 300) {
      const refusal = this.refusalOf(operation, path, url, exchange);
      if (refusal) fail(`a success to a request the document refuses: ${refusal.what}`, refusal.errors);
    }
  }

  private checkResponseBody(operation: Operation, status: string, response: Json, exchange: Exchange, fail: (what: string, errors?: ErrorObject[] | null) => never) {
    if (exchange.responseText.length === 0) return;
    const type = mediaType(exchange.responseHeaders.get("content-type"));
    const listed = Object.keys(response.content ?? {});
    if (!listed.includes(type)) return fail(`its ${type || "untyped"} body is not among the media types listed for ${status} (${listed.join(", ") || "none"})`);
    if (!isJson(type)) return;
    let body: unknown;
    try {
      body = JSON.parse(exchange.responseText);
    } catch {
      return fail(`its ${type} body is not JSON: ${exchange.responseText.slice(0, 200)}`);
    }
    const validate = this.validator(`${operation.pointer}/responses/${status}/content/${escapePointer(type)}/schema`);
    if (!validate(body)) fail(`its body does not match the schema of ${status} ${type}: ${exchange.responseText.slice(0, 300)}`, validate.errors);
  }

  /** Why the document refuses this request, if it does. */
  private refusalOf(operation: Operation, path: string, url: URL, exchange: Exchange): { what: string; errors?: ErrorObject[] | null } | null {
    const parameters = ((operation.definition.parameters ?? []) as Json[]).map((p, i) =>
      p.$ref ? { ...this.resolve(p.$ref), pointer: p.$ref.slice(1) + "/schema" } : { ...p, pointer: `${operation.pointer}/parameters/${i}/schema` },
    );
    const headers = lowerCased(exchange.requestHeaders);
    const pathValues = operation.pattern.exec(path)!.slice(1).map(decodeURIComponent);
    const pathNames = [...operation.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    for (const name of new Set(url.searchParams.keys())) {
      if (!parameters.some((p) => p.in === "query" && p.name === name)) return { what: `unknown query parameter ${name}` };
    }
    for (const parameter of parameters) {
      let value: unknown;
      if (parameter.in === "query") {
        const all = url.searchParams.getAll(parameter.name);
        if (all.length === 0) value = undefined;
        else {
          const read = (text: string) => queryValue(text, parameter.schema);
          value = parameter.schema?.type === "array" || all.length > 1 ? all.map(read) : read(all[0]!);
        }
      } else if (parameter.in === "header") value = headers[parameter.name.toLowerCase()];
      else if (parameter.in === "path") value = pathValues[pathNames.indexOf(parameter.name)];
      if (value === undefined) {
        if (parameter.required) return { what: `${parameter.in} parameter ${parameter.name} is required` };
        continue;
      }
      const validate = this.validator(parameter.pointer);
      if (!validate(value)) return { what: `${parameter.in} parameter ${parameter.name}=${JSON.stringify(value)}`, errors: validate.errors };
    }
    return this.bodyRefusal(operation, exchange, headers);
  }

  private bodyRefusal(operation: Operation, exchange: Exchange, headers: Record<string, string>): { what: string; errors?: ErrorObject[] | null } | null {
    const text = typeof exchange.requestBody === "string" ? exchange.requestBody : exchange.requestBody ? new TextDecoder().decode(exchange.requestBody) : "";
    const requestBody = operation.definition.requestBody;
    if (!requestBody) return text.length > 0 ? { what: "a body, where the operation defines none" } : null;
    if (text.length === 0) return requestBody.required ? { what: "no body, where one is required" } : null;
    const type = mediaType(headers["content-type"] ?? null);
    if (!requestBody.content?.[type]) return { what: `a ${type || "untyped"} body; the operation takes ${Object.keys(requestBody.content ?? {}).join(", ")}` };
    let body: unknown;
    if (isJson(type)) {
      try {
        body = JSON.parse(text.replace(/^\uFEFF/, ""));
      } catch {
        return { what: "a body that is not JSON" };
      }
    } else if (type === "application/x-www-form-urlencoded") {
      const form = new URLSearchParams(text);
      body = Object.fromEntries([...new Set(form.keys())].map((k) => [k, form.getAll(k).length > 1 ? form.getAll(k) : form.get(k)]));
    } else return null;
    const validate = this.validator(`${operation.pointer}/requestBody/content/${escapePointer(type)}/schema`);
    return validate(body) ? null : { what: `a ${type} body that fails its schema: ${text.slice(0, 300)}`, errors: validate.errors };
  }

  private resolve(ref: string): Json {
    return pointerGet(this.document, ref.slice(1));
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

const escapePointer = (text: string) => text.replaceAll("~", "~0").replaceAll("/", "~1");
const mediaType = (header: string | null) => (header ?? "").split(";")[0]!.trim().toLowerCase();
const isJson = (type: string) => type === "application/json" || type.endsWith("+json");
const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * A query value as its schema reads it: for `type: integer` (or number), plain digits become
 * a number, anything else stays text (and fails the schema); for any other type, the text.
 */
function queryValue(text: string, schema: Json): unknown {
  const numeric = schema?.type === "integer" || schema?.type === "number";
  return numeric && /^-?(0|[1-9]\d*)$/.test(text) ? Number(text) : text;
}

function pointerGet(root: Json, pointer: string): Json {
  return pointer
    .split("/")
    .slice(1)
    .reduce((node, part) => node?.[part.replaceAll("~1", "/").replaceAll("~0", "~")], root);
}

const checkers = new Map<string, Promise<ContractChecker | null>>();

/** The checker of the server at `baseUrl` (ending in /v1), built from its served document once. */
function checkerFor(baseUrl: string): Promise<ContractChecker | null> {
  let checker = checkers.get(baseUrl);
  if (!checker) {
    checker = (async () => {
      const res = await fetch(`${baseUrl}/openapi.json`);
      if (res.status !== 200) return null;
      return new ContractChecker(new URL(baseUrl).pathname, await res.json());
    })().catch(() => null);
    checkers.set(baseUrl, checker);
  }
  return checker;
}

/** Checks one exchange of `api()` against the served document; throws a ContractViolation. */
export async function checkContract(baseUrl: string, exchange: Exchange): Promise<void> {
  if (process.env.CRM_TEST_CONTRACT === "0") return;
  if (!exchange.url.startsWith(`${baseUrl}/`) || exchange.url.startsWith(`${baseUrl}/openapi.json`)) return;
  const checker = await checkerFor(baseUrl);
  if (!checker) {
    // A server that is gone (a test that stopped it) cannot be asked; its next start builds anew.
    checkers.delete(baseUrl);
    return;
  }
  checker.check(exchange);
}
