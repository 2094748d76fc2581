import { createHmac, timingSafeEqual } from "node:crypto";
import { ApiError } from "../errors.ts";

/**
 * Opaque keyset cursors (docs/api.md §5): the position of the last row plus a fingerprint of
 * the filters, signed with a per-database secret. A cursor the service never issued, or one
 * reused with other filters, is 422 `cursor`.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(position: Array<string | number>, filters: unknown): string {
    const payload = Buffer.from(JSON.stringify({ p: position, f: this.fingerprint(filters) })).toString("base64url");
    return `${payload}.${this.sign(payload)}`;
  }

  /** `param`: the query parameter the cursor came in, named by the 422 (`after` on GET /changes). */
  decode(cursor: string, filters: unknown, param = "cursor"): Array<string | number> {
    const invalid = new ApiError("ERR_FORM_VALIDATION", `${param} is not valid for this list.`, param);
    const [payload, signature, extra] = cursor.split(".");
    if (!payload || !signature || extra !== undefined) throw invalid;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw invalid;
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString()) as { p: Array<string | number>; f: string };
    if (parsed.f !== this.fingerprint(filters)) {
      throw new ApiError("ERR_FORM_VALIDATION", `${param} was issued for other filters.`, param);
    }
    return parsed.p;
  }

  private sign(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url").slice(0, 22);
  }

  private fingerprint(filters: unknown): string {
    return createHmac("sha256", this.secret).update(JSON.stringify(filters)).digest("base64url").slice(0, 16);
  }
}
