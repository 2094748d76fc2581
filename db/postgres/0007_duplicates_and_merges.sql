-- Duplicates and merge, with undo (docs/api.md §20), as db/0011_duplicates_and_merges.sql.
ALTER TABLE contacts ADD COLUMN merged_into bigint;
CREATE INDEX contacts_merged_into ON contacts(merged_into) WHERE merged_into IS NOT NULL;
-- The trash's purge passes merged-away contacts by (they stay as redirects): its own index.
CREATE INDEX contacts_trash_purge ON contacts(deleted_at) WHERE deleted_at IS NOT NULL AND merged_into IS NULL;

CREATE TABLE contact_name_keys (
  project_id text COLLATE "C" NOT NULL,
  key        text COLLATE "C" NOT NULL,
  contact_id bigint NOT NULL,
  PRIMARY KEY (project_id, key, contact_id)
);
CREATE INDEX contact_name_keys_contact ON contact_name_keys(contact_id);

CREATE TABLE duplicate_groups (
  project_id text COLLATE "C" NOT NULL,
  key        text COLLATE "C" NOT NULL,
  last_at    text COLLATE "C" NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX duplicate_groups_recent ON duplicate_groups(project_id, last_at, key);

CREATE TABLE merges (
  id           text COLLATE "C" PRIMARY KEY,
  project_id   text COLLATE "C" NOT NULL,
  survivor_id  bigint NOT NULL,
  merged_ids   text COLLATE "C" NOT NULL,
  snapshot     text COLLATE "C",
  at           text COLLATE "C" NOT NULL,
  undo_until   text COLLATE "C" NOT NULL,
  undone_at    text COLLATE "C"
);
CREATE INDEX merges_survivor ON merges(survivor_id);
CREATE INDEX merges_age ON merges(undo_until) WHERE snapshot IS NOT NULL;

-- Contacts written before this upgrade get their keys from a job, a few hundred at a time
-- (src/duplicates/backfill.ts); this is where it starts.
INSERT INTO settings (name, value) SELECT 'duplicates_backfill_until', max(id)::text FROM contacts HAVING max(id) IS NOT NULL;
