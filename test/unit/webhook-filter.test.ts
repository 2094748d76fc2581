/**
 * Subscription filters (docs/webhooks.md §8.1, docs/api.md §19.5): which contact events a filter
 * takes, judged on the event's subject alone, and how a filter written by a caller is
 * checked against the project and stored (tags by id). In-process, on a fresh SQLite file.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Kysely } from "kysely";
import { ApiError } from "../../src/errors.ts";
import { validationFailure } from "../../src/http/validation.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { isoNow } from "../../src/lib/time.ts";
import { createProject } from "../../src/projects/service.ts";
import { createCustomField, resolveTags } from "../../src/reference/repository.ts";
import type { Database } from "../../src/storage/schema.ts";
import { openDatabase } from "../../src/storage/sqlite/open.ts";
import { passesFilter, resolveFilter, WebhookFilterSchema, type EventSubject, type SubscriptionFilter } from "../../src/webhooks/filter.ts";

const subject = (s: Partial<EventSubject> = {}): EventSubject => ({ contactId: 1, category: "Customer", tagIds: ["tag_a"], ...s });

describe("passesFilter: a contact event is delivered only when the contact matches (docs/webhooks.md §8.1)", () => {
  const cases: Array<{ name: string; filter: SubscriptionFilter | null; type: string; subject: EventSubject | null; passes: boolean }> = [
    { name: "no filter takes every event", filter: null, type: "contact.created", subject: subject(), passes: true },
    { name: "an event about no contact passes any filter", filter: { tags: ["tag_x"] }, type: "contact.created", subject: null, passes: true },
    { name: "a contact of one of the categories passes", filter: { contactTypeCategory: ["Lead", "Customer"] }, type: "contact.created", subject: subject(), passes: true },
    { name: "a contact of another category does not", filter: { contactTypeCategory: ["Lead"] }, type: "contact.created", subject: subject(), passes: false },
    { name: "a contact without a type has no category: it does not pass a category filter", filter: { contactTypeCategory: ["Customer"] }, type: "contact.created", subject: subject({ category: null }), passes: false },
    { name: "a contact with one of the tags passes", filter: { tags: ["tag_x", "tag_a"] }, type: "interaction_log.created", subject: subject(), passes: true },
    { name: "a contact with none of the tags does not", filter: { tags: ["tag_x"] }, type: "web_form.submitted", subject: subject(), passes: false },
    { name: "a contact without tags does not pass a tag filter", filter: { tags: ["tag_a"] }, type: "contact.deleted", subject: subject({ tagIds: [] }), passes: false },
    { name: "category and tags must both hold", filter: { contactTypeCategory: ["Customer"], tags: ["tag_x"] }, type: "contact.created", subject: subject(), passes: false },
    { name: "changedFields: contact.updated passes when a named field changed", filter: { changedFields: ["email", "phone"] }, type: "contact.updated", subject: subject({ changedFields: ["phone"] }), passes: true },
    { name: "changedFields: contact.updated does not pass when none changed", filter: { changedFields: ["email"] }, type: "contact.updated", subject: subject({ changedFields: ["firstName", "tags"] }), passes: false },
    { name: "changedFields: address takes any address part", filter: { changedFields: ["address"] }, type: "contact.updated", subject: subject({ changedFields: ["address.city"] }), passes: true },
    { name: "changedFields: customFields takes any custom field", filter: { changedFields: ["customFields"] }, type: "contact.updated", subject: subject({ changedFields: ["customFields.cf_1"] }), passes: true },
    { name: "changedFields: address.city matches exactly, not another part", filter: { changedFields: ["address.city"] }, type: "contact.updated", subject: subject({ changedFields: ["address.zip"] }), passes: false },
    { name: "changedFields: address.city matches address.city", filter: { changedFields: ["address.city"] }, type: "contact.updated", subject: subject({ changedFields: ["address.city"] }), passes: true },
    { name: "changedFields: a prefix that is not a group does not match", filter: { changedFields: ["email"] }, type: "contact.updated", subject: subject({ changedFields: ["emailVerified"] }), passes: false },
    { name: "changedFields: customFields.cf_1 does not take customFields.cf_12", filter: { changedFields: ["customFields.cf_1"] }, type: "contact.updated", subject: subject({ changedFields: ["customFields.cf_12"] }), passes: false },
    { name: "changedFields judge contact.updated only: contact.created passes", filter: { changedFields: ["email"] }, type: "contact.created", subject: subject(), passes: true },
    { name: "changedFields judge contact.updated only: a category miss still holds back other events", filter: { changedFields: ["email"], contactTypeCategory: ["Lead"] }, type: "contact.deleted", subject: subject(), passes: false },
    { name: "changedFields and tags must both hold on contact.updated", filter: { changedFields: ["email"], tags: ["tag_x"] }, type: "contact.updated", subject: subject({ changedFields: ["email"] }), passes: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      expect(passesFilter(c.filter, c.type, c.subject)).toBe(c.passes);
    });
  }
});

describe("WebhookFilterSchema: the filter's shape", () => {
  const failure = (input: unknown) => {
    const parsed = WebhookFilterSchema.safeParse(input);
    expect(parsed.success).toBe(false);
    return validationFailure(parsed.error!, { input });
  };
  test("an unknown category is refused naming contactTypeCategory", () => {
    const error = failure({ contactTypeCategory: ["Vendor"] });
    expect(error.fieldName).toBe("contactTypeCategory");
    expect(error.message).toBe("each item of contactTypeCategory must be one of Lead, Customer, Personnel, Other.");
  });
  test("an unknown key is refused", () => {
    expect(failure({ tag: ["vip"] }).fieldName).toBe("tag");
  });
  test("an empty list is refused: leaving the key out takes everything", () => {
    expect(failure({ tags: [] }).message).toBe("tags must have at least 1 item; leave it out to take every tag.");
  });
  test("a filter with every key is accepted", () => {
    expect(WebhookFilterSchema.safeParse({ changedFields: ["email"], contactTypeCategory: ["Lead"], tags: ["VIP"] }).success).toBe(true);
  });
});

describe("resolveFilter: the filter checked against the project and stored", () => {
  const dir = mkdtempSync(join(tmpdir(), "crm-webhook-filter-"));
  let db: Kysely<Database>;
  let close: () => Promise<void>;
  let projectId: string;
  let otherProjectId: string;
  let vip: string;
  let otherTag: string;
  let seats: string;

  beforeAll(async () => {
    ({ db, close } = await openDatabase(join(dir, "f.db"), "NORMAL"));
    const now = isoNow(systemClock);
    projectId = (await createProject(db, "f", now)).id;
    otherProjectId = (await createProject(db, "g", now)).id;
    vip = (await resolveTags(db, projectId, ["VIP"], now))[0]!.id;
    otherTag = (await resolveTags(db, otherProjectId, ["Elsewhere"], now))[0]!.id;
    seats = (await createCustomField(db, projectId, "Seats", "number", null, now)).id;
  });
  afterAll(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });

  const refused = async (input: Parameters<typeof resolveFilter>[2], fieldName: string) => {
    const error = await resolveFilter(db, projectId, input).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe("ERR_FORM_VALIDATION");
    expect((error as ApiError).fieldName).toBe(fieldName);
    return error as ApiError;
  };

  test("null, and a filter without keys, store null (every event)", async () => {
    expect(await resolveFilter(db, projectId, null)).toBeNull();
    expect(await resolveFilter(db, projectId, {})).toBeNull();
  });

  test("tags named in any case or by id are stored as ids, once each", async () => {
    expect(await resolveFilter(db, projectId, { tags: ["vip", vip, "VIP"] })).toEqual({ tags: [vip] });
  });

  test("an unknown tag is 422 filter.tags naming it", async () => {
    const error = await refused({ tags: ["VIP", "Nobody"] }, "filter.tags");
    expect(error.message).toContain('"Nobody"');
  });

  test("another project's tag is unknown here", async () => {
    await refused({ tags: [otherTag] }, "filter.tags");
  });

  test("contact field names, address parts and this project's custom fields are known", async () => {
    const changedFields = ["email", "address", "address.city", "customFields", `customFields.${seats}`, "tags", "contactId", "contactType"];
    expect(await resolveFilter(db, projectId, { changedFields })).toEqual({ changedFields });
  });

  test("an unknown field is 422 filter.changedFields naming it", async () => {
    const error = await refused({ changedFields: ["email", "emial"] }, "filter.changedFields");
    expect(error.message).toContain('"emial"');
  });

  test("an unknown address part or custom field id is 422 filter.changedFields", async () => {
    await refused({ changedFields: ["address.street"] }, "filter.changedFields");
    await refused({ changedFields: ["customFields.cf_nope"] }, "filter.changedFields");
  });

  test("categories are stored once each", async () => {
    expect(await resolveFilter(db, projectId, { contactTypeCategory: ["Lead", "Lead", "Customer"] })).toEqual({ contactTypeCategory: ["Lead", "Customer"] });
  });
});
