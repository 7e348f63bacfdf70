-- 029: runs of separators in the search index (issue 14: scale). A search text with no letter or digit (`%`, `§`,
-- `€`, `--`) has no word to look up, and was answered by scanning every text: 9.9 s at 10M answers for `%`. Every
-- occurrence of such a text lies inside one run of separators (characters that are neither letters nor digits) of
-- the text searched, so the runs answer it exactly (register.ingest.search_index):
--   search_separators           the vocabulary of runs; a run of exactly one space, in nearly every text and inside
--                               no search text (searches are stripped), is left out. sep_id numbers it.
--   search_separator_postings   one row per (run, response revision) where the run stands in any of its texts;
--                               written sorted by run within each slice, as search_postings is by word.
--   search_index.separators_missing_through  the revisions with keys up to it are indexed without their runs
--                               (those indexed before this migration); the search uses the runs once it is 0, and
--                               ``python -m register search-index`` (or the next import) fills them in.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE search_separators (
    sep_id INTEGER NOT NULL,
    sep    VARCHAR NOT NULL
);

CREATE TABLE search_separator_postings (
    sep_id       INTEGER NOT NULL,
    response_key BIGINT NOT NULL
);

ALTER TABLE search_index ADD COLUMN separators_missing_through BIGINT NOT NULL DEFAULT 0;

UPDATE search_index SET separators_missing_through = indexed_through;
