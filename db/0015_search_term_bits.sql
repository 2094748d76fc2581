-- Two search words at once (docs/performance.md "Two words"): each term row carries its
-- contact's term bits (src/contacts/search/term-bits.ts), so a search of several words tests
-- the other words on the row it walks. The new table gets every row of contact_search_terms
-- with its bits in this migration's step (src/storage/term-bits-step.ts), which then drops
-- the old table, renames this one and makes its indexes:
--   contact_search_terms_walk    (project_id, head, updated_at, contact_number, term, term_bits_a, term_bits_b)
--   contact_search_terms_contact (contact_id, term)
-- The bits at the walk index's end let a walk test them without reading the row.
CREATE TABLE contact_search_terms_with_bits (
  project_id     TEXT NOT NULL,
  term           TEXT NOT NULL,
  contact_id     INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  head           TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  contact_number INTEGER NOT NULL,
  -- -1 (every bit set) matches every word: a row whose bits are unknown is never left out.
  term_bits_a    INTEGER NOT NULL DEFAULT -1,
  term_bits_b    INTEGER NOT NULL DEFAULT -1,
  PRIMARY KEY (project_id, term, contact_id)
) STRICT, WITHOUT ROWID;
