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

describe("keyset cursors (decisions §5)", () => {
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
