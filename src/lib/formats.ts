/*
 * The string formats the OpenAPI document states (`format: email`, `format: uri`,
 * `format: date-time`, `format: date`), checked here exactly as the document's readers
 * check them: ajv-formats' "full" definitions (docs/api.md §3.4, §7.2). The server never
 * accepts a value the document refuses; test/unit/formats.test.ts compares these checks
 * with ajv-formats on a corpus.
 */

/** ajv-formats' `email`: dot-atom local part, a domain of at least two labels. */
const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** A valid `format: email` of at most 254 characters (docs/api.md §7.2). */
export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/** C0 control characters and DEL: never part of a header the server builds from data (docs/security.md §6). */
export const hasControlCharacters = (value: string) => /[\x00-\x1f\x7f]/.test(value);

/** ajv-formats' `uri` (RFC 3986 absolute URI): no spaces, nothing outside its character set. */
const URI =
  /^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$/i;

/** A valid `format: uri` as ajv-formats checks it. */
export const isUri = (value: string) => /\/|:/.test(value) && URI.test(value);

/** What the document's `pattern` beside `format: uri` says of an http(s) URL (src/http/openapi.ts `httpUrlFormat`). */
export const HTTP_URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://";

/**
 * An absolute http(s) URL with a host that is also a valid `format: uri` (so no space, no
 * control character: the URL parser would silently drop tabs and line breaks, and the text
 * stored is the text later sent in a `Location`).
 */
export function isHttpUrl(value: string): boolean {
  if (hasControlCharacters(value) || !isUri(value) || !new RegExp(HTTP_URL_PATTERN).test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname.length > 0;
  } catch {
    return false;
  }
}
