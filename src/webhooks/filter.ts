import { z } from "@hono/zod-openapi";
import { validationError } from "../errors.ts";
import { CATEGORIES } from "../reference/schemas.ts";
import { findTag } from "../reference/repository.ts";
import type { Db } from "../storage/schema.ts";

/**
 * Subscription filters (docs/webhooks.md §8, docs/api.md §19.5): which contact events a
 * subscription takes. A filter is stored resolved (tags by id) as JSON on the subscription;
 * `passesFilter` is asked for each event as it is recorded (src/events/outbox.ts), so a
 * changed filter never re-judges deliveries already queued.
 */

/** A stored filter; every key optional, an absent key takes everything. */
export interface SubscriptionFilter {
  changedFields?: string[];
  contactTypeCategory?: string[];
  /** Tag ids. */
  tags?: string[];
}

/** The contact an event is about, as the event shows it (for contact.deleted and contact.erased: as it was just before). */
export interface EventSubject {
  /** The contact's internal id (deliveries' per-contact order). */
  contactId: number;
  category: string | null;
  tagIds: string[];
  /** contact.updated: the fields its change record names (`email`, `address.city`, `customFields.<id>`, `tags`, …). */
  changedFields?: string[];
}

/** Entries that take every name under them: `address` takes `address.city`, `customFields` takes `customFields.cf_…`. */
const GROUPS = new Set(["address", "customFields"]);

/** Whether filter entry `entry` takes the changed field `changed` (docs/webhooks.md §8.1). */
const takes = (entry: string, changed: string) => entry === changed || (GROUPS.has(entry) && changed.startsWith(`${entry}.`));

/**
 * Whether a subscription with `filter` takes an event of `type` about `subject`
 * (docs/webhooks.md §8.1): the contact has one of the categories and one of the tags, and,
 * for contact.updated, one of the changedFields changed. An event about no contact passes;
 * so does a contact.updated whose subject does not say what changed (it cannot be judged,
 * and a filter only ever holds back what it can tell is unwanted).
 */
export function passesFilter(filter: SubscriptionFilter | null, type: string, subject: EventSubject | null): boolean {
  if (!filter || !subject) return true;
  const { contactTypeCategory, tags, changedFields } = filter;
  if (contactTypeCategory && (subject.category === null || !contactTypeCategory.includes(subject.category))) return false;
  if (tags && !tags.some((id) => subject.tagIds.includes(id))) return false;
  if (changedFields && type === "contact.updated" && subject.changedFields) {
    const changed = subject.changedFields;
    if (!changedFields.some((entry) => changed.some((name) => takes(entry, name)))) return false;
  }
  return true;
}

// The contact fields a filter's changedFields may name: the change records' names (src/changes/diff.ts).
export { ADDRESS_PARTS, CONTACT_FIELDS } from "../changes/diff.ts";
import { ADDRESS_PARTS, CONTACT_FIELDS } from "../changes/diff.ts";

const KNOWN = new Set<string>([...CONTACT_FIELDS, ...ADDRESS_PARTS.map((p) => `address.${p}`)]);

const list = (item: z.ZodType<string>, what: string) =>
  z.array(item).min(1, `must have at least 1 item; leave it out to take every ${what}.`).max(100, "must have at most 100 items.");

/**
 * The `filter` of a subscription's create and PATCH bodies (docs/api.md §13.1). The shape
 * and the categories are checked here; field names and tags need the project's data, and
 * are checked by `resolveFilter`.
 */
export const WebhookFilterSchema = z
  .strictObject({
    changedFields: list(z.string().max(100, "must be at most 100 characters."), "change")
      .optional()
      .openapi({
        description: "contact.updated only: delivered when one of these fields changed. Contact field names, `address.<part>`, `customFields.<id>`; `address` and `customFields` take any of their parts.",
        example: ["email", "address.city", "tags"],
      }),
    contactTypeCategory: list(z.enum(CATEGORIES, { error: `must be one of ${CATEGORIES.join(", ")}.` }), "category")
      .optional()
      .openapi({ description: "Delivered when the contact's type has one of these categories." }),
    tags: list(z.string().min(1, "must not be empty.").max(100, "must be at most 100 characters."), "tag")
      .optional()
      .openapi({ description: "Delivered when the contact has one of these tags. Names (case-insensitive) or ids when written; ids in answers.", example: ["tag_4fQ9hZk2LwM7pN1sX8cV3b"] }),
  })
  .openapi("WebhookFilter", {
    description: "Which contact events the subscription takes (docs/webhooks.md §8); null takes every event its `events` name.",
    example: { contactTypeCategory: ["Customer"], changedFields: ["email", "tags"] },
  });
export type WebhookFilterInput = z.infer<typeof WebhookFilterSchema>;

/** How deliveries to a subscription are ordered (docs/webhooks.md §8.2). */
export const OrderingSchema = z.enum(["none", "per-contact"], { error: "must be one of none, per-contact." }).openapi({
  description: '"per-contact": a contact\'s deliveries are attempted one at a time, in the order of their changes.',
});
export type Ordering = z.infer<typeof OrderingSchema>;

const unique = (xs: string[]) => [...new Set(xs)];
const names = (xs: string[]) => xs.map((x) => JSON.stringify(x)).join(", ");

/**
 * Checks a filter against the project and gives what is stored (docs/webhooks.md §8.1):
 * changedFields known (custom fields of this project by id), tags existing (names
 * resolved case-insensitively to ids), repeats dropped. Null, or a filter with no key,
 * is null: every event. Unknown values are 422 `filter.<key>`.
 */
export async function resolveFilter(db: Db, projectId: string, input: WebhookFilterInput | null | undefined): Promise<SubscriptionFilter | null> {
  if (!input) return null;
  const out: SubscriptionFilter = {};
  if (input.changedFields) {
    const fields = unique(input.changedFields);
    const custom = fields.filter((f) => f.startsWith("customFields."));
    const known = new Set(
      custom.length === 0
        ? []
        : (await db.selectFrom("custom_fields").select("id").where("project_id", "=", projectId).where("id", "in", custom.map((f) => f.slice("customFields.".length))).execute()).map(
            (r) => `customFields.${r.id}`,
          ),
    );
    const unknown = fields.filter((f) => !KNOWN.has(f) && !known.has(f));
    if (unknown.length > 0) {
      throw validationError(
        "filter.changedFields",
        `filter.changedFields names unknown fields: ${names(unknown)}. Use contact field names, address.<${ADDRESS_PARTS.join("|")}> or customFields.<custom field id>.`,
      );
    }
    out.changedFields = fields;
  }
  if (input.contactTypeCategory) out.contactTypeCategory = unique(input.contactTypeCategory);
  if (input.tags) {
    const ids: string[] = [];
    const unknown: string[] = [];
    for (const ref of unique(input.tags)) {
      const tag = await findTag(db, projectId, ref);
      if (tag) ids.push(tag.id);
      else unknown.push(ref);
    }
    if (unknown.length > 0) throw validationError("filter.tags", `filter.tags names tags unknown in this project: ${names(unknown)}.`);
    out.tags = unique(ids);
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** The stored column (JSON, null for none) as the filter it holds. */
export const parseFilter = (column: string | null): SubscriptionFilter | null => (column === null ? null : (JSON.parse(column) as SubscriptionFilter));
