-- A second hash of each term's 3-character prefix (docs/performance.md "Two words: a second
-- hash"), as SQLite's 0016_search_term_bits_second_hash: two new columns of bits, so a
-- 3-letter search word tests two bits rather than one. The new table gets every row of
-- contact_search_terms with all four columns of its contact's bits in this migration's step
-- (src/storage/term-bits-step.ts), which then drops the old table, renames this one and
-- makes its keys and indexes after the copy, each built once by the sorter:
--   contact_search_terms_pkey         (project_id, term, contact_id) INCLUDE (updated_at, contact_number, term_bits_a, term_bits_b, term_bits_c, term_bits_d)
--   contact_search_terms_contact_id_fkey
--   contact_search_terms_walk         (project_id, head, updated_at, contact_number, term) INCLUDE (contact_id, term_bits_a, term_bits_b, term_bits_c, term_bits_d)
--   contact_search_terms_contact      (contact_id, term)
CREATE TABLE contact_search_terms_with_bits (
  project_id     text COLLATE "C" NOT NULL,
  term           text COLLATE "C" NOT NULL,
  contact_id     bigint NOT NULL,
  head           text COLLATE "C" NOT NULL,
  updated_at     text COLLATE "C" NOT NULL,
  contact_number bigint NOT NULL,
  -- -1 (every bit set) matches every word: a row written by a node of an earlier version,
  -- which knows only a and b, gets -1 in c and d and is never left out.
  term_bits_a    bigint NOT NULL DEFAULT -1,
  term_bits_b    bigint NOT NULL DEFAULT -1,
  term_bits_c    bigint NOT NULL DEFAULT -1,
  term_bits_d    bigint NOT NULL DEFAULT -1
);
