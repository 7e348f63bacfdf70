-- 021: every review decision names its response revision by its integer key too (issue 14: scale), as the score
-- rows (019) and fired floors (020) do.
-- Never edit once landed: add a new numbered file instead.
--
-- The review queue's one definition (register.console.queries.flag_queued) keeps the current responses nobody has
-- decided on yet: a LEFT JOIN of every current score with the decisions. On (response_id, revision) it hashed
-- 10M string pairs at 10M responses (0.25 s of every overview, queue and KPI read, with no decision at all); on
-- the key, 0.02 s. The one writer (register.console.review.record_decision) fills it; the rows already stored
-- get theirs here.
ALTER TABLE review_decisions ADD COLUMN response_key BIGINT;

UPDATE review_decisions SET response_key = r.response_key
FROM responses r
WHERE r.response_id = review_decisions.response_id AND r.revision = review_decisions.revision;
