/**
 * Duplicates and merging (docs/api.md §20): `duplicates` walks every group of
 * `GET /duplicates`, following its cursors; `merge` and `undoMerge` call
 * `POST /contacts/{contactId}/merge` and `POST /merges/{mergeId}/undo` and answer their
 * bodies, or throw `CrmApiError` (409 ERR_CONTACT_MERGED carries `mergedInto`, the contactId
 * the contact was merged into).
 */
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
type Schemas = components["schemas"];
/** Contacts that share an email, a phone, or a full name with a businessName or email domain (docs/api.md §20.1). */
export type DuplicateGroup = Schemas["DuplicateGroup"];
/** `merge`'s answer: the surviving contact (or its receipt) and `merge: { id, mergedContactIds, at, undoUntil }`. */
export type MergeResult = Schemas["MergeResult"];
/** `undoMerge`'s answer: the survivor, the contacts restored, and the merge with `undoneAt`. */
export type UndoMergeResult = Schemas["UndoMergeResult"];
/** What a merge's `fields` may choose (docs/api.md §20.2): a contact field, `tags`, `customFields`, or one custom field by id. */
export type MergeField = "firstName" | "lastName" | "email" | "phone" | "businessName" | "website" | "address" | "contactType" | "contactTypeId" | "notes" | "identityType" | "source" | "subscribed" | "smsSubscribed" | "tags" | "customFields" | `customFields.${string}`;
export interface DuplicatesOptions {
    /** Groups per request, 1 to 200 (default: the service's, 50). */
    limit?: number;
    signal?: AbortSignal;
}
export interface MergeOptions {
    /** Per field, the contactId to take its value from: the survivor's or one of `contactIds` (`{ email: "CR-9" }`). */
    fields?: Partial<Record<MergeField, string>>;
    /** true: answer the contact the merge would make (`merge.id` and `undoUntil` null); nothing is written. */
    dryRun?: boolean;
    /** Sent as `Idempotency-Key` (default: a random UUID, the same on every retry of this call). */
    idempotencyKey?: string;
    signal?: AbortSignal;
}
export interface UndoMergeOptions {
    /** Sent as `Idempotency-Key` (default: a random UUID, the same on every retry of this call). */
    idempotencyKey?: string;
    signal?: AbortSignal;
}
/** Builds the client's `duplicates`, `merge` and `undoMerge` over an openapi-fetch client. */
export declare function mergeHelpers(client: Client<paths>): {
    duplicates: (options?: DuplicatesOptions) => AsyncIterable<DuplicateGroup>;
    merge: (survivorId: string, contactIds: readonly string[], options?: MergeOptions) => Promise<MergeResult>;
    undoMerge: (mergeId: string, options?: UndoMergeOptions) => Promise<UndoMergeResult>;
};
export {};
