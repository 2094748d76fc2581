import type { Generated, Insertable, Kysely, Selectable, Transaction } from "kysely";

/** Row types of db/*.sql, as Kysely sees them. */
export interface Database {
  settings: { name: string; value: string };
  projects: {
    id: string;
    name: string;
    contact_quota: number | null;
    rate_limit_per_minute: Generated<number>;
    contact_creates_per_hour: Generated<number>;
    default_region: Generated<string>;
    last_contact_number: Generated<number>;
    contact_count: Generated<number>;
    batch_items_per_hour: Generated<number>;
    created_at: string;
    updated_at: string;
  };
  api_keys: {
    id: string;
    project_id: string;
    name: string | null;
    key_hash: string;
    hint: string;
    scopes: string;
    expires_at: string | null;
    revoked_at: string | null;
    last_used_at: string | null;
    created_at: string;
  };
  contact_types: {
    id: string;
    project_id: string;
    name: string;
    category: string;
    is_default: number;
    created_at: string;
  };
  interaction_types: { id: string; project_id: string; name: string; created_at: string };
  custom_fields: {
    id: string;
    project_id: string;
    title: string;
    type: string;
    options: string | null;
    is_unique: Generated<number>;
    /** Set when archived in the console (docs/admin.md §3). */
    archived_at: string | null;
    created_at: string;
  };
  tags: { id: string; project_id: string; name: string; name_key: string; created_at: string };
  contacts: {
    id: Generated<number>;
    project_id: string;
    contact_number: number;
    identity_type: string;
    source: string | null;
    first_name: string | null;
    last_name: string | null;
    email: string | null;
    email_key: string | null;
    phone: string | null;
    phone_key: string | null;
    business_name: string | null;
    website: string | null;
    address: string;
    contact_type_id: string | null;
    subscribed: number;
    sms_subscribed: number;
    notes: string | null;
    custom_fields: string;
    version: Generated<number>;
    created_at: string;
    updated_at: string;
    /** In the trash since (docs/api.md §19.3); null for a live contact. */
    deleted_at: Generated<string | null>;
    /** A trashed contact's tag ids (JSON array), linked again on restore. */
    trashed_tags: Generated<string | null>;
    /** Merged away into this contact (docs/api.md §20.3): its row stays, in the trash, as a redirect. */
    merged_into: Generated<number | null>;
  };
  /** A live contact's name keys (docs/api.md §20.1); email and phone keys are the contacts' columns. */
  contact_name_keys: { project_id: string; key: string; contact_id: number };
  /** Keys two or more live contacts have shared, newest write first (docs/api.md §20.1). */
  duplicate_groups: { project_id: string; key: string; last_at: string };
  /** Merges, with what their undo needs for 30 days (docs/api.md §20.4). */
  merges: {
    id: string;
    project_id: string;
    survivor_id: number;
    merged_ids: string;
    snapshot: string | null;
    at: string;
    undo_until: string;
    undone_at: string | null;
  };
  /** The change log (docs/api.md §19.1). */
  changes: {
    project_id: string;
    seq: number;
    at: string;
    object: string;
    object_id: string;
    contact_id: number | null;
    action: string;
    changes: string | null;
    actor: string | null;
    request_id: string | null;
  };
  change_counters: { project_id: string; last_seq: Generated<number>; pruned_through: Generated<number> };
  contact_unique_values: { project_id: string; field_id: string; value: string; contact_id: number };
  contact_tags: { contact_id: number; tag_id: string; updated_at: string; contact_number: number };
  contact_search_terms: {
    project_id: string;
    term: string;
    contact_id: number;
    head: string;
    updated_at: string;
    contact_number: number;
    /** The contact's term bits (src/contacts/search/term-bits.ts): which prefixes its terms have. */
    term_bits_a: number;
    term_bits_b: number;
    term_bits_c: number;
    term_bits_d: number;
  };
  /** A word of the project's search terms by the keys one typo away finds it by (docs/api.md §11.6). */
  search_typo_keys: {
    project_id: string;
    key: string;
    word: string;
  };
  interaction_logs: {
    id: string;
    project_id: string;
    contact_id: number;
    interaction_type_id: string | null;
    note: string;
    fields: string;
    date: string;
    unique_identifier: string | null;
    created_at: string;
  };
  events: { id: string; project_id: string; type: string; body: string; created_at: string; seq: Generated<number | null> };
  webhooks: {
    id: string;
    project_id: string;
    url: string;
    events: string;
    description: string | null;
    status: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_until: string | null;
    consecutive_failures: Generated<number>;
    last_success_at: string | null;
    last_failure_reason: string | null;
    /** JSON filter (docs/webhooks.md §7), null for every event. */
    filter: Generated<string | null>;
    ordering: Generated<"none" | "per-contact">;
    created_at: string;
    updated_at: string;
  };
  deliveries: {
    id: string;
    event_id: string;
    webhook_id: string;
    status: string;
    attempts: Generated<number>;
    next_attempt_at: string;
    created_at: string;
    updated_at: string;
    /** PostgreSQL only (db/postgres/0001_init.sql): the node claim's end and owner (src/storage/postgres/claims.ts). */
    lease_until: Generated<string | null>;
    lease_owner: Generated<string | null>;
    /** The contact the event is about and the event's place in its order (docs/webhooks.md §7). */
    contact_id: Generated<number | null>;
    position: Generated<number | null>;
  };
  delivery_attempts: {
    id: string;
    delivery_id: string;
    webhook_id: string;
    event_id: string;
    attempt: number;
    at: string;
    status_code: number | null;
    duration_ms: number;
    error: string | null;
    response_snippet: string | null;
  };
  forms: {
    id: string;
    project_id: string;
    name: string;
    /** JSON array of field names: contact fields and custom-field ids. */
    fields: string;
    redirect_url: string | null;
    created_at: string;
  };
  form_submissions: {
    id: string;
    form_id: string;
    project_id: string;
    contact_id: number;
    /** JSON object: the submitted values by field name. */
    values: string;
    submitted_at: string;
  };
  /** PostgreSQL only: per-key token buckets shared by every node (src/storage/postgres/buckets.ts). */
  rate_limit_buckets: { key_id: string; name: string; capacity: number; tokens: number; updated_ms: number };
  idempotency_records: {
    api_key_id: string;
    key: string;
    method: string;
    path: string;
    body_hash: string;
    status: number;
    response_body: string;
    headers: string;
    created_at: string;
  };
  admins: { id: string; email: string; email_key: string; password_hash: string; created_at: string; updated_at: string };
  admin_sessions: { id: string; admin_id: string; csrf_token: string; created_at: string; last_seen_at: string };
  /** Console sign-in tries per `email:<key>` or `address:<ip>` (src/admin/lockout.ts). */
  admin_sign_in_attempts: { subject: string; window_start: string; attempts: number; locked_until: string | null };
  admin_setup_tokens: { token_hash: string; expires_at: string; used_at: string | null };
  erased_contacts: { project_id: string; contact_number: number; erased_at: string };
  admin_import_uploads: { id: string; project_id: string; file_name: string; body: Uint8Array; created_at: string };
  admin_imports: {
    id: string;
    project_id: string;
    file_name: string;
    status: "running" | "done" | "failed";
    bytes_total: number;
    bytes_read: Generated<number>;
    rows_read: Generated<number>;
    created: Generated<number>;
    skipped_count: Generated<number>;
    /** JSON array of { row, reason, fieldName? }. */
    skipped: Generated<string>;
    /** Rows whose every cell was empty (docs/import-export.md §1.1). */
    blank_rows: Generated<number>;
    /** The rejected rows as a CSV to fix and import again, for 7 days (docs/import-export.md §1.11). */
    rejected_csv: string | null;
    error: string | null;
    created_at: string;
    updated_at: string;
  };
}

/** What repositories take first: the database or an open transaction (style: Kysely example). */
export type Db = Kysely<Database> | Transaction<Database>;

export type ContactRow = Selectable<Database["contacts"]>;
export type NewContactRow = Insertable<Database["contacts"]>;
export type ProjectRow = Selectable<Database["projects"]>;
export type ContactTypeRow = Selectable<Database["contact_types"]>;
export type WebhookRow = Selectable<Database["webhooks"]>;
export type ApiKeyRow = Selectable<Database["api_keys"]>;
export type FormRow = Selectable<Database["forms"]>;
