-- 023: the search index (issue 14: scale): the words of every response revision's question, answer and claims,
-- so that the console's search reads the postings of a few words instead of scanning 10 million answers and
-- 60 million claims (7-21 s at 10M). register.ingest.search_index keeps and reads it:
--   search_words     the vocabulary, one row per distinct word (lower case, split at every character that is
--                    neither a letter nor a digit); word_id numbers it.
--   search_postings  one row per (word, response revision) where the word occurs in any of the three texts;
--                    written sorted by word within each slice, so that a word's rows sit in a few row groups and
--                    the scan of one word skips the others (DuckDB's zone maps).
--   search_index     one row: every response revision with a response_key up to indexed_through is indexed;
--                    the revisions above it are searched by a scan until the next catch-up indexes them.
-- The index starts empty: search scans everything (as before) until the first import or
-- ``python -m register search-index`` catches it up.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE search_words (
    word_id INTEGER NOT NULL,
    word    VARCHAR NOT NULL
);

CREATE TABLE search_postings (
    word_id      INTEGER NOT NULL,
    response_key BIGINT NOT NULL
);

CREATE TABLE search_index (
    indexed_through BIGINT NOT NULL
);

INSERT INTO search_index VALUES (0);
