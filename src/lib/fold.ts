/**
 * Case and accent folding shared by search (docs/api.md §11.6) and duplicate keys
 * (docs/api.md §20.1): Unicode NFKD, combining marks dropped, the letters NFKD cannot
 * reach spelled out (`ß` = `ss`, `ø` = `o`, `ł` = `l` …), lower-cased.
 */

/** The letters folding cannot reach through NFKD: they have no combining form. */
const SPECIAL: Record<string, string> = { ß: "ss", ẞ: "ss", ø: "o", Ø: "o", ł: "l", Ł: "l", đ: "d", Đ: "d", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", þ: "th", Þ: "th", ı: "i" };

export function foldCase(text: string): string {
  return text
    .toWellFormed()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[ßẞøØłŁđĐæÆœŒþÞı]/g, (c) => SPECIAL[c] ?? c)
    .toLowerCase();
}
