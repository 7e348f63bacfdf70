-- 018: the verbatim record of each response kept once, compressed (issue 14: storage).
-- Never edit once landed: add a new numbered file instead.
--
-- `raw` (the line as the user sent it) is most of a response's bytes and is read one record at a time
-- (the labelling workbench, proposals, a test set's claims), never scanned by a view. DuckDB's default
-- string compression (dictionary + FSST) kept it at about 0.5x the JSON Lines file; zstd keeps it at about
-- 0.1x (measured on 100,000 synthetic records: 90 MB -> 18 MB). DuckDB cannot change a column's compression
-- in place: the table is rebuilt with the same columns in the same order, the same values and constraints.
CREATE TABLE responses_018 (
    response_id   VARCHAR NOT NULL,
    revision      INTEGER NOT NULL,
    response_key  BIGINT NOT NULL,             -- surrogate key of (response_id, revision): integer joins
    is_current    BOOLEAN NOT NULL,
    content_hash  VARCHAR NOT NULL,            -- sha256 of the canonical validated record
    batch_id      INTEGER NOT NULL,
    imported_at   TIMESTAMPTZ NOT NULL,
    use_case      VARCHAR,
    model         VARCHAR,
    created_at    TIMESTAMPTZ,
    question      VARCHAR,
    answer        VARCHAR,
    stakes        VARCHAR,
    claim_count   INTEGER NOT NULL,
    raw           JSON NOT NULL USING COMPRESSION zstd,  -- the record as the user sent it: nothing is lost
    retrieved_context JSON,                    -- [{"id", "text", "source_id"?}] (009)
    gt_answer     VARCHAR,
    query_ambiguous BOOLEAN,
    gt_claims     JSON                         -- [{"text"?, "response"?, "context"?}]
);
INSERT INTO responses_018 SELECT * FROM responses;
DROP TABLE responses;
ALTER TABLE responses_018 RENAME TO responses;
