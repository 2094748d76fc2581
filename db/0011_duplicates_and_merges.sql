-- Duplicates and merge, with undo (docs/api.md §20).

-- A merged-away contact keeps its row (its number stays reserved, GET answers 308 to the
-- survivor) with deleted_at set, so everything that skips the trash skips it too.
ALTER TABLE contacts ADD COLUMN merged_into INTEGER;
CREATE INDEX contacts_merged_into ON contacts(merged_into) WHERE merged_into IS NOT NULL;
-- The trash's purge passes merged-away contacts by (they stay as redirects): its own index.
CREATE INDEX contacts_trash_purge ON contacts(deleted_at) WHERE deleted_at IS NOT NULL AND merged_into IS NULL;

-- A live contact's name keys (folded full name with its folded businessName, or with its
-- email domain): the email and phone keys are the contacts' own indexed columns.
CREATE TABLE contact_name_keys (
  project_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  contact_id INTEGER NOT NULL,
  PRIMARY KEY (project_id, key, contact_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX contact_name_keys_contact ON contact_name_keys(contact_id);

-- Keys two or more live contacts have shared, with the time of the last write to one of
-- them: GET /duplicates reads them newest first (a key left with one member is skipped).
CREATE TABLE duplicate_groups (
  project_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  last_at    TEXT NOT NULL,
  PRIMARY KEY (project_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX duplicate_groups_recent ON duplicate_groups(project_id, last_at, key);

-- One row per merge: what undo needs for 30 days (the survivor before and after, the logs
-- that moved), then only the row (undo answers 410).
CREATE TABLE merges (
  id           TEXT PRIMARY KEY,
  project_id   TEXT NOT NULL,
  survivor_id  INTEGER NOT NULL,
  merged_ids   TEXT NOT NULL,
  snapshot     TEXT,
  at           TEXT NOT NULL,
  undo_until   TEXT NOT NULL,
  undone_at    TEXT
) STRICT;
CREATE INDEX merges_survivor ON merges(survivor_id);
CREATE INDEX merges_age ON merges(undo_until) WHERE snapshot IS NOT NULL;

-- Contacts written before this upgrade get their keys from a job, a few hundred at a time
-- (src/duplicates/backfill.ts); this is where it starts.
INSERT INTO settings (name, value) SELECT 'duplicates_backfill_until', CAST(max(id) AS TEXT) FROM contacts HAVING max(id) IS NOT NULL;
