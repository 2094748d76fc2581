import { createHash } from "node:crypto";
import { BASE62, randomBase62 } from "../lib/ids.ts";

/**
 * API key format (docs/api.md §2): `crm_live_` or `crm_test_`, 40 base62 characters of CSPRNG
 * output, then a 6-character base62 CRC-32 checksum of everything before it, so secret
 * scanners can recognise a key and a typo is caught without a database lookup.
 */
export type Environment = "production" | "sandbox";

export const keyPrefix = (env: Environment) => (env === "production" ? "crm_live_" : "crm_test_");

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of new TextEncoder().encode(text)) crc = CRC_TABLE[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** Six base62 digits: 62^6 > 2^32, so every CRC-32 fits. */
export function checksum(text: string): string {
  let n = crc32(text);
  let out = "";
  for (let i = 0; i < 6; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(env: Environment): string {
  const body = keyPrefix(env) + randomBase62(40);
  return body + checksum(body);
}

const KEY_SHAPE = /^crm_(live|test)_[0-9A-Za-z]{46}$/;

/** True when the key has this environment's prefix, the right length and a valid checksum. */
export function isWellFormedKey(key: string, env: Environment): boolean {
  if (!KEY_SHAPE.test(key) || !key.startsWith(keyPrefix(env))) return false;
  return checksum(key.slice(0, -6)) === key.slice(-6);
}

/**
 * Only this hash is stored (docs/api.md §2); lookup by hash keeps timing independent of the
 * key. Synchronous node:crypto (in Bun and Deno alike): it runs on every request, and the
 * promise of Web Crypto's digest costs more than the hash.
 */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}
