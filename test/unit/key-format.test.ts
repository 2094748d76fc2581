import { describe, expect, test } from "bun:test";
import { checksum, crc32, generateApiKey, isWellFormedKey } from "../../src/auth/key-format.ts";

describe("API key format (docs/api.md §2)", () => {
  test("a production key is crm_live_ + 40 base62 + 6-character base62 checksum", () => {
    const key = generateApiKey("production");
    expect(key).toMatch(/^crm_live_[0-9A-Za-z]{46}$/);
    expect(checksum(key.slice(0, -6))).toBe(key.slice(-6));
  });

  test("a sandbox key starts with crm_test_", () => {
    expect(generateApiKey("sandbox")).toMatch(/^crm_test_[0-9A-Za-z]{46}$/);
  });

  test("keys are random", () => {
    expect(new Set(Array.from({ length: 200 }, () => generateApiKey("production"))).size).toBe(200);
  });

  test("a key of the other environment is not well formed here", () => {
    expect(isWellFormedKey(generateApiKey("sandbox"), "production")).toBe(false);
    expect(isWellFormedKey(generateApiKey("production"), "production")).toBe(true);
  });

  test("one changed character breaks the checksum", () => {
    const key = generateApiKey("production");
    const i = 20;
    const swapped = key.slice(0, i) + (key[i] === "a" ? "b" : "a") + key.slice(i + 1);
    expect(isWellFormedKey(swapped, "production")).toBe(false);
  });

  test("crc32 matches the standard check value", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
  });
});
