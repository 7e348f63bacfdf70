-- 024: the current claims that cite a source, counted by what the Authority checks read of a claim apart from its
-- response (issue 14: scale): its labels (the bit mask), its source and its category. The overview's Authority
-- figures over every current response read the claims of sources that are neither dated nor restricted from here
-- (a few hundred rows) instead of scanning 43 million claims (1.5 s at 10M answers, several seconds cold), and the
-- sources the current claims cite come from here too. register.ingest.claim_counts keeps it in step in the
-- transaction of every write that adds claims or takes a claim out of the current ones (import, synthetic copies).
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE claim_source_counts (
    label_mask  INTEGER NOT NULL,
    source_id   VARCHAR NOT NULL,
    category    VARCHAR,
    claims      BIGINT NOT NULL
);

INSERT INTO claim_source_counts
SELECT label_mask, source_id, category, count(*) AS claims
FROM claims
WHERE is_current AND source_id IS NOT NULL
GROUP BY ALL;
