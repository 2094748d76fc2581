import { z } from "@hono/zod-openapi";
import { ContactSchema, ErasedContact } from "../contacts/schemas.ts";
import { ErasedInteractionLog, InteractionLogSchema } from "../interactions/schemas.ts";
import { timestampSchema } from "../lib/time.ts";
import type { EventType } from "./catalog.ts";

/**
 * The `data` of each event (docs/webhooks.md §1.1, §1): the one definition of what a
 * payload holds. `eventOf` (src/changes/record.ts) takes data of these types, and the OpenAPI document's
 * `webhooks` section and GET /events show them (docs/api.md §16).
 */
const EventContact = z.union([ContactSchema, ErasedContact]);

const ContactCreatedData = z.object({ contact: EventContact }).openapi("ContactCreatedData");

const ContactUpdatedData = z
  .object({
    contact: EventContact,
    changedFields: z.array(z.string()).openapi({ description: "Fields the update changed.", example: ["email"] }),
    previousContactId: z.string().optional().openapi({ description: "Present when the update relabelled the contact.", example: "CR-7" }),
    previous: z
      .record(z.string(), z.unknown())
      .nullable()
      .optional()
      .openapi({
        description: "The changed fields' former values, by the names of changedFields, as the contact showed them; null once the contact was erased (docs/webhooks.md §1.1).",
        example: { email: "ada@old.example.com" },
      }),
  })
  .openapi("ContactUpdatedData");

const ContactDeletedData = z
  .object({
    contactId: z.string().openapi({ example: "CR-7" }),
    reason: z.enum(["deleted", "merged"]).openapi({ description: "deleted: moved to the trash (DELETE); merged: merged into another contact." }),
    mergedInto: z.string().optional().openapi({ description: "The surviving contact, when reason is merged.", example: "CR-3" }),
  })
  .openapi("ContactDeletedData");

const ContactRestoredData = z.object({ contact: EventContact }).openapi("ContactRestoredData");

const ContactErasedData = z
  .object({ contactId: z.string().openapi({ example: "CR-7" }) })
  .openapi("ContactErasedData", { description: "The contact was erased: purge every copy of it. Carries no personal data." });

const ContactMergedData = z
  .object({
    contact: EventContact,
    mergedContactIds: z.array(z.string()).openapi({ example: ["CR-9"] }),
    mergeId: z.string().openapi({ example: "mrg_2b1kV0yXcW8n4sQ3eF6gHj" }),
  })
  .openapi("ContactMergedData");

const InteractionLogCreatedData = z
  .object({
    interactionLog: z.union([InteractionLogSchema, ErasedInteractionLog]),
    contact: z.object({ contactId: z.string(), firstName: z.string().nullable(), lastName: z.string().nullable(), email: z.string().nullable() }),
  })
  .openapi("InteractionLogCreatedData");

const WebFormSubmittedData = z
  .object({
    form: z.object({ id: z.string(), name: z.string() }),
    submission: z.object({
      id: z.string(),
      submittedAt: timestampSchema,
      values: z
        .record(z.string(), z.unknown())
        .nullable()
        .openapi({ description: "The accepted field values, as stored with the submission; null once the contact was erased." }),
    }),
    contact: EventContact,
  })
  .openapi("WebFormSubmittedData");

const PingData = z
  .object({ webhookId: z.string(), message: z.string() })
  .openapi("PingData", { example: { webhookId: "wh_2b1kV0yXcW8n4sQ3eF6gHj", message: "Test ping: this subscription receives signed events." } });

export const eventData = {
  "contact.created": ContactCreatedData,
  "contact.updated": ContactUpdatedData,
  "contact.deleted": ContactDeletedData,
  "contact.restored": ContactRestoredData,
  "contact.erased": ContactErasedData,
  "contact.merged": ContactMergedData,
  "interaction_log.created": InteractionLogCreatedData,
  "web_form.submitted": WebFormSubmittedData,
} as const satisfies Record<EventType, z.ZodType>;

export type EventData<T extends EventType> = z.input<(typeof eventData)[T]>;

/** The body of a delivery and of an item of GET /events (docs/webhooks.md §2), per event. */
const envelope = <N extends string, D extends z.ZodType>(event: N, data: D, name: string) =>
  z
    .object({
      id: z.string().openapi({ description: "Event id; the same across retries.", example: "evt_vBNIXAiiOR1ffcpH4hG8WC" }),
      event: z.literal(event),
      apiVersion: z.literal("v1"),
      projectId: z.string().openapi({ example: "prj_VInDBXjYoczZESBTNWt7WN" }),
      createdAt: timestampSchema,
      data,
    })
    .openapi(name);

export const eventEnvelopes = {
  "contact.created": envelope("contact.created", ContactCreatedData, "ContactCreatedEvent"),
  "contact.updated": envelope("contact.updated", ContactUpdatedData, "ContactUpdatedEvent"),
  "contact.deleted": envelope("contact.deleted", ContactDeletedData, "ContactDeletedEvent"),
  "contact.restored": envelope("contact.restored", ContactRestoredData, "ContactRestoredEvent"),
  "contact.erased": envelope("contact.erased", ContactErasedData, "ContactErasedEvent"),
  "contact.merged": envelope("contact.merged", ContactMergedData, "ContactMergedEvent"),
  "interaction_log.created": envelope("interaction_log.created", InteractionLogCreatedData, "InteractionLogCreatedEvent"),
  "web_form.submitted": envelope("web_form.submitted", WebFormSubmittedData, "WebFormSubmittedEvent"),
} as const satisfies Record<EventType, z.ZodType>;

/** The body of the test ping (docs/webhooks.md §1.4): the envelope with `event: "ping"`. */
export const PingEvent = envelope("ping", PingData, "PingEvent");
