-- 025: claim_source_counts also by the answer's use case and model (issue 14: scale). The overview's Authority
-- figures under a use-case or model filter -- the filters people narrow the console by most -- then read the
-- claims of sources that are neither dated nor restricted from here too, instead of joining the filtered answers'
-- claims (0.55-0.9 s at 10M answers for one use case, about 2 s cold). Counted again from the current claims and
-- their revisions' use case and model. register.ingest.claim_counts keeps it in step, as before.
-- Never edit once landed: add a new numbered file instead.

DROP TABLE claim_source_counts;

CREATE TABLE claim_source_counts (
    label_mask  INTEGER NOT NULL,
    source_id   VARCHAR NOT NULL,
    category    VARCHAR,
    use_case    VARCHAR,
    model       VARCHAR,
    claims      BIGINT NOT NULL
);

INSERT INTO claim_source_counts
SELECT c.label_mask, c.source_id, c.category, r.use_case, r.model, count(*) AS claims
FROM claims c JOIN responses r ON r.response_key = c.response_key
WHERE c.is_current AND c.source_id IS NOT NULL
GROUP BY ALL;
