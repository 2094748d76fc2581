-- Search that finds people (docs/api.md §11.6): terms are folded (accents and case), carry
-- the email's parts and the phone's digits; search_typo_keys finds a project's words one typo
-- away: each word under itself and under every string one deletion away. The terms of
-- existing contacts are rebuilt by this migration's step (src/storage/search-rebuild.ts).
CREATE TABLE search_typo_keys (
  project_id TEXT NOT NULL,
  key        TEXT NOT NULL,
  word       TEXT NOT NULL,
  PRIMARY KEY (project_id, key, word)
) STRICT, WITHOUT ROWID;
