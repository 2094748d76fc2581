/**
 * Duplicates and merging (docs/api.md §20): `duplicates` walks every group of
 * `GET /duplicates`, following its cursors; `merge` and `undoMerge` call
 * `POST /contacts/{contactId}/merge` and `POST /merges/{mergeId}/undo` and answer their
 * bodies, or throw `CrmApiError` (409 ERR_CONTACT_MERGED carries `mergedInto`, the contactId
 * the contact was merged into).
 */
import type { Client } from "openapi-fetch";
import { CrmApiError } from "./errors.js";
import { paginator } from "./paginate.js";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];

/** Contacts that share an email, a phone, or a full name with a businessName or email domain (docs/api.md §20.1). */
export type DuplicateGroup = Schemas["DuplicateGroup"];
/** `merge`'s answer: the surviving contact (or its receipt) and `merge: { id, mergedContactIds, at, undoUntil }`. */
export type MergeResult = Schemas["MergeResult"];
/** `undoMerge`'s answer: the survivor, the contacts restored, and the merge with `undoneAt`. */
export type UndoMergeResult = Schemas["UndoMergeResult"];

/** What a merge's `fields` may choose (docs/api.md §20.2): a contact field, `tags`, `customFields`, or one custom field by id. */
export type MergeField =
  | "firstName"
  | "lastName"
  | "email"
  | "phone"
  | "businessName"
  | "website"
  | "address"
  | "contactType"
  | "contactTypeId"
  | "notes"
  | "identityType"
  | "source"
  | "subscribed"
  | "smsSubscribed"
  | "tags"
  | "customFields"
  | `customFields.${string}`;

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

type Post = (path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** Builds the client's `duplicates`, `merge` and `undoMerge` over an openapi-fetch client. */
export function mergeHelpers(client: Client<paths>) {
  const paginate = paginator(client);
  const post = client.POST as unknown as Post;

  const headersOf = (idempotencyKey: string | undefined) => (idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey });

  async function send<T>(path: string, init: object): Promise<T> {
    const { data, error, response } = await post(path, init);
    if (error !== undefined || !response.ok || data === undefined) throw new CrmApiError(error, response);
    return data as T;
  }

  /** Every group of `GET /duplicates` (docs/api.md §20.1), the most recently written first, page after page. */
  function duplicates(options: DuplicatesOptions = {}): AsyncIterable<DuplicateGroup> {
    const query = options.limit === undefined ? {} : { limit: options.limit };
    return paginate("/duplicates", { params: { query }, signal: options.signal });
  }

  /** `POST /contacts/{survivorId}/merge` (docs/api.md §20.2): `contactIds` (1 to 10) merged into `survivorId`. */
  function merge(survivorId: string, contactIds: readonly string[], options: MergeOptions = {}): Promise<MergeResult> {
    const { fields, dryRun, idempotencyKey, signal } = options;
    const body = { contactIds: [...contactIds], ...(fields === undefined ? {} : { fields }), ...(dryRun === undefined ? {} : { dryRun }) };
    return send<MergeResult>("/contacts/{contactId}/merge", { params: { path: { contactId: survivorId } }, body, headers: headersOf(idempotencyKey), signal });
  }

  /** `POST /merges/{mergeId}/undo` (docs/api.md §20.4), within 30 days of the merge. */
  function undoMerge(mergeId: string, options: UndoMergeOptions = {}): Promise<UndoMergeResult> {
    return send<UndoMergeResult>("/merges/{mergeId}/undo", { params: { path: { mergeId } }, headers: headersOf(options.idempotencyKey), signal: options.signal });
  }

  return { duplicates, merge, undoMerge };
}
