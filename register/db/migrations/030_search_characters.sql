-- 030: the letters and digits of each revision in the search index (issue 14: scale). A search for one letter or
-- digit (`e`, `7`) is inside a word of nearly every answer: looking it up in the vocabulary named most of it, and the
-- postings of every such word made distinct took 6.7 s at 10M answers for `e`. Whether a revision's texts hold a
-- given letter or digit at all is one bit, so (register.ingest.search_index):
--   search_words.characters       which of a-z and 0-9 the word holds, bit i for the i-th of
--                                 search_index.CHARACTERS (NULL until the index computes it: the next catch-up)
--   search_characters             one row per response revision whose texts hold any of them: the bits of all its
--                                 words together (a revision matches a search for `e` if and only if its bit is set)
--   search_index.characters_missing_through  the revisions with keys up to it are indexed without their characters
--                                 (those indexed before this migration); a one-character search reads the masks once
--                                 it is 0, and ``python -m register search-index`` (or the next import) fills them in.
-- Never edit once landed: add a new numbered file instead.

ALTER TABLE search_words ADD COLUMN characters UBIGINT;

CREATE TABLE search_characters (
    response_key BIGINT NOT NULL,
    characters   UBIGINT NOT NULL
);

ALTER TABLE search_index ADD COLUMN characters_missing_through BIGINT NOT NULL DEFAULT 0;

UPDATE search_index SET characters_missing_through = indexed_through;
