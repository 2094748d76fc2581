-- Two search words at once (docs/performance.md "Two words"): each term row carries its
-- contact's term bits (src/contacts/search/term-bits.ts), so a search of several words tests
-- the other words on the row it walks. The new table gets every row of contact_search_terms
-- with its bits in this migration's step (src/storage/term-bits-step.ts), which then drops
-- the old table, renames this one (and its constraints) and makes its indexes:
--   contact_search_terms_walk    (project_id, head, updated_at, contact_number, term) INCLUDE (contact_id, term_bits_a, term_bits_b)
--   contact_search_terms_contact (contact_id, term)
-- The walk index holds every column a walk reads: the walk is index-only.
CREATE TABLE contact_search_terms_with_bits (
  project_id     text COLLATE "C" NOT NULL,
  term           text COLLATE "C" NOT NULL,
  contact_id     bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
  head           text COLLATE "C" NOT NULL,
  updated_at     text COLLATE "C" NOT NULL,
  contact_number bigint NOT NULL,
  -- -1 (every bit set) matches every word: a row whose bits are unknown is never left out.
  term_bits_a    bigint NOT NULL DEFAULT -1,
  term_bits_b    bigint NOT NULL DEFAULT -1,
  PRIMARY KEY (project_id, term, contact_id)
);
