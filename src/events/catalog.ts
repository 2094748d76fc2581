/** Event names of docs/webhooks.md §1.1; a subscription takes some of them or `["*"]`. */
export const EVENT_TYPES = [
  "contact.created",
  "contact.updated",
  "contact.deleted",
  "contact.restored",
  "contact.erased",
  "contact.merged",
  "interaction_log.created",
  "web_form.submitted",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Events stay readable (GET /events) and redeliverable for 30 days (docs/webhooks.md §5). */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

/** The oldest creation time still within retention at `now` (the service's clock, issue 11). */
export const retainedSince = (now: number) => new Date(now - EVENT_RETENTION_MS).toISOString();
