-- 019: every score row names its response revision by its integer key too (issue 14: scale).
-- Never edit once landed: add a new numbered file instead.
--
-- The scores were joined to responses on (response_id, revision), a string and an integer. At 10M
-- responses that join was most of the read model's rebuild after a rescore (about 40 s) and of the console's
-- profile-version filter (about 50 s); on the integer key the same joins cost a fraction (measured at 1M:
-- 0.31 s -> 0.07 s for one run's scores joined to the current responses). Every writer of `scores` fills it
-- (register.scoring.scorer, register.scoring.spark_exchange); the rows already stored get theirs here.
ALTER TABLE scores ADD COLUMN response_key BIGINT;

UPDATE scores SET response_key = r.response_key
FROM responses r
WHERE r.response_id = scores.response_id AND r.revision = scores.revision;
