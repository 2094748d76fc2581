import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

/**
 * Admin passwords (docs/admin.md §2): scrypt, memory-hard, with its parameters stored in the
 * hash (`scrypt$N$r$p$salt$hash`, base64), so they can be raised later without locking
 * anyone out: a stored hash is always checked with the parameters it was made with.
 * N = 2^15, r = 8 is 32 MiB and ~50 ms per hash (OWASP's scrypt floor is N = 2^17 with
 * r = 8 and p = 1, or an equivalent; 2^15 keeps sign-in fast on a small machine, and
 * the lockout caps guesses at 10 per 15 minutes).
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 };
const KEY_LENGTH = 32;
export const MIN_PASSWORD_LENGTH = 12;
/** Longer passwords only cost hashing time; 1,024 characters is far beyond any passphrase. */
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { N, r, p } = PARAMS;
  const key = await derive(password, salt, N, r, p);
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`;
}

/** True when `password` matches `stored`; false for any other stored form. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const key = await derive(password, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p));
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing in particular, checked when no account has the email, so both cases take as long. */
let decoy: Promise<string> | undefined;
export const decoyHash = () => (decoy ??= hashPassword(randomBytes(16).toString("hex")));

/** Why a new password is refused, or null when it is fine. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `Password must have at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_PASSWORD_LENGTH) return `Password must have at most ${MAX_PASSWORD_LENGTH} characters.`;
  return null;
}
