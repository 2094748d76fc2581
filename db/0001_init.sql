-- Core schema: projects, keys, reference data, contacts, interaction logs, events,
-- idempotency records. Forward-only; STRICT tables (decisions §11). Times are ISO 8601
-- UTC strings with milliseconds, so text order is time order.

CREATE TABLE settings (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE projects (
  id                       TEXT PRIMARY KEY,
  name                     TEXT NOT NULL,
  contact_quota            INTEGER,
  rate_limit_per_minute    INTEGER NOT NULL DEFAULT 120,
  contact_creates_per_hour INTEGER NOT NULL DEFAULT 600,
  default_region           TEXT NOT NULL DEFAULT 'US',
  last_contact_number      INTEGER NOT NULL DEFAULT 0,
  contact_count            INTEGER NOT NULL DEFAULT 0,
  created_at               TEXT NOT NULL,
  updated_at               TEXT NOT NULL
) STRICT;

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL REFERENCES projects(id),
  name         TEXT,
  key_hash     TEXT NOT NULL UNIQUE,
  hint         TEXT NOT NULL,
  scopes       TEXT NOT NULL,
  expires_at   TEXT,
  revoked_at   TEXT,
  last_used_at TEXT,
  created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX api_keys_project ON api_keys(project_id);

CREATE TABLE contact_types (
  id         TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  name       TEXT NOT NULL,
  category   TEXT NOT NULL CHECK (category IN ('Lead', 'Customer', 'Personnel', 'Other')),
  is_default INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX contact_types_project_name ON contact_types(project_id, name, id);

CREATE TABLE interaction_types (
  id         TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX interaction_types_project_name ON interaction_types(project_id, name, id);

CREATE TABLE custom_fields (
  id         TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  title      TEXT NOT NULL,
  type       TEXT NOT NULL,
  options    TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (project_id, title)
) STRICT;

CREATE TABLE tags (
  id         TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  name       TEXT NOT NULL,
  name_key   TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (project_id, name_key)
) STRICT;
CREATE INDEX tags_project_name ON tags(project_id, name, id);

CREATE TABLE contacts (
  id                  INTEGER PRIMARY KEY,
  project_id          TEXT NOT NULL REFERENCES projects(id),
  contact_number      INTEGER NOT NULL,
  identity_type       TEXT NOT NULL,
  source              TEXT,
  first_name          TEXT,
  last_name           TEXT,
  email               TEXT,
  email_key           TEXT,
  phone               TEXT,
  phone_key           TEXT,
  business_name       TEXT,
  website             TEXT,
  address             TEXT NOT NULL,
  contact_type_id     TEXT REFERENCES contact_types(id),
  subscribed          INTEGER NOT NULL DEFAULT 0,
  sms_subscribed      INTEGER NOT NULL DEFAULT 0,
  notes               TEXT,
  custom_fields       TEXT NOT NULL DEFAULT '{}',
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (project_id, contact_number)
) STRICT;
CREATE INDEX contacts_recent ON contacts(project_id, updated_at DESC, contact_number DESC);
CREATE INDEX contacts_email ON contacts(project_id, email_key) WHERE email_key IS NOT NULL;
CREATE INDEX contacts_phone ON contacts(project_id, phone_key) WHERE phone_key IS NOT NULL;
CREATE INDEX contacts_type ON contacts(contact_type_id, updated_at DESC, contact_number DESC);

CREATE TABLE contact_tags (
  contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  tag_id     TEXT NOT NULL REFERENCES tags(id),
  PRIMARY KEY (contact_id, tag_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX contact_tags_tag ON contact_tags(tag_id, contact_id);

-- Word-prefix search (decisions §5): one row per searchable term of a contact, kept in the
-- same transaction as the contact, so `search` is an index range scan, never a table scan.
CREATE TABLE contact_search_terms (
  project_id TEXT NOT NULL,
  term       TEXT NOT NULL,
  contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  PRIMARY KEY (project_id, term, contact_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id);

CREATE TABLE interaction_logs (
  id                  TEXT PRIMARY KEY,
  project_id          TEXT NOT NULL REFERENCES projects(id),
  contact_id          INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  interaction_type_id TEXT REFERENCES interaction_types(id),
  note                TEXT NOT NULL,
  fields              TEXT NOT NULL,
  date                TEXT NOT NULL,
  unique_identifier   TEXT,
  created_at          TEXT NOT NULL,
  UNIQUE (contact_id, unique_identifier)
) STRICT;
CREATE INDEX interaction_logs_timeline ON interaction_logs(contact_id, date DESC, id DESC);

-- The transactional outbox's source (decisions §7): the body is serialised once, here.
CREATE TABLE events (
  id         TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id),
  type       TEXT NOT NULL,
  body       TEXT NOT NULL,
  created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_project_time ON events(project_id, created_at, id);

-- Idempotency-Key records (decisions §5), written in the request's own transaction.
CREATE TABLE idempotency_records (
  api_key_id    TEXT NOT NULL,
  key           TEXT NOT NULL,
  method        TEXT NOT NULL,
  path          TEXT NOT NULL,
  body_hash     TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  headers       TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  PRIMARY KEY (api_key_id, key)
) STRICT;
CREATE INDEX idempotency_records_age ON idempotency_records(created_at);
