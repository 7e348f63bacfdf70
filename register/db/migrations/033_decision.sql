-- 033: one decision per answer (issue 33). Every score row carries `decision` (release | caution | review |
-- block: the most severe of the band's action, each fired floor's minimum action, each failed Authority check
-- and the Mitigation step; hri_core.decision) and `decision_reasons` (its reasons, in that order), and so does
-- the console's read model of the current scores.
--
-- Score rows written before this migration were decided without reading the source register, so they cannot be
-- given the decision a score run gives now. Backfilled honestly from what they stored: the decision is the most
-- severe of the stored action (the band's, raised by any floor's minimum action) and the stored mitigation
-- action's minimum (escalate / abstain: review; ask / revise: caution), review for a score that failed closed;
-- the reasons say so and that Authority was not read when the score was made. The next score run (any rescore,
-- or a change of the source register) decides them in full.
--
-- Kept views of older profile versions (026) are tables named after their version, which SQL cannot alter by
-- name: they are forgotten here (the console joins that version's score rows instead; keeping the view again
-- builds it with the new columns, register.readmodels.version_views drops the old table first).
-- Never edit once landed: add a new numbered file instead.

ALTER TABLE scores ADD COLUMN decision VARCHAR;
ALTER TABLE scores ADD COLUMN decision_reasons VARCHAR[];

UPDATE scores SET
    decision = ['release', 'caution', 'review', 'block'][1 + greatest(
        coalesce(list_position(['release', 'caution', 'review', 'block'], action) - 1, 2),
        CASE mitigation_action WHEN 'escalate' THEN 2 WHEN 'abstain' THEN 2 WHEN 'ask' THEN 1 WHEN 'revise' THEN 1
             ELSE 0 END,
        CASE WHEN scoring_failure IS NOT NULL THEN 2 ELSE 0 END)],
    decision_reasons = list_filter([
        'action ' || action || ' (band ' || band || ', with its floors), stored before decisions were made',
        CASE WHEN mitigation_action IS NOT NULL THEN 'mitigation ' || coalesce(mitigation_reason, mitigation_action)
             || ': at least ' || CASE mitigation_action WHEN 'escalate' THEN 'review' WHEN 'abstain' THEN 'review'
                                     WHEN 'ask' THEN 'caution' WHEN 'revise' THEN 'caution' ELSE 'release' END END,
        CASE WHEN scoring_failure IS NOT NULL THEN 'scoring failed (' || scoring_failure || '): review' END,
        'Authority was not read when this score was made: rescore to decide it in full'
    ], lambda x: x IS NOT NULL);

ALTER TABLE current_scores ADD COLUMN decision VARCHAR;
ALTER TABLE current_scores ADD COLUMN decision_reasons VARCHAR[];

UPDATE current_scores SET decision = s.decision, decision_reasons = s.decision_reasons
FROM scores s WHERE s.run_id = current_scores.run_id AND s.response_id = current_scores.response_id
                   AND s.revision = current_scores.revision;

DELETE FROM kept_version_views;
