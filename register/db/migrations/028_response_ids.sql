-- 028: a response's revisions found by its id without scanning every id (issue 14: scale). The detail view, its
-- reproduction and a review decision look a response up by its id: a scan of the response_id strings of every
-- revision, 0.3-0.5 s at 10M responses. This table holds a 64-bit hash of each revision's id beside its key; the
-- lookup reads the matching keys here (a scan of one integer column, written sorted) and then the revisions by
-- their keys, which DuckDB's zone maps narrow to a row group (register.db.response_ids: 0.005-0.01 s at 10M).
-- md5_number_lower, not hash(): DuckDB's hash() may change between its versions; MD5 does not. A hash may be
-- shared by two ids: the lookup also compares the id itself.
-- Written by every writer of responses in the same transaction (register.ingest.records, register.ingest.replicate).
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE response_ids (
    id_hash      UBIGINT NOT NULL,   -- md5_number_lower(response_id)
    response_key BIGINT NOT NULL     -- responses.response_key
);

INSERT INTO response_ids SELECT md5_number_lower(response_id), response_key FROM responses ORDER BY 1, 2;
