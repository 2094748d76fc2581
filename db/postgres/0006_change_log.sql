-- Syncing out (docs/api.md §19), as db/0010_change_log.sql: the change log, the trash, and
-- filtered, ordered webhooks.
CREATE TABLE changes (
  project_id text COLLATE "C" NOT NULL,
  seq        bigint NOT NULL,
  at         text COLLATE "C" NOT NULL,
  object     text COLLATE "C" NOT NULL,
  object_id  text COLLATE "C" NOT NULL,
  contact_id bigint,
  action     text COLLATE "C" NOT NULL,
  changes    text COLLATE "C",
  actor      text COLLATE "C",
  request_id text COLLATE "C",
  PRIMARY KEY (project_id, seq)
);
CREATE INDEX changes_contact ON changes(contact_id, seq) WHERE contact_id IS NOT NULL;
CREATE INDEX changes_age ON changes(at);

-- Taken with INSERT … ON CONFLICT DO UPDATE … RETURNING at the end of a writing transaction: the row lock is held to
-- the commit, so seq n+1 is given only once n committed (docs/scaling.md §8).
CREATE TABLE change_counters (
  project_id     text COLLATE "C" PRIMARY KEY,
  last_seq       bigint NOT NULL DEFAULT 0,
  pruned_through bigint NOT NULL DEFAULT 0
);

ALTER TABLE contacts ADD COLUMN deleted_at text COLLATE "C";
ALTER TABLE contacts ADD COLUMN trashed_tags text COLLATE "C";
CREATE INDEX contacts_trash ON contacts(deleted_at) WHERE deleted_at IS NOT NULL;

ALTER TABLE events ADD COLUMN seq bigint;
ALTER TABLE deliveries ADD COLUMN contact_id bigint;
ALTER TABLE deliveries ADD COLUMN position bigint;
CREATE INDEX deliveries_contact_order ON deliveries(webhook_id, contact_id, position) WHERE contact_id IS NOT NULL AND status = 'pending';

ALTER TABLE webhooks ADD COLUMN filter text COLLATE "C";
ALTER TABLE webhooks ADD COLUMN ordering text COLLATE "C" NOT NULL DEFAULT 'none' CHECK (ordering IN ('none', 'per-contact'));
