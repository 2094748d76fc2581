/**
 * Body generators for every write route: valid-ish field names mixed with random values
 * (see values.ts), unknown keys, non-object bodies, and raw text (duplicate keys,
 * truncated JSON, BOMs, non-JSON). A body is returned as the bytes to send.
 */
import fc from "fast-check";
import { anyString, isoish, junk, jsonShape, maybe, rawJunkText, rawObjectText, safeEncode, shortString, sizedString, surrogateText, weird } from "./values.ts";

type Arb<T> = fc.Arbitrary<T>;

/** Ids that exist on the fuzzed server, so generated requests reach past the 404s. */
export interface FuzzIds {
  contactIds: string[];
  contactTypeIds: string[];
  interactionTypeIds: string[];
  customFieldIds: string[];
  customFieldTitles: string[];
  tagNames: string[];
  tagIds: string[];
  webhookIds: string[];
  eventIds: string[];
  formId: string;
  formFields: string[];
  /** An http URL of a loopback sink that answers 204. */
  sinkUrl: string;
}

const pick = (xs: string[]): Arb<string> => (xs.length ? fc.constantFrom(...xs) : fc.constant("missing"));

/**
 * Field name → value generators. Half the bodies are clean (1–4 fields with plausible
 * values, so they get past validation into the store), half are dirty (each field with
 * probability ~1/2, junk values, stray keys).
 */
export function objectOf(fields: Record<string, Arb<unknown>>, strayKeys: Arb<string> = shortString): Arb<Record<string, unknown>> {
  const clean = fc
    .shuffledSubarray(Object.keys(fields), { minLength: 1, maxLength: Math.min(4, Object.keys(fields).length) })
    .chain((keys) => fc.record(Object.fromEntries(keys.map((k) => [k, fields[k]!]))) as Arb<Record<string, unknown>>);
  const dirty = fc.record(Object.fromEntries(Object.entries(fields).map(([k, a]) => [k, maybe(a)])), { requiredKeys: [] }) as Arb<Record<string, unknown>>;
  const known = fc.oneof(clean, dirty);
  const stray = fc.oneof(
    { arbitrary: fc.constant([] as [string, unknown][]), weight: 6 },
    { arbitrary: fc.array(fc.tuple(fc.oneof(strayKeys, fc.constantFrom("__proto__", "constructor", "id", "FIRSTNAME", "firstName ", "address.city", "")), junk), { maxLength: 3 }), weight: 1 },
  );
  return fc.tuple(known, stray).map(([obj, extra]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of [...Object.entries(obj), ...extra]) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    return out;
  });
}

const email = fc.oneof({ arbitrary: fc.emailAddress(), weight: 3 }, fc.constantFrom("A@B.CO ", "a@b", "@", "a@@b.c", "ü@ü.de", "a+b@x.io", " x@y.z", "a@b.c\u0000"), shortString.map((s) => `${s}@example.com`));
const phone = fc.oneof(
  fc.constantFrom("+1 415 555 0100", "+44 20 7946 0958", "(555) 555-5555 ext 1234", "+", "++1", "0000", "١٢٣٤٥٦٧", "+999 999", "tel:+15555550100"),
  fc.stringMatching(/^\+?[0-9 ()-]{0,40}$/),
);
const url = fc.oneof(
  fc.constantFrom("https://example.com", "http://x", "ftp://x.y", "javascript:alert(1)", "https://", "http://[::1", "https://exa mple.com", "//x.y"),
  fc.tuple(fc.constantFrom("https://example.com/", "http://ex.io/?q="), anyString).map(([a, b]) => a + b),
);
/** Mostly printable unicode text; sometimes anything (control characters, lone surrogates, huge). */
const text = fc.oneof({ arbitrary: fc.string({ unit: "grapheme", maxLength: 40 }), weight: 4 }, { arbitrary: anyString, weight: 1 }, { arbitrary: surrogateText, weight: 1 });

export function contactArbs(ids: FuzzIds, patch: boolean): Arb<Record<string, unknown>> {
  const address = objectOf(Object.fromEntries(["line1", "line2", "city", "state", "zip", "country"].map((k) => [k, anyString])));
  const tag = fc.oneof(pick(ids.tagNames), pick(ids.tagIds), shortString, sizedString(200));
  const customValue = fc.oneof(shortString, fc.integer(), fc.double(), fc.boolean(), isoish, fc.constantFrom("S", "M", "L", "red", "blue"), fc.array(fc.constantFrom("red", "blue", "x"), { maxLength: 4 }), sizedString(12_000));
  const customKey = fc.oneof(pick(ids.customFieldIds), pick(ids.customFieldTitles), fc.constantFrom("cf_nope", ""), shortString);
  const fields: Record<string, Arb<unknown>> = {
    firstName: text, lastName: text, email, phone, businessName: text, website: url,
    address, contactTypeId: fc.oneof(pick(ids.contactTypeIds), shortString),
    tags: fc.oneof({ arbitrary: fc.array(tag, { maxLength: 8 }), weight: 5 }, { arbitrary: fc.array(tag, { minLength: 99, maxLength: 200 }), weight: 1 }),
    customFields: fc.dictionary(customKey, customValue, { maxKeys: 6 }),
    notes: text, subscribed: fc.boolean(), smsSubscribed: fc.boolean(), source: shortString,
    identityType: fc.constantFrom("personal", "business", "PERSONAL", ""),
  };
  if (patch) {
    fields.contactId = fc.oneof(
      pick(ids.contactIds),
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map((n) => `CR-${n}`),
      fc.constantFrom("CR-0", "CR-00001", "CR-9007199254740993", "CR-9223372036854775807", "CR-9223372036854775808", "CR--1", "CR-1e5", "cr-5", "CR-", "CR-١"),
    );
  }
  return objectOf(fields);
}

export function interactionArbs(ids: FuzzIds): Arb<Record<string, unknown>> {
  const fieldsObj = fc.oneof(
    fc.dictionary(fc.oneof(shortString, fc.constantFrom("k", "", "x".repeat(65))), fc.oneof(shortString, sizedString(3000)), { maxKeys: 8 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.constant("v"), { minKeys: 49, maxKeys: 55 }),
    fc.dictionary(shortString, junk, { maxKeys: 4 }),
  );
  const kind = fc.oneof(
    { arbitrary: pick(ids.interactionTypeIds).map((id): Record<string, unknown> => ({ interactionTypeId: id })), weight: 4 },
    { arbitrary: fc.constant<Record<string, unknown>>({ type: "note" }), weight: 4 },
    { arbitrary: objectOf({ interactionTypeId: fc.oneof(pick(ids.interactionTypeIds), fc.constantFrom("note", "it_nope")), type: fc.constantFrom("note", "Note", "call") }), weight: 2 },
  );
  const date = fc.oneof({ arbitrary: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()), weight: 3 }, { arbitrary: isoish, weight: 1 });
  const rest = objectOf({ note: text, date, fields: fieldsObj, uniqueIdentifier: fc.oneof(fc.constantFrom("u1", "u2", "u3"), shortString, sizedString(300)) });
  return fc.tuple(kind, rest).map(([k, r]) => ({ ...k, ...r }));
}

const EVENTS = ["contact.created", "contact.updated", "interaction_log.created", "web_form.submitted"];

export function webhookArbs(ids: FuzzIds): Arb<Record<string, unknown>> {
  const sink = new URL(ids.sinkUrl);
  const hookUrl = fc.oneof(
    fc.constantFrom(ids.sinkUrl, `http://localhost:${sink.port}/h`, `http://[::1]:${sink.port}/`, `http://2130706433:${sink.port}/`, `http://0x7f.1:${sink.port}/`, "https://127.0.0.1:1/x"),
    fc.tuple(fc.constant(ids.sinkUrl + "?q="), anyString).map(([a, b]) => a + safeEncode(b)),
    fc.constantFrom("ftp://127.0.0.1/", "not a url", "http://999.1.1.1/", "http://[::ffff:7f00:1]:1/", "file:///etc/passwd", "https://", "http://a b/"),
    shortString.map((s) => `mailto:${s}`),
  );
  const events = fc.oneof(
    fc.constant(["*"]),
    fc.subarray(EVENTS, { minLength: 1 }),
    fc.array(fc.oneof(fc.constantFrom(...EVENTS, "*", "ping", "contact.*", ""), shortString), { maxLength: 5 }),
    fc.array(fc.constantFrom(...EVENTS), { minLength: 150, maxLength: 200 }),
  );
  return objectOf({ url: hookUrl, events, description: anyString, status: fc.constantFrom("active", "disabled", "paused", "ACTIVE") });
}

export function redeliverArbs(ids: FuzzIds): Arb<Record<string, unknown>> {
  const eventId = fc.oneof(pick(ids.eventIds), fc.constantFrom("evt_nope", ""), shortString);
  return objectOf({ eventIds: fc.oneof(fc.array(eventId, { maxLength: 6 }), fc.array(eventId, { minLength: 500, maxLength: 1200 })), since: isoish, until: isoish });
}

export function formArbs(ids: FuzzIds): Arb<Record<string, unknown>> {
  const value = fc.oneof(shortString, email, phone, url, fc.boolean(), fc.integer(), isoish, fc.array(shortString, { maxLength: 3 }), sizedString());
  const byName: Record<string, Arb<unknown>> = { email, phone, website: url, subscribed: fc.boolean(), _hp: fc.constantFrom("", "", "bot") };
  return objectOf(Object.fromEntries([...ids.formFields, "_hp"].map((f) => [f, fc.oneof({ arbitrary: byName[f] ?? anyString, weight: 3 }, value)])));
}

/** A urlencoded form body: pairs (keys repeated sometimes), encoded properly or as raw junk. */
export function urlencodedArb(ids: FuzzIds): Arb<string> {
  const key = fc.oneof({ arbitrary: pick([...ids.formFields, "_hp"]), weight: 4 }, { arbitrary: shortString, weight: 1 });
  const value = fc.oneof(anyString, email, phone, fc.constantFrom("on", "true", "1", "", "S", "red"));
  const pair = fc.tuple(key, value, fc.integer({ min: 0, max: 9 })).map(([k, v, mode]) =>
    mode === 0 ? `${k}=${v}` : mode === 1 ? `${safeEncode(k)}` : `${safeEncode(k)}=${safeEncode(v)}`,
  );
  const junkPart = fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "&&", "=", "==", "a=b=c", "%ED%A0%80", "+++", "%2");
  return fc.array(fc.oneof({ arbitrary: pair, weight: 5 }, { arbitrary: junkPart, weight: 1 }), { maxLength: 14 }).map((ps) => ps.join("&"));
}

/** A whole JSON body: the object (mostly), another JSON shape, or raw text around it. */
export function jsonBody(obj: Arb<Record<string, unknown>>): Arb<string> {
  const text = obj.map((o) => JSON.stringify(o));
  const dupes = obj.chain((o) => {
    const entries = Object.entries(o);
    if (!entries.length) return fc.constant([] as [string, unknown][]);
    return fc.tuple(fc.shuffledSubarray(entries), fc.constantFrom(...entries), junk).map(([sub, [k], v]) => [...sub, [k, v], ...sub] as [string, unknown][]);
  });
  return fc.oneof(
    { arbitrary: text, weight: 12 },
    { arbitrary: rawObjectText(dupes), weight: 2 },
    { arbitrary: jsonShape.map((v) => JSON.stringify(v) ?? "null"), weight: 1 },
    { arbitrary: rawJunkText(text), weight: 2 },
    { arbitrary: weird, weight: 1 },
  );
}
