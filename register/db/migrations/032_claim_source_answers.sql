-- 032: the answers each source is cited by (issue 14: scale). With millions of answers past a dated source's
-- valid-until date, finding the answers the review queue takes for their sources read every claim of that source
-- and joined it to its answer for the answer's time and use case: 2-3 s of every overview and queue read at 10M.
-- One row per distinct (source, label mask, category, use case, the answer's UTC creation day, response key) of the
-- current claims that cite a source -- what the Authority checks read of a claim and its answer, beside the answer's
-- key -- stored sorted by source and day, so that reading one source's answers skips every other source's rows.
-- The checks run over the counted groups of claim_source_counts; the failing groups' answers are read here
-- (register.scoring.authority.review_keys_select). register.ingest.claim_counts keeps it in step with the counts,
-- in the same transactions. Never edit once landed: add a new numbered file instead.

CREATE TABLE claim_source_answers (
    source_id    VARCHAR NOT NULL,
    label_mask   INTEGER NOT NULL,
    category     VARCHAR,
    use_case     VARCHAR,
    created_day  DATE,
    response_key BIGINT NOT NULL
);

INSERT INTO claim_source_answers
SELECT c.source_id, c.label_mask, c.category, r.use_case, (r.created_at AT TIME ZONE 'UTC')::DATE, c.response_key
FROM (SELECT DISTINCT source_id, label_mask, category, response_key FROM claims
      WHERE is_current AND source_id IS NOT NULL) c
JOIN responses r ON r.response_key = c.response_key
ORDER BY 1, 5, 6;
