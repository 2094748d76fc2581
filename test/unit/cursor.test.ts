import { describe, expect, test } from "bun:test";
import { ApiError } from "../../src/errors.ts";
import { CursorCodec } from "../../src/lib/cursor.ts";

const codec = new CursorCodec("test-secret");

function rejects(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("expected a rejection");
}

describe("keyset cursors (docs/api.md §5)", () => {
  test("a cursor decodes to the position it was issued for", () => {
    const c = codec.encode(["2026-01-01T00:00:00.000Z", 42], { tag: ["a"] });
    expect(codec.decode(c, { tag: ["a"] })).toEqual(["2026-01-01T00:00:00.000Z", 42]);
  });

  test("reusing a cursor with other filters is 422 cursor", () => {
    const c = codec.encode(["x", 1], { tag: ["a"] });
    const e = rejects(() => codec.decode(c, { tag: ["b"] }));
    expect(e.status).toBe(422);
    expect(e.fieldName).toBe("cursor");
  });

  test.each(["", "abc", "abc.def", "a.b.c", codec.encode(["x", 1], {}).slice(0, -1) + "A"])(
    "a cursor the service never issued (%p) is 422 cursor",
    (bad) => {
      const e = rejects(() => codec.decode(bad, {}));
      expect(e.code).toBe("ERR_FORM_VALIDATION");
      expect(e.fieldName).toBe("cursor");
    },
  );

  test("a cursor of another database's secret is refused", () => {
    const c = new CursorCodec("other").encode(["x", 1], {});
    expect(rejects(() => codec.decode(c, {})).fieldName).toBe("cursor");
  });
});

describe("keyset cursors: what is refused, and how it is said (docs/api.md §5, §16)", () => {
  test("an issued cursor with anything appended after another dot is not one the service issued", () => {
    const c = codec.encode(["2026-01-01T00:00:00.000Z", 42], {});
    expect(codec.decode(c, {})).toEqual(["2026-01-01T00:00:00.000Z", 42]);
    for (const bad of [`${c}.`, `${c}.x`, `${c}.${c.split(".")[1]}`]) expect(rejects(() => codec.decode(bad, {})).fieldName).toBe("cursor");
  });

  test("a payload that was changed is refused, even when it still decodes and keeps the filters' fingerprint", () => {
    const [payload, signature] = codec.encode(["2026-01-01T00:00:00.000Z", 42], {}).split(".");
    const original = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { p: unknown; f: string };
    const forged = Buffer.from(JSON.stringify({ p: ["2099-01-01T00:00:00.000Z", 1], f: original.f })).toString("base64url");
    expect(rejects(() => codec.decode(`${forged}.${signature}`, {})).fieldName).toBe("cursor");
  });

  test("the messages say what is wrong: a cursor never issued, or issued for other filters", () => {
    const never = rejects(() => codec.decode("abc.def", {}));
    expect(never.message).toBe("cursor is not valid for this list.");
    const other = rejects(() => codec.decode(codec.encode(["x", 1], { tag: ["a"] }), { tag: ["b"] }));
    expect(other.message).toBe("cursor was issued for other filters.");
    expect(other.code).toBe("ERR_FORM_VALIDATION");
  });

  test("the same filters in the same shape reuse a cursor; a filter added or dropped does not", () => {
    const filters = { search: "mar", tag: ["a", "b"], limit: 10 };
    const c = codec.encode(["x", 1], filters);
    expect(codec.decode(c, { search: "mar", tag: ["a", "b"], limit: 10 })).toEqual(["x", 1]);
    expect(rejects(() => codec.decode(c, { search: "mar", tag: ["a", "b"] })).fieldName).toBe("cursor");
    expect(rejects(() => codec.decode(c, { ...filters, contactTypeId: "ct_1" })).fieldName).toBe("cursor");
  });

  test("a cursor is URL-safe: base64url characters and one dot", () => {
    const c = codec.encode(["2026-01-01T00:00:00.000Z", 42], { search: "zoë ü/+" });
    expect(c).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });
});
