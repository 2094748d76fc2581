/**
 * Value-level generators for the fuzzers: hostile strings (unicode, lone surrogates, RTL,
 * huge), wrong-typed scalars, deep nesting, random JSON shapes and raw body text that is
 * not (quite) JSON.
 */
import fc from "fast-check";

type Arb<T> = fc.Arbitrary<T>;

/** Characters that tend to break parsers, normalisers, SQL and HTML escaping. */
export const WEIRD = [
  "\u0000", "\ud800", "\udfff", "\ud83d", "\ude00", "\u202e", "\u200f", "\u061c", "\u200b", "\ufeff", "\uffff", "\ufffd",
  "😀", "👩‍👩‍👧", "e\u0301", "𝕏", "\u2028", "\u0085", "\r\n", "\t", "\\", '"', "'", "%", "%00", "&", "=", "+", "#", "?", "/",
  "..", "<script>", "${x}", "{{x}}", "'; DROP TABLE contacts;--", "שלום", "مرحبا", "Ω≈ç√", "İ", "ß", "ǅ", "١٢٣", "０",
  "null", "undefined", "NaN", "[object Object]", "__proto__", "CR-1", "*", " ", "",
];

export const weird: Arb<string> = fc.constantFrom(...WEIRD);

/** Lone surrogates between separators: distinct in JS, all U+FFFD once stored as UTF-8. */
export const surrogateText: Arb<string> = fc
  .array(fc.constantFrom("\ud800", "\udbff", "\udc00", "\udfff", "a", " ", "-"), { minLength: 1, maxLength: 6 })
  .map((a) => a.join(""));

/** Short strings of every flavour, from plain ASCII to lone surrogates and bidi controls. */
export const shortString: Arb<string> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.array(weird, { maxLength: 6 }).map((a) => a.join("")),
  fc.tuple(fc.string({ maxLength: 8 }), weird, fc.string({ maxLength: 8 })).map((a) => a.join("")),
  surrogateText,
);

/** A string of a chosen length: boundary sizes (255/256, 64 KiB, 1 MiB ± a little) or up to ~1.2 MiB. */
export const sizedString = (max = 1_250_000): Arb<string> =>
  fc
    .tuple(
      fc.oneof(fc.constant("x"), fc.constant("é"), fc.constant("😀"), shortString.filter((s) => s.length > 0)),
      fc.oneof(
        { arbitrary: fc.constantFrom(31, 32, 33, 64, 65, 254, 255, 256, 2000, 2001, 2048, 2049, 10_000, 10_001, 65_535, 65_536), weight: 6 },
        { arbitrary: fc.constantFrom(1_048_000, 1_048_576 - 40, 1_048_577, 1_200_000), weight: 1 },
        { arbitrary: fc.integer({ min: 0, max: 4096 }), weight: 6 },
      ),
    )
    .map(([chunk, n]) => chunk.repeat(Math.ceil(Math.min(n, max) / chunk.length)).slice(0, Math.min(n, max)));

/** Strings, mostly short, sometimes big. */
export const anyString: Arb<string> = fc.oneof({ arbitrary: shortString, weight: 8 }, { arbitrary: sizedString(), weight: 1 });

/** Scalars of every JSON type, with numeric edge cases. */
export const scalar: Arb<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 53, 2 ** 63, -(2 ** 63), 1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2),
  fc.double(),
  shortString,
);

/** Wraps a leaf in `depth` arrays or objects (depth up to 50). */
export const nested = (leaf: Arb<unknown>, maxDepth = 50): Arb<unknown> =>
  fc
    .tuple(leaf, fc.array(fc.tuple(fc.boolean(), fc.constantFrom("a", "firstName", "0", "", "__proto__")), { minLength: 1, maxLength: maxDepth }))
    .map(([v, wraps]) => wraps.reduce<unknown>((acc, [asArray, key]) => (asArray ? [acc] : { [key]: acc }), v));

/** Random JSON shapes: fast-check's own generator, nesting, arrays of many items. */
export const jsonShape: Arb<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  nested(scalar),
  fc.array(scalar, { maxLength: 250 }),
  fc.dictionary(shortString, scalar, { maxKeys: 8 }),
);

/** A value of the wrong kind for any field. */
export const junk: Arb<unknown> = fc.oneof({ arbitrary: scalar, weight: 6 }, { arbitrary: jsonShape, weight: 3 }, { arbitrary: sizedString(), weight: 1 });

/** Either a plausible value (most of the time) or junk. */
export const maybe = <T>(good: Arb<T>, goodWeight = 3): Arb<unknown> =>
  fc.oneof({ arbitrary: good as Arb<unknown>, weight: goodWeight }, { arbitrary: junk, weight: 1 });

/** ISO 8601 timestamps, valid, edge or broken. */
export const isoish: Arb<string> = fc.oneof(
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString().replace("Z", "+05:30")),
  fc.constantFrom(
    "2024-02-30T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01", "2024-01-01T25:00:00Z", "1970-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z", "+275760-09-13T00:00:00.000Z", "-000001-01-01T00:00:00Z",
    "2024-01-01T00:00:00", "2024-01-01T00:00:00.Z", "2024-W01-1", "now", "1700000000", "2024-01-01T00:00:00+99:99", "",
  ),
  shortString,
);

/** Text for a JSON body made of key/value pairs, keys possibly repeated (duplicate keys). */
export const rawObjectText = (pairs: Arb<[string, unknown][]>): Arb<string> =>
  pairs.map((ps) => `{${ps.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`).join(",")}}`);

/** Body text that is not a JSON object: truncated, BOM-prefixed, deep, non-JSON, odd numbers. */
export const rawJunkText = (validJson: Arb<string>): Arb<string> =>
  fc.oneof(
    fc.tuple(validJson, fc.nat()).map(([t, n]) => t.slice(0, t.length ? n % t.length : 0)),
    validJson.map((t) => "\ufeff" + t),
    validJson.map((t) => t + "garbage"),
    validJson.map((t) => `${t}${t}`),
    validJson.map((t) => ` \n\t${t}\r\n `),
    fc.integer({ min: 1, max: 200_000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
    fc.integer({ min: 1, max: 100_000 }).map((n) => '{"a":'.repeat(n) + "1" + "}".repeat(n)),
    fc.integer({ min: 1, max: 50_000 }).map((n) => "[".repeat(n)),
    fc.constantFrom("", " ", "null", "true", "0", "-0", "1e400", "[]", '""', "{}", "{,}", "{'a':1}", '{"a":1,}', "{a:1}", "NaN"),
    fc.constantFrom('{"firstName":"\\ud800"}', '{"firstName":"\\u0000"}', '{"firstName":"\\uZZZZ"}', '{"n":123456789012345678901234567890}'),
    fc.constantFrom('{"__proto__":{"polluted":1},"firstName":"a"}', '{"constructor":{"prototype":{"x":1}},"firstName":"a"}'),
    shortString,
  );

/** encodeURIComponent that survives lone surrogates (sent as the bytes of an encoded surrogate). */
export function safeEncode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return encodeURIComponent(s.toWellFormed()) + "%ED%A0%80";
  }
}

/** Raw bytes that are not valid UTF-8 (with JSON-looking framing sometimes). */
export const invalidUtf8: Arb<Uint8Array> = fc
  .tuple(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean())
  .map(([bytes, framed]) => {
    const inner = Uint8Array.from([0xff, 0xc3, 0x28, ...bytes, 0xed, 0xa0, 0x80]);
    if (!framed) return inner;
    const head = new TextEncoder().encode('{"firstName":"');
    const tail = new TextEncoder().encode('"}');
    return Uint8Array.from([...head, ...inner, ...tail]);
  });
