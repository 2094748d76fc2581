import { describe, expect, test } from "bun:test";
import { toIso } from "../../src/lib/time.ts";

describe("ISO 8601 times (docs/api.md §11 updatedSince, docs/api.md §12.2 date)", () => {
  test.each([
    ["2026-01-02T03:04:05Z", "2026-01-02T03:04:05.000Z"],
    ["2026-01-02T03:04:05.123+02:00", "2026-01-02T01:04:05.123Z"],
    ["2026-01-02", "2026-01-02T00:00:00.000Z"],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z"],
  ])("%p is read as %p", (input, expected) => {
    expect(toIso(input)).toBe(expected);
  });

  test.each(["2021-02-30T00:00:00Z", "2023-02-29", "2026-13-01", "2026-01-01T24:00:00Z", "yesterday", "1700000000", ""])(
    "%p is not a time",
    (input) => {
      expect(toIso(input)).toBeNull();
    },
  );
});
