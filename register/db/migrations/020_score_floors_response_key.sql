-- 020: every fired floor names its response revision by its integer key too (issue 14: scale), as the score
-- rows do since 019.
-- Never edit once landed: add a new numbered file instead.
--
-- The impact preview's fast path joins each current score to its fired floors; on (run_id, response_id,
-- revision) that join was about 1.8 s of its 8 s at 10M responses. Every writer of `score_floors` fills it
-- (register.scoring.scorer, register.scoring.spark_exchange); the rows already stored get theirs here.
ALTER TABLE score_floors ADD COLUMN response_key BIGINT;

UPDATE score_floors SET response_key = r.response_key
FROM responses r
WHERE r.response_id = score_floors.response_id AND r.revision = score_floors.revision;
