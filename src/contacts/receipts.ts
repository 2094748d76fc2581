import type { Caller } from "../auth/keys.ts";
import type { InteractionLog, InteractionLogReceipt } from "../interactions/schemas.ts";
import type { Contact, ContactReceipt } from "./schemas.ts";

/**
 * Least privilege in answers to writes (docs/security.md §3): a key never
 * receives contact data it could not read. Routes answer through these functions, so the
 * rule sits in one place, applied to the answer and nowhere else: what is written, the
 * events it fires and the status and headers stay the same whatever the key's scopes.
 * An Idempotency-Key replay answers the stored first answer, which was made for the same
 * API key (src/idempotency/middleware.ts), and a key's scopes never change: it is filtered too.
 */
export const readsContacts = (caller: Pick<Caller, "scopes">) => caller.scopes.includes("contacts:read");

/** A contact write's receipt: its id, version (docs/api.md §18.1) and times. */
export function contactReceipt(contact: Contact): ContactReceipt {
  return { contactId: contact.contactId, version: contact.version, createdAt: contact.createdAt, updatedAt: contact.updatedAt };
}

/**
 * The answer to a contact write (POST, PATCH; PUT, merge and restore when they come): the
 * contact to a key that may read it, else its receipt.
 */
export function contactForCaller(caller: Pick<Caller, "scopes">, contact: Contact): Contact | ContactReceipt {
  return readsContacts(caller) ? contact : contactReceipt(contact);
}

/**
 * The answer to a replay of POST /contacts/{contactId}/interactions by its uniqueIdentifier:
 * the stored log to a key that may read contacts, else `{ id, contactId, createdAt }`. A log
 * the request just created comes back whole (the key sent it all), so it needs no filter.
 */
export function replayedLogForCaller(caller: Pick<Caller, "scopes">, log: InteractionLog): InteractionLog | InteractionLogReceipt {
  return readsContacts(caller) ? log : { id: log.id, contactId: log.contactId, createdAt: log.createdAt };
}
