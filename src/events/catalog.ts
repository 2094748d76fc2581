/** Event names of interface §6.1; a subscription takes some of them or `["*"]`. */
export const EVENT_TYPES = ["contact.created", "contact.updated", "interaction_log.created", "web_form.submitted"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const subscribesTo = (events: string[], type: string) => events.includes("*") || events.includes(type);
