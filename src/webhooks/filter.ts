/**
 * Subscription filters (docs/webhooks.md §8): which contact events a subscription takes.
 * A filter is stored resolved (tags by id) as JSON on the subscription; `passesFilter` is
 * asked for each event as it is recorded (src/events/outbox.ts).
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

/** Whether a subscription with `filter` takes an event of `type` about `subject`. */
export function passesFilter(filter: SubscriptionFilter | null, type: string, subject: EventSubject | null): boolean {
  if (!filter) return true;
  // TODO(helper): docs/webhooks.md §8 semantics.
  void type;
  void subject;
  return true;
}
