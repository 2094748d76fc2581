// @ts-check
/**
 * The dense modules of issue 11 and the fast unit tests that pin each one's rules: Stryker
 * mutates `mutate` and runs only `tests` (never the HTTP suite) against every mutant. Read
 * by stryker.config.mjs and scripts/mutation.ts.
 */

/** @type {Record<string, { mutate: string[]; tests: string[] }>} */
export const modules = {
  retry: { mutate: ["src/webhooks/retry.ts"], tests: ["test/unit/retry.test.ts"] },
  signature: { mutate: ["src/webhooks/signature.ts"], tests: ["test/unit/signature.test.ts"] },
  cursor: { mutate: ["src/lib/cursor.ts", "src/storage/keyset.ts"], tests: ["test/unit/cursor.test.ts", "test/unit/keyset.test.ts"] },
  limiter: { mutate: ["src/auth/limiter.ts", "src/auth/rate-limiter.ts"], tests: ["test/unit/limiter.test.ts", "test/unit/rate-limiter.test.ts"] },
  "list-query": { mutate: ["src/contacts/list-query.ts", "src/contacts/search/driver.ts"], tests: ["test/unit/list-query.test.ts", "test/unit/query-plans.test.ts"] },
  matching: { mutate: ["src/contacts/matching.ts"], tests: ["test/unit/matching.test.ts"] },
  "address-policy": { mutate: ["src/webhooks/address-policy.ts"], tests: ["test/unit/address-policy.test.ts"] },
  "contact-apply": { mutate: ["src/contacts/apply.ts"], tests: ["test/unit/apply.test.ts"] },
  // The envelope: the code → status → reason map, the zod hook's mapping, and the one error
  // handler of createApp (notFound / onError / asApiError, by line range).
  "error-envelope": {
    mutate: ["src/errors.ts", "src/http/validation.ts", "src/app.ts:99-132"],
    tests: ["test/unit/errors.test.ts", "test/unit/app.test.ts"],
  },
};
