/**
 * Whole requests for every route family: method, path (with fuzzed segments), query
 * string, headers (content types, Idempotency-Key), body and which key to send.
 */
import fc from "fast-check";
import { contactArbs, formArbs, interactionArbs, jsonBody, redeliverArbs, urlencodedArb, webhookArbs, type FuzzIds } from "./arbitraries.ts";
import { invalidUtf8, isoish, safeEncode, shortString, sizedString } from "./values.ts";

type Arb<T> = fc.Arbitrary<T>;

/** Which key a request carries: A (contacts, forms) or B (webhooks) project keys, or none/bad. */
export type Auth = "a" | "a-read" | "b" | "none" | "bad";

export interface FuzzRequest {
  family: string;
  /** The route template, for shape checks ("PATCH /contacts/{contactId}"). */
  route: string;
  method: string;
  /** Path and query under the origin, e.g. /v1/contacts?limit=3. */
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  auth: Auth;
  /** Loopback source address (form submissions are limited per address). */
  sourceIp?: string;
}

const clip = (s: string, n = 400) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

/** A readable one-request summary (fast-check prints it for counterexamples). */
export function describe(r: FuzzRequest): string {
  const body = r.body === undefined ? "" : r.body instanceof Uint8Array ? ` bytes=[${[...r.body.slice(0, 80)].join(",")}${r.body.length > 80 ? `…(${r.body.length})` : ""}]` : ` body=${clip(JSON.stringify(r.body))}`;
  return `${r.method} ${clip(r.path, 300)} auth=${r.auth}${r.sourceIp ? ` ip=${r.sourceIp}` : ""} headers=${clip(JSON.stringify(r.headers), 300)}${body}`;
}

/**
 * Request heads over 16 KiB are refused by Bun itself with a bare 431 before the app runs
 * (see regressions.test.ts), so paths are kept to 12,000 characters.
 */
export const MAX_PATH = 12_000;

const withDescription = (r: FuzzRequest): FuzzRequest => {
  const url = new URL(`http://h${r.path}`);
  r.path = (url.pathname + url.search).slice(0, MAX_PATH);
  return Object.defineProperty(r, fc.toStringMethod, { value: () => describe(r), enumerable: false });
};

/** Cursors seen in answers (filled in by the harness), replayed and mutated by the query fuzzer. */
export const seenCursors: string[] = [];

const pick = (xs: string[]): Arb<string> => (xs.length ? fc.constantFrom(...xs) : fc.constant("missing"));
const enc = (a: Arb<string>) => a.map(safeEncode);
const junkSegment = fc.oneof(
  fc.constantFrom("CR-0", "CR-999999999999999999999999", "cr-1", "CR-01", "CR-", "CR-1.5", "CR-1%2F..", "%00", "%zz", "%", "CR-1%00", "%2e%2e", "CR-1;x", "CR-%EF%BC%91", "%ED%A0%80", "wh_", "frm_", "null"),
  enc(shortString),
  enc(sizedString(9000)),
);
const segment = (ids: string[]) => fc.oneof({ arbitrary: pick(ids), weight: 5 }, { arbitrary: junkSegment, weight: 2 });

const jsonTypes = fc.oneof(
  { arbitrary: fc.constant("application/json"), weight: 20 },
  { arbitrary: fc.constantFrom("application/json; charset=utf-8", "Application/JSON", "application/json;charset=latin1", "application/json ; x=y", "application/json, text/plain"), weight: 2 },
  { arbitrary: fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/merge-patch+json", "", "*/*", "none"), weight: 1 },
);
const idempotencyKey = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 12 },
  { arbitrary: fc.constantFrom("k1", "k2", "k3", "", " ", "k".repeat(256)), weight: 2 },
  { arbitrary: fc.string({ unit: "binary-ascii", maxLength: 40 }).map((s) => s.replace(/[\x00-\x1f\x7f]/g, "")), weight: 1 },
);
const authFor = (main: Auth): Arb<Auth> =>
  fc.oneof({ arbitrary: fc.constant(main), weight: 60 }, { arbitrary: fc.constantFrom<Auth>("none", "bad", "a-read", main === "a" ? "b" : "a"), weight: 2 });

/** A request with a JSON-ish body: content type, Idempotency-Key on POST, sometimes invalid UTF-8 bytes. */
function jsonRequest(family: string, route: string, method: string, path: Arb<string>, body: Arb<string>, main: Auth): Arb<FuzzRequest> {
  const bytes = fc.oneof({ arbitrary: body as Arb<string | Uint8Array>, weight: 30 }, { arbitrary: invalidUtf8, weight: 1 });
  return fc.record({ path, body: bytes, ct: jsonTypes, key: idempotencyKey, auth: authFor(main) }).map(({ path, body, ct, key, auth }) => {
    const headers: Record<string, string> = {};
    if (ct !== "none") headers["Content-Type"] = ct;
    if (key !== undefined && method === "POST") headers["Idempotency-Key"] = key;
    return withDescription({ family, route, method, path, headers, body, auth });
  });
}

export function writeFamilies(ids: FuzzIds): Record<string, Arb<FuzzRequest>> {
  const contact = segment(ids.contactIds);
  const hook = segment(ids.webhookIds);
  const webhookBody = jsonBody(webhookArbs(ids));
  return {
    "contacts.create": jsonRequest("contacts.create", "POST /contacts", "POST", fc.constant("/v1/contacts"), jsonBody(contactArbs(ids, false)), "a"),
    "contacts.patch": jsonRequest("contacts.patch", "PATCH /contacts/{contactId}", "PATCH", contact.map((c) => `/v1/contacts/${c}`), jsonBody(contactArbs(ids, true)), "a"),
    "interactions.create": jsonRequest("interactions.create", "POST /contacts/{contactId}/interactions", "POST", contact.map((c) => `/v1/contacts/${c}/interactions`), jsonBody(interactionArbs(ids)), "a"),
    "webhooks.write": fc.oneof(
      jsonRequest("webhooks.write", "POST /webhooks", "POST", fc.constant("/v1/webhooks"), webhookBody, "b"),
      jsonRequest("webhooks.write", "PATCH /webhooks/{id}", "PATCH", hook.map((h) => `/v1/webhooks/${h}`), webhookBody, "b"),
      jsonRequest("webhooks.write", "POST /webhooks/{id}/redeliver", "POST", hook.map((h) => `/v1/webhooks/${h}/redeliver`), jsonBody(redeliverArbs(ids)), "b"),
      jsonRequest("webhooks.write", "POST /webhooks/{id}/test", "POST", hook.map((h) => `/v1/webhooks/${h}/test`), fc.constantFrom("", "{}", "x"), "b"),
      jsonRequest("webhooks.write", "POST /webhooks/{id}/rotate-secret", "POST", hook.map((h) => `/v1/webhooks/${h}/rotate-secret`), fc.constantFrom("", "{}"), "b"),
      jsonRequest("webhooks.write", "DELETE /webhooks/{id}", "DELETE", junkSegment.map((h) => `/v1/webhooks/${h}`), fc.constantFrom("", "{}"), "b"),
    ),
    forms: fc
      .record({
        form: fc.oneof({ arbitrary: fc.constant(ids.formId), weight: 8 }, { arbitrary: junkSegment, weight: 1 }),
        urlencoded: fc.boolean(),
        json: jsonBody(formArbs(ids)),
        form_body: urlencodedArb(ids),
        ct: fc.oneof({ arbitrary: fc.constant(""), weight: 10 }, { arbitrary: fc.constantFrom("text/plain", "none", "application/x-www-form-urlencoded; charset=utf-8", "APPLICATION/JSON"), weight: 1 }),
        ip: fc.oneof({ arbitrary: fc.tuple(fc.integer({ min: 1, max: 254 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 1, max: 254 })).map(([a, b, c]) => `127.${a}.${b}.${c}`), weight: 19 }, { arbitrary: fc.constant("127.0.0.1"), weight: 1 }),
      })
      .map(({ form, urlencoded, json, form_body, ct, ip }) => {
        const type = ct || (urlencoded ? "application/x-www-form-urlencoded" : "application/json");
        const headers: Record<string, string> = type === "none" ? {} : { "Content-Type": type };
        const body = urlencoded ? form_body : json;
        return withDescription({ family: "forms", route: "POST /forms/{formId}/submissions", method: "POST", path: `/v1/forms/${form}/submissions`, headers, body, auth: "none", sourceIp: ip });
      }),
  };
}

/** Query strings: known parameters (repeated sometimes) with plausible or garbage values, percent-encoding junk. */
function queryString(params: Record<string, Arb<string>>): Arb<string> {
  const names = Object.keys(params);
  const cursor = fc.tuple(fc.nat(), fc.integer({ min: 0, max: 5 }), shortString).map(([i, mode, s]) => {
    const c = seenCursors.length ? seenCursors[i % seenCursors.length]! : "eyJ4IjoxfQ";
    return mode === 0 ? c.slice(0, -1) : mode === 1 ? c + s : mode === 2 ? c.replace(/[A-Za-z]/, "Z") : c;
  });
  const limit = fc.oneof(fc.integer({ min: -5, max: 250 }).map(String), fc.constantFrom("0", "201", "1.5", "1e2", "0x10", " 5", "", "NaN", "99999999999999999999999", "+5", "05", "５"));
  const all: Record<string, Arb<string>> = { ...params, limit, cursor };
  const value = (name: string) => fc.oneof({ arbitrary: all[name] ?? shortString, weight: 40 }, { arbitrary: shortString, weight: 10 }, { arbitrary: sizedString(20_000), weight: 1 });
  const pair = fc.constantFrom(...names, "limit", "cursor", "bogus").chain((name) =>
    fc.tuple(value(name), fc.integer({ min: 0, max: 9 })).map(([v, mode]) =>
      mode === 0 ? `${name}=${v}` : mode === 1 ? name : `${name}=${safeEncode(v)}`,
    ),
  );
  const junk = fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "&&", "=", "==x", "limit=1&limit=2", "tag=a&tag=b&tag=c", "%ED%A0%80", "+", "cursor=");
  return fc.array(fc.oneof({ arbitrary: pair, weight: 5 }, { arbitrary: junk, weight: 1 }), { maxLength: 8 }).map((ps) => (ps.length ? `?${ps.join("&")}` : ""));
}

export function queryFamily(ids: FuzzIds): Arb<FuzzRequest> {
  const contact = segment(ids.contactIds);
  const hook = segment(ids.webhookIds);
  const idLike = (xs: string[]) => fc.oneof(pick(xs), shortString);
  const lists: [string, Arb<string>, Auth, Record<string, Arb<string>>][] = [
    ["GET /contacts", fc.constant("/v1/contacts"), "a", {
      email: fc.oneof(fc.emailAddress(), shortString), phone: fc.oneof(fc.stringMatching(/^\+?[0-9 ()-]{0,20}$/), shortString),
      contactTypeId: idLike(ids.contactTypeIds), contactTypeCategory: fc.constantFrom("Lead", "Customer", "Personnel", "Other", "lead", ""),
      tag: idLike([...ids.tagNames, ...ids.tagIds]), updatedSince: isoish, search: fc.oneof(shortString, fc.constantFrom("CR-1", "a", "%", "_", "\"", "*", "a*", "NEAR", "OR", "-x")),
    }],
    ["GET /contacts/{contactId}/interactions", contact.map((c) => `/v1/contacts/${c}/interactions`), "a", { interactionTypeId: idLike(ids.interactionTypeIds), since: isoish, until: isoish }],
    ["GET /contacts/{contactId}", contact.map((c) => `/v1/contacts/${c}`), "a", {}],
    ["GET /webhooks", fc.constant("/v1/webhooks"), "b", {}],
    ["GET /webhooks/{id}", hook.map((h) => `/v1/webhooks/${h}`), "b", {}],
    ["GET /webhooks/{id}/attempts", hook.map((h) => `/v1/webhooks/${h}/attempts`), "b", {}],
    ["GET /events", fc.constant("/v1/events"), "b", { since: isoish }],
    ...["contact-types", "interaction-types", "tags", "custom-fields", "ping"].map((p): [string, Arb<string>, Auth, Record<string, Arb<string>>] => [`GET /${p}`, fc.constant(`/v1/${p}`), "a", {}]),
  ];
  return fc.oneof(
    ...lists.map(([route, path, main, params]) =>
      fc.record({ path, q: queryString(params), auth: authFor(main) }).map(({ path, q, auth }) =>
        withDescription({ family: "queries", route, method: "GET", path: path + q, headers: {}, auth }),
      ),
    ),
  );
}

/** Wrong methods and unknown paths: 404/405 envelopes (not `/`, which leads to the console: docs/admin.md §1). */
export function strayFamily(ids: FuzzIds): Arb<FuzzRequest> {
  const path = fc.oneof(
    fc.constantFrom("/v1/contacts", `/v1/contacts/${ids.contactIds[0]}`, "/v1/webhooks", "/v1/events", "/v1/tags", "/v1/nope", "/v2/contacts", "/v1", "/v1/", "/v1/contacts/"),
    enc(shortString).map((s) => `/v1/${s}`),
  );
  return fc.record({ method: fc.constantFrom("PUT", "DELETE", "OPTIONS", "PATCH", "POST", "GET", "PROPFIND"), path, auth: authFor("a") }).map(({ method, path, auth }) =>
    withDescription({ family: "stray", route: `${method} ?`, method, path, headers: { "Content-Type": "application/json" }, body: method === "GET" || method === "OPTIONS" ? undefined : "{}", auth }),
  );
}

export function allFamilies(ids: FuzzIds): Record<string, Arb<FuzzRequest>> {
  return { ...writeFamilies(ids), queries: queryFamily(ids), stray: strayFamily(ids) };
}
