-- Pair terms (docs/performance.md "Two words: pair terms"): every contact with search terms
-- also gets a term for each two of its terms' 3-character heads, under a marker no text term
-- starts with, so a search of two words reads the few contacts that have both heads. No
-- schema changes: this migration's step (src/storage/pair-terms-step.ts) writes the pair
-- rows of the contacts already stored, from their term rows; new writes make them
-- (src/contacts/search/pair-terms.ts).
SELECT 1;
