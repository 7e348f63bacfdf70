-- 031: claim_source_counts also by the answer's creation day in UTC (issue 14: scale). A source with a valid-until
-- date is checked against the answer's time, and its claims were joined to their answers for it: with one such
-- source cited by 3.6 million claims at 10M answers, the overview's Authority figures took 2.4-6.4 s. The check
-- compares the answer's time with a midnight in UTC (valid-until, plus the inclusive day), so the day decides it
-- exactly and those claims are read from here too. An answer without a creation time is checked at its current
-- score's as-of time, which a rescore moves: its claims are counted with no day (NULL) and still joined. Counted
-- again from the current claims and their revisions; register.ingest.claim_counts keeps it in step, as before.
-- Never edit once landed: add a new numbered file instead.

DROP TABLE claim_source_counts;

CREATE TABLE claim_source_counts (
    label_mask  INTEGER NOT NULL,
    source_id   VARCHAR NOT NULL,
    category    VARCHAR,
    use_case    VARCHAR,
    model       VARCHAR,
    created_day DATE,
    claims      BIGINT NOT NULL
);

INSERT INTO claim_source_counts
SELECT c.label_mask, c.source_id, c.category, r.use_case, r.model, (r.created_at AT TIME ZONE 'UTC')::DATE,
       count(*) AS claims
FROM claims c JOIN responses r ON r.response_key = c.response_key
WHERE c.is_current AND c.source_id IS NOT NULL
GROUP BY ALL;
