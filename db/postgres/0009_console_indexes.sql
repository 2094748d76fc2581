-- The console's reads (docs/admin.md §3): the contacts list sorted by creation,
-- the home page's 30-day charts (created records of the change log) and its 24-hour webhook
-- health. No index serves the name sort here: an expression index over the names slowed
-- imports' writes on PostgreSQL enough to miss the shutdown's 10 s (measured), and sorting one
-- project's contacts by name for a console page is cheap enough.
CREATE INDEX contacts_created ON contacts (project_id, created_at DESC, contact_number DESC);
CREATE INDEX changes_created ON changes (project_id, at, object) WHERE action = 'created';
CREATE INDEX delivery_attempts_outcome ON delivery_attempts (webhook_id, at, status_code);
-- Whether an interaction type is in use (the console's delete, docs/admin.md §3) without reading every log.
CREATE INDEX interaction_logs_type ON interaction_logs (interaction_type_id) WHERE interaction_type_id IS NOT NULL;
-- A custom field archived in the console (docs/admin.md §3): kept with its values, no longer offered.
ALTER TABLE custom_fields ADD COLUMN archived_at text COLLATE "C";
