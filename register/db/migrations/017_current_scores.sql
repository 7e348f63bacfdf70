-- 017: the console's read model: one row per current response with its current score and the columns the
-- console filters and groups by (register.scoring.current_scores keeps it in step with responses and
-- scores, in the same transaction as every write that changes either). The console's views of the
-- current scores read this narrow table instead of joining responses and scores on string keys: at 10M
-- responses that join was most of every view's 5-17 s.
-- Never edit once landed: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS current_scores (
    response_key          BIGINT NOT NULL,
    response_id           VARCHAR NOT NULL,
    revision              INTEGER NOT NULL,
    use_case              VARCHAR,
    model                 VARCHAR,
    created_at            TIMESTAMPTZ,
    imported_at           TIMESTAMPTZ NOT NULL,
    claim_count           INTEGER NOT NULL,
    run_id                INTEGER NOT NULL,
    profile_version       INTEGER NOT NULL,
    as_of                 TIMESTAMPTZ NOT NULL,
    s_f DOUBLE NOT NULL, s_c DOUBLE NOT NULL, s_u DOUBLE NOT NULL, s_o DOUBLE NOT NULL,
    s_s DOUBLE NOT NULL, s_p DOUBLE NOT NULL, s_h DOUBLE NOT NULL,
    hri_add               DOUBLE NOT NULL,
    hri                   DOUBLE NOT NULL,
    score                 DOUBLE NOT NULL,
    band                  VARCHAR NOT NULL,
    action                VARCHAR NOT NULL,
    no_claims             BOOLEAN NOT NULL,
    floors_fired          INTEGER NOT NULL,
    decisive_claim_id     VARCHAR,
    decisive_rule_id      VARCHAR,
    scoring_failure       VARCHAR,
    action_floor_rule_id  VARCHAR,
    mitigation_action     VARCHAR,
    mitigation_reason     VARCHAR
);

INSERT INTO current_scores
SELECT r.response_key, r.response_id, r.revision, r.use_case, r.model, r.created_at, r.imported_at, r.claim_count,
       s.run_id, s.profile_version, s.as_of, s.s_f, s.s_c, s.s_u, s.s_o, s.s_s, s.s_p, s.s_h, s.hri_add, s.hri,
       s.score, s.band, s.action, s.no_claims, s.floors_fired, s.decisive_claim_id, s.decisive_rule_id,
       s.scoring_failure, s.action_floor_rule_id, s.mitigation_action, s.mitigation_reason
FROM responses r JOIN scores s ON s.response_id = r.response_id AND s.revision = r.revision
WHERE r.is_current AND s.is_current;
