-- 027: word pairs in the search index (issue 14: scale). A search for two words with one space between them
-- (`notice period`) read every candidate's texts to check that the words stand together: 2 s at 10M answers for
-- a phrase in a tenth of them. The pairs of adjacent words that stand exactly one space apart in one text (a
-- question, an answer or a claim) answer it from the postings alone (register.ingest.search_index):
--   search_pairs          the pair vocabulary: first_id and second_id are search_words numbers; pair_id numbers it.
--   search_pair_postings  one row per (pair, response revision) where the pair stands in any of its texts;
--                         written sorted by pair within each slice, as search_postings is by word.
--   search_index.pairs_missing_through  the revisions with keys up to it have their words indexed but not yet their
--                         pairs (those indexed before this migration); the search uses pairs once it is 0, and
--                         ``python -m register search-index`` (or the next import) fills them in.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE search_pairs (
    pair_id   INTEGER NOT NULL,
    first_id  INTEGER NOT NULL,
    second_id INTEGER NOT NULL
);

CREATE TABLE search_pair_postings (
    pair_id      INTEGER NOT NULL,
    response_key BIGINT NOT NULL
);

ALTER TABLE search_index ADD COLUMN pairs_missing_through BIGINT NOT NULL DEFAULT 0;

UPDATE search_index SET pairs_missing_through = indexed_through;
