const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` base62 characters of CSPRNG output (rejection sampling keeps them uniform). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** Public ids: `<prefix>_` + 22 base62 characters (≈131 bits), e.g. `il_…`, `evt_…`. */
export function newId(prefix: "prj" | "key" | "ct" | "it" | "cf" | "tag" | "il" | "evt" | "wh" | "frm" | "sub" | "dlv" | "att" | "node" | "adm" | "imp" | "mrg"): string {
  return `${prefix}_${randomBase62(22)}`;
}

export { ALPHABET as BASE62 };
