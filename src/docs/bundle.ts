// Scalar's self-contained browser bundle (3.5 MB: code, styles, no fonts), imported as text
// so that `bun src/main.ts`, `deno run` and the `bun build --compile` binary all carry it:
// the reference page needs nothing from outside the process (docs/api.md §16). The file is
// not in the package's exports map, hence the relative path.
import scalarBundle from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "text" };
import { constants, createBrotliCompress, createGzip } from "node:zlib";

/** A content coding the bundle is also kept in, best first. */
export type Coding = "br" | "gzip";
const CODINGS: readonly Coding[] = ["br", "gzip"];

/** One representation of the bundle: its bytes, its strong ETag, its Content-Encoding (null: identity). */
export interface Variant {
  body: Uint8Array<ArrayBuffer>;
  etag: string;
  encoding: Coding | null;
}

let identity: Promise<Variant> | undefined;
const compressed = new Map<Coding, Promise<Variant | null>>();

/**
 * The bundle as sent without a coding, built at the first request (not at start: a CLI
 * command or a server nobody reads the docs of pays nothing). Its ETag is a hash of the
 * bytes, so it changes exactly when Scalar is upgraded.
 */
export function scalarBundleIdentity(): Promise<Variant> {
  identity ??= (async () => {
    const body = new TextEncoder().encode(scalarBundle);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", body));
    const hash = [...digest.slice(0, 12)].map((b) => b.toString(16).padStart(2, "0")).join("");
    return { body, etag: `"${hash}"`, encoding: null };
  })();
  return identity;
}

/** The version tag the page puts in the bundle's URL, so a new bundle is fetched at once after an upgrade. */
export async function scalarBundleVersion(): Promise<string> {
  return (await scalarBundleIdentity()).etag.slice(1, 13);
}

/**
 * The best representation the client accepts: brotli (≈0.9 MB), gzip (≈1 MB) or the raw
 * 3.5 MB. Each coding is compressed once per process, at the first request that asks for
 * it, and kept; a strong ETag is per representation (RFC 9110 §8.8.1), so it carries the
 * coding. A failed compression falls back to the raw bytes and is tried again next time.
 */
export async function scalarBundleFor(acceptEncoding: string | undefined): Promise<Variant> {
  const base = await scalarBundleIdentity();
  const accepted = acceptedCodings(acceptEncoding);
  const coding = CODINGS.find((c) => accepted.has(c));
  if (!coding) return base;
  let variant = compressed.get(coding);
  if (!variant) {
    variant = compress(base.body, coding).then(
      (body) => ({ body, etag: `${base.etag.slice(0, -1)}-${coding}"`, encoding: coding }),
      () => {
        compressed.delete(coding);
        return null;
      },
    );
    compressed.set(coding, variant);
  }
  return (await variant) ?? base;
}

/** The codings of an Accept-Encoding header with a non-zero weight (`*` stands for both). */
export function acceptedCodings(header: string | undefined): Set<Coding> {
  const accepted = new Set<Coding>();
  for (const part of (header ?? "").toLowerCase().split(",")) {
    const [name = "", ...params] = part.split(";").map((s) => s.trim());
    const q = params.find((p) => p.startsWith("q="));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === "*") CODINGS.forEach((c) => accepted.add(c));
    else if ((CODINGS as readonly string[]).includes(name)) accepted.add(name as Coding);
  }
  return accepted;
}

const CHUNK = 64 * 1024;

/**
 * Compresses in 64 KiB writes with a turn of the event loop between them: under Deno
 * node:zlib works on the main thread, and one 3.5 MB call would stall every other request
 * for up to a second (docs/api.md §7). Brotli quality 5 keeps that turn short (tens of ms)
 * for nearly the size of quality 9; gzip level 9 costs little more than level 6.
 */
async function compress(input: Uint8Array, coding: Coding): Promise<Uint8Array<ArrayBuffer>> {
  const stream =
    coding === "br"
      ? createBrotliCompress({
          params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: input.length },
        })
      : createGzip({ level: 9 });
  const chunks: Uint8Array[] = [];
  stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    stream.on("end", resolve);
    stream.on("error", reject);
  });
  ended.catch(() => {}); // awaited below; this only keeps an early error from counting as unhandled
  for (let offset = 0; offset < input.length; offset += CHUNK) {
    stream.write(input.subarray(offset, offset + CHUNK));
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  stream.end();
  await ended;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
