-- Erasure and the console's import preview (decisions §17).

-- The numbers of erased contacts: a create never takes one (the project's counter only
-- grows), and a relabel (PATCH contactId) is refused one as if it were in use.
CREATE TABLE erased_contacts (
  project_id     TEXT NOT NULL REFERENCES projects(id),
  contact_number INTEGER NOT NULL,
  erased_at      TEXT NOT NULL,
  PRIMARY KEY (project_id, contact_number)
) STRICT, WITHOUT ROWID;

-- A CSV uploaded in the console whose matched columns are shown before it runs: kept
-- until it is started (then it becomes an admin_imports row) or for an hour at most.
CREATE TABLE admin_import_uploads (
  id          TEXT PRIMARY KEY,
  project_id  TEXT NOT NULL REFERENCES projects(id),
  file_name   TEXT NOT NULL,
  body        BLOB NOT NULL,
  created_at  TEXT NOT NULL
) STRICT;
CREATE INDEX admin_import_uploads_age ON admin_import_uploads(created_at);
