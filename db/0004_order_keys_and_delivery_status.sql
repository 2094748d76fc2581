-- Brings every database to one schema, whichever text of 0001_init and 0002_webhooks made
-- it. Those two files were edited after release (order keys copied onto tag and term rows,
-- the term head, an index of attempts by delivery, deliveries without 'in_flight'); they
-- are back to their released text and the changes live here. Each table is rebuilt from
-- the columns every version of it has, so a database made by the released files, by an
-- intermediate edit or by the edited files ends exactly like a fresh one.
--
-- SQLite's procedure for changes ALTER TABLE cannot make
-- (https://www.sqlite.org/lang_altertable.html#otheralter): the migration runner turns
-- foreign keys off outside the transaction, runs this file in one IMMEDIATE transaction,
-- runs `PRAGMA foreign_key_check` before the COMMIT and turns foreign keys back on. With
-- them off, dropping `deliveries` does not cascade to delivery_attempts: no attempt is lost.

-- Tags and search terms carry copies of their contact's order keys (updated_at,
-- contact_number), kept in step in the same transaction, so a tag filter or a search
-- walks an index already in list order instead of sorting every match (decisions §5).
CREATE TABLE new_contact_tags (
  contact_id     INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  tag_id         TEXT NOT NULL REFERENCES tags(id),
  updated_at     TEXT NOT NULL,
  contact_number INTEGER NOT NULL,
  PRIMARY KEY (contact_id, tag_id)
) STRICT, WITHOUT ROWID;
INSERT INTO new_contact_tags (contact_id, tag_id, updated_at, contact_number)
  SELECT t.contact_id, t.tag_id, c.updated_at, c.contact_number
  FROM contact_tags AS t JOIN contacts AS c ON c.id = t.contact_id;
DROP TABLE contact_tags;
ALTER TABLE new_contact_tags RENAME TO contact_tags;
CREATE INDEX contact_tags_recent ON contact_tags(tag_id, updated_at, contact_number);

-- Word-prefix search: one row per searchable term of a contact, so `search` is an index
-- range scan, never a table scan. `head` is the term's first three characters: a dense
-- prefix walks contact_search_terms_walk in list order; a rare one takes its term range
-- from the primary key and sorts the few matches. substr() counts characters (code
-- points) of TEXT, as the application's termHead does.
CREATE TABLE new_contact_search_terms (
  project_id     TEXT NOT NULL,
  term           TEXT NOT NULL,
  contact_id     INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  head           TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  contact_number INTEGER NOT NULL,
  PRIMARY KEY (project_id, term, contact_id)
) STRICT, WITHOUT ROWID;
INSERT INTO new_contact_search_terms (project_id, term, contact_id, head, updated_at, contact_number)
  SELECT s.project_id, s.term, s.contact_id, substr(s.term, 1, 3), c.updated_at, c.contact_number
  FROM contact_search_terms AS s JOIN contacts AS c ON c.id = s.contact_id;
DROP TABLE contact_search_terms;
ALTER TABLE new_contact_search_terms RENAME TO contact_search_terms;
CREATE INDEX contact_search_terms_walk ON contact_search_terms(project_id, head, updated_at, contact_number, term);
CREATE INDEX contact_search_terms_contact ON contact_search_terms(contact_id, term);

-- A delivery stays `pending` while it is being sent (claims are in the dispatcher's
-- memory), so a killed process drops none. One left `in_flight` by a version that had
-- that state is pending again, as that version's own start-up would have made it.
CREATE TABLE new_deliveries (
  id              TEXT PRIMARY KEY,
  event_id        TEXT NOT NULL REFERENCES events(id) ON DELETE CASCADE,
  webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
) STRICT;
INSERT INTO new_deliveries (id, event_id, webhook_id, status, attempts, next_attempt_at, created_at, updated_at)
  SELECT id, event_id, webhook_id, CASE status WHEN 'in_flight' THEN 'pending' ELSE status END,
         attempts, next_attempt_at, created_at, updated_at
  FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE new_deliveries RENAME TO deliveries;
CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
CREATE INDEX deliveries_webhook ON deliveries(webhook_id, status);
CREATE INDEX deliveries_event ON deliveries(event_id);

-- Foreign-key children need their own index, or deleting a parent scans the table per row.
DROP INDEX IF EXISTS delivery_attempts_delivery;
CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id);
