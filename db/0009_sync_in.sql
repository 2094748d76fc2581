-- Syncing in (docs/api.md §18): contact versions, unique custom fields as match keys, and
-- the per-key bucket of batch items.

-- version: 1 at creation, +1 on every change; the ETag and If-Match of docs/api.md §18.1.
ALTER TABLE contacts ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- A text custom field declared unique when it is created (docs/api.md §18.3).
ALTER TABLE custom_fields ADD COLUMN is_unique INTEGER NOT NULL DEFAULT 0;

-- The hourly bucket of batch items per key (docs/api.md §18.4).
ALTER TABLE projects ADD COLUMN batch_items_per_hour INTEGER NOT NULL DEFAULT 60000;

-- One row per contact and unique custom field it holds a value of: the primary key refuses
-- a second contact with the same trimmed value, races between requests and nodes included,
-- and finds the contact an upsert matches on.
CREATE TABLE contact_unique_values (
  project_id TEXT NOT NULL,
  field_id   TEXT NOT NULL REFERENCES custom_fields(id),
  value      TEXT NOT NULL,
  contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  PRIMARY KEY (project_id, field_id, value)
) STRICT, WITHOUT ROWID;
CREATE INDEX contact_unique_values_contact ON contact_unique_values(contact_id);
