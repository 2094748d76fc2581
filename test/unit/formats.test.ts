/**
 * The server's format checks (src/lib/formats.ts, src/lib/time.ts) accept exactly what the
 * document's formats accept as ajv-formats checks them (docs/api.md §3.4, §7.2): `email`,
 * `uri`, and input timestamps as `anyOf: [date-time, date]`, compared on a corpus.
 */
import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { isEmail, isHttpUrl, isUri } from "../../src/lib/formats.ts";
import { inputTimestampFormat, toIso } from "../../src/lib/time.ts";

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const documentSays = (schema: object) => {
  const validate = ajv.compile({ type: "string", ...schema });
  return (value: string) => validate(value) as boolean;
};

const EMAILS = [
  "ada@example.com", "ada.lovelace@example.co.uk", "a+b@example.com", "ADA@EXAMPLE.COM", "o'hara@example.ie", "x@a.b",
  "ada.@example.com", ".ada@example.com", "a..b@example.com", "ada@example", "ada@-example.com", "ada@example-.com",
  "ada@exa_mple.com", " ada@example.com", "ada@example.com ", "ada example@example.com", "ada@@example.com", "@example.com",
  "ada@", "", "ada@[127.0.0.1]", '"ada"@example.com', "ada@example..com", "ада@example.com", "ada@xn--80ak6aa92e.com",
  `${"a".repeat(64)}@example.com`, `a@${"b".repeat(70)}.com`,
];

const URIS = [
  "https://example.com", "http://example.com/a/b?c=d#e", "https://example.com/a%20b", "https://user:pw@example.com:8443/x",
  "https://[::1]/x", "https://93.184.216.34/crm-hook", "HTTPS://EXAMPLE.COM", "ftp://example.com", "mailto:ada@example.com",
  "https://example.com/a b", "https://example.com/\tx", "https://exa mple.com", "example.com", "/relative", "https://",
  "https://example.com/ü", "https://ex<ample.com", "https://example.com/{x}", "https://example.com/|", "javascript:alert(1)",
  "https:example.com", "http://localhost:3000/hook", "https://example.com/a\\b",
];

const TIMES = [
  "2024-05-01", "2024-05-01T10:00:00Z", "2024-05-01T10:00:00.123Z", "2024-05-01T10:00:00+02:00", "2024-05-01T10:00:00-0530",
  "2024-05-01T10:00:00+02", "2024-05-01t10:00:00z", "2024-05-01 10:00:00Z", "2024-05-01T10:00:00", "2024-05-01T10:00Z",
  "2024-05-01T10:00", "2024-02-29", "2023-02-29", "2024-13-01", "2024-05-32", "2024-05-01T24:00:00Z", "2024-05-01T10:60:00Z",
  "2024-12-31T23:59:60Z", "2024-12-31T22:59:60Z", "2024-12-31T23:59:60+00:00", "2025-01-01T00:59:60+01:00", "2024-05-01T10:00:00+24:00",
  "2024-5-1", "20240501", "2024-05-01T10:00:00.Z", "2024-05-01TT10:00:00Z", "", "yesterday", "2024-05-01T10:00:00Z ",
];

describe("the server's formats are ajv-formats' (docs/api.md §3.4, §7.2)", () => {
  const email = documentSays({ format: "email" });
  test.each(EMAILS)("email %p", (value) => expect(isEmail(value)).toBe(email(value) && value.length <= 254));

  const uri = documentSays({ format: "uri" });
  test.each(URIS)("uri %p", (value) => expect(isUri(value)).toBe(uri(value)));

  const httpUrl = documentSays({ format: "uri", pattern: "^[Hh][Tt][Tt][Pp][Ss]?://" });
  test.each(URIS)("an http(s) URL %p is never one the document refuses", (value) => {
    if (isHttpUrl(value)) expect(httpUrl(value)).toBe(true);
  });

  const timestamp = documentSays(inputTimestampFormat);
  test.each(TIMES)("input timestamp %p", (value) => expect(toIso(value) !== null).toBe(timestamp(value)));
});
