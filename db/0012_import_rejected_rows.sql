-- The console's imports keep their blank rows' count and, for a while, their rejected rows
-- as a CSV to download and fix (docs/import-export.md §1.11): the file's header, the
-- rejected rows' cells and an `error` column, at most 1,000 rows and 2 MiB. Cleared to NULL
-- 7 days after the import ends, or when the admin deletes it from the import's page.
ALTER TABLE admin_imports ADD COLUMN blank_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE admin_imports ADD COLUMN rejected_csv TEXT;
-- The retention job finds the imports whose rejected rows are due to go.
CREATE INDEX admin_imports_rejected ON admin_imports(updated_at) WHERE rejected_csv IS NOT NULL;
