import { parseCsv } from "../../src/transfer/csv.ts";

/** `text` as UTF-8 chunks of `size` bytes, as a file stream would hand them to the parser. */
export async function* chunksOf(text: string, size: number) {
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Every record of `text`, read by the importer's parser in chunks of `size` bytes. */
export async function parse(text: string, size = 1 << 16) {
  const out: string[][] = [];
  for await (const record of parseCsv(chunksOf(text, size))) out.push(record);
  return out;
}
