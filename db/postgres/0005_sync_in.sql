-- Syncing in (docs/api.md §18), as db/0009_sync_in.sql: contact versions, unique custom
-- fields as match keys, and the per-key bucket of batch items.
ALTER TABLE contacts ADD COLUMN version integer NOT NULL DEFAULT 1;
ALTER TABLE custom_fields ADD COLUMN is_unique integer NOT NULL DEFAULT 0;
ALTER TABLE projects ADD COLUMN batch_items_per_hour integer NOT NULL DEFAULT 60000;

CREATE TABLE contact_unique_values (
  project_id text COLLATE "C" NOT NULL,
  field_id   text COLLATE "C" NOT NULL REFERENCES custom_fields(id),
  value      text COLLATE "C" NOT NULL,
  contact_id bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  PRIMARY KEY (project_id, field_id, value)
);
CREATE INDEX contact_unique_values_contact ON contact_unique_values(contact_id);
