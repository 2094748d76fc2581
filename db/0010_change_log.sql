-- Syncing out (docs/api.md §19): the change log, the trash, and filtered, ordered webhooks.

-- One row per change (docs/api.md §19.1): seq per project from 1 without gaps, given at the
-- end of the writing unit from change_counters (src/changes/record.ts).
CREATE TABLE changes (
  project_id TEXT NOT NULL,
  seq        INTEGER NOT NULL,
  at         TEXT NOT NULL,
  object     TEXT NOT NULL,
  object_id  TEXT NOT NULL,
  -- The contact's internal id: its history follows it across relabels (null once erased).
  contact_id INTEGER,
  action     TEXT NOT NULL,
  changes    TEXT,
  actor      TEXT,
  request_id TEXT,
  PRIMARY KEY (project_id, seq)
) STRICT, WITHOUT ROWID;
CREATE INDEX changes_contact ON changes(contact_id, seq) WHERE contact_id IS NOT NULL;
CREATE INDEX changes_age ON changes(at);

-- The last seq given per project, and the last one pruned by retention (a cursor before it is 410).
CREATE TABLE change_counters (
  project_id     TEXT PRIMARY KEY,
  last_seq       INTEGER NOT NULL DEFAULT 0,
  pruned_through INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The trash (docs/api.md §19.3): a deleted contact keeps its row, answers 404, and is
-- restored or purged; its tag links wait here while its tag and search rows are gone.
ALTER TABLE contacts ADD COLUMN deleted_at TEXT;
ALTER TABLE contacts ADD COLUMN trashed_tags TEXT;
CREATE INDEX contacts_trash ON contacts(deleted_at) WHERE deleted_at IS NOT NULL;

-- Events carry the seq of the change they tell of; deliveries the contact and its order
-- (docs/webhooks.md §8: ordering "per-contact").
ALTER TABLE events ADD COLUMN seq INTEGER;
ALTER TABLE deliveries ADD COLUMN contact_id INTEGER;
ALTER TABLE deliveries ADD COLUMN position INTEGER;
CREATE INDEX deliveries_contact_order ON deliveries(webhook_id, contact_id, position) WHERE contact_id IS NOT NULL AND status = 'pending';

-- A subscription's filter (JSON, null: every event) and delivery order.
ALTER TABLE webhooks ADD COLUMN filter TEXT;
ALTER TABLE webhooks ADD COLUMN ordering TEXT NOT NULL DEFAULT 'none';
