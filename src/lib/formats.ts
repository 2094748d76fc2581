/**
 * Email syntax check: one @, a dot-atom-ish local part, a dotted domain with a TLD; no
 * spaces. Deliberately the pragmatic HTML-spec shape rather than full RFC 5322.
 */
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export function isEmail(value: string): boolean {
  return value.length <= 254 && EMAIL.test(value);
}

/** C0 control characters and DEL: never part of a header the server builds from data (docs/security.md §6). */
export const hasControlCharacters = (value: string) => /[\x00-\x1f\x7f]/.test(value);

/**
 * An absolute http(s) URL with a host. The URL parser silently drops tabs and line breaks,
 * so they are refused here first: the text stored is the text later sent in a `Location`.
 */
export function isHttpUrl(value: string): boolean {
  if (hasControlCharacters(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname.length > 0;
  } catch {
    return false;
  }
}
