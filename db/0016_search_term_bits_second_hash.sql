-- A second hash of each term's 3-character prefix (docs/performance.md "Two words: a second
-- hash"): a 3-letter search word tested one bit of 104, which about one row in eleven of
-- the other words' passed (each bit is shared by some 160 prefixes: "mar", "ram" and "jea"
-- all set bit 19). Two new columns carry the second hash, so such a word tests two bits and
-- about one row in two hundred passes. The new table gets every row of contact_search_terms
-- with all four columns of its contact's bits in this migration's step
-- (src/storage/term-bits-step.ts), which then drops the old table, renames this one and makes
-- its indexes:
--   contact_search_terms_walk    (project_id, head, updated_at, contact_number, term, term_bits_a, term_bits_b, term_bits_c, term_bits_d)
--   contact_search_terms_contact (contact_id, term)
CREATE TABLE contact_search_terms_with_bits (
  project_id     TEXT NOT NULL,
  term           TEXT NOT NULL,
  contact_id     INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  head           TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  contact_number INTEGER NOT NULL,
  -- -1 (every bit set) matches every word: a row written by a node of an earlier version,
  -- which knows only a and b, gets -1 in c and d and is never left out.
  term_bits_a    INTEGER NOT NULL DEFAULT -1,
  term_bits_b    INTEGER NOT NULL DEFAULT -1,
  term_bits_c    INTEGER NOT NULL DEFAULT -1,
  term_bits_d    INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (project_id, term, contact_id)
) STRICT, WITHOUT ROWID;
