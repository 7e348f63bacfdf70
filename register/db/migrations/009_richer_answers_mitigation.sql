-- 009: richer answers (issue 12), floors' minimum actions on scores, CLAIM's Mitigation step.
-- Never edit once landed: add a new numbered file instead.

-- The interchange format's extensions (hri_core.models: RESPONSE_EXTENSIONS, CLAIM_EXTENSIONS), stored so
-- that the scorer, the mitigation step and the exports read them in SQL. NULL: the record did not give it.
ALTER TABLE responses ADD COLUMN retrieved_context JSON;   -- [{"id", "text", "source_id"?}]
ALTER TABLE responses ADD COLUMN gt_answer VARCHAR;
ALTER TABLE responses ADD COLUMN query_ambiguous BOOLEAN;
ALTER TABLE responses ADD COLUMN gt_claims JSON;           -- [{"text"?, "response"?, "context"?}]
ALTER TABLE claims ADD COLUMN category VARCHAR;
ALTER TABLE claims ADD COLUMN is_core BOOLEAN;
ALTER TABLE claims ADD COLUMN contradicted_by VARCHAR;     -- 'context' | 'world' (CONTRADICTED claims only)
ALTER TABLE claims ADD COLUMN entailment JSON;             -- {"target"?, "context"?}

-- The fired floor whose min_action raised the band's action (hri_core.ScoreResult.action_floor); NULL when
-- the action is the band's (or the no-claims action).
ALTER TABLE scores ADD COLUMN action_floor_claim_id VARCHAR;
ALTER TABLE scores ADD COLUMN action_floor_rule_id VARCHAR;

-- CLAIM's Mitigation step (hri_core.mitigation.decide) on every score: the action for the answer, the row of
-- the decision table that chose it, the one sentence naming the step that failed, the claim it names, and
-- the mitigation policy version it ran under.
ALTER TABLE scores ADD COLUMN mitigation_action VARCHAR;
ALTER TABLE scores ADD COLUMN mitigation_rule VARCHAR;
ALTER TABLE scores ADD COLUMN mitigation_reason VARCHAR;
ALTER TABLE scores ADD COLUMN mitigation_claim_id VARCHAR;
ALTER TABLE scores ADD COLUMN mitigation_policy_version INTEGER;

-- Mitigation policies: versioned data next to the scoring profiles (draft -> active -> archived).
CREATE TABLE IF NOT EXISTS mitigation_policies (
    policy_version  INTEGER PRIMARY KEY,
    name            VARCHAR NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('draft', 'active', 'archived')),
    params          JSON NOT NULL,             -- hri_core.MitigationPolicy without name and version
    fingerprint     VARCHAR NOT NULL,
    based_on        INTEGER,
    created_at      TIMESTAMPTZ NOT NULL,
    created_by      VARCHAR NOT NULL,
    published_at    TIMESTAMPTZ,
    published_by    VARCHAR,
    reason          VARCHAR
);

-- Version 1: seed 004's decision table (hri_core.mitigation.default_mitigation_policy(), frozen here; a test
-- holds this row to it).
INSERT INTO mitigation_policies (policy_version, name, status, params, fingerprint, based_on, created_at,
                                 created_by, published_at, published_by, reason)
SELECT 1, 'claim-seed', 'active',
       '{"authority_failure_action": "revise", "core_authority_failure_is_unsupported": true, "escalate_high_stakes_authority_failures": true, "high_stakes": ["high", "critical"], "no_claims_action": "escalate", "non_core_unsupported_action": "answer", "readings": {"ACCESS_GAP": {"authority_failure": "not allowed", "step": "Authority", "verdict": "SUPPORTED"}, "CONTRADICTED": {"authority_failure": null, "step": "Inference", "verdict": "CONTRADICTED"}, "OUTDATED": {"authority_failure": "stale", "step": "Authority", "verdict": "SUPPORTED"}, "OUT_OF_SCOPE": {"authority_failure": "outside the approved scope", "step": "Scope", "verdict": "SUPPORTED"}, "PARTIAL": {"authority_failure": null, "step": "Inference", "verdict": "OVERREACH"}, "SUPPORTED": {"authority_failure": null, "step": null, "verdict": "SUPPORTED"}, "UNSUPPORTED": {"authority_failure": null, "step": "Link", "verdict": "UNLINKED"}, "VALIDATED_NEGATIVE_FEEDBACK": {"authority_failure": null, "step": "Feedback", "verdict": "CONTRADICTED"}}, "recover_with_linked_evidence": true, "recoverable_authority_failures": ["stale"], "recoverable_verdicts": ["OVERREACH"], "recoverable_when": "all", "unknown_stakes": "high", "unmarked_claims_core": true}',
       'f2bde3406980026226a2c15e725b50be00f903b8ba1880195122e19085911e82', NULL, now(), 'system', now(), 'system',
       'seed 004''s decision table (CLAIM''s Mitigation step), version 1'
WHERE NOT EXISTS (SELECT 1 FROM mitigation_policies);

-- Review decisions gain CLAIM's ask (clarify the query with the requester) and abstain (no answer can rest on
-- the evidence). DuckDB cannot alter a CHECK constraint: the table is rebuilt with its rows, and the
-- known_outcomes view with it (an answer a reviewer asks about or abstains on was not releasable: 'bad').
DROP VIEW IF EXISTS known_outcomes;
CREATE TABLE review_decisions_009 (
    decision_id        INTEGER PRIMARY KEY,
    response_id        VARCHAR NOT NULL,
    revision           INTEGER NOT NULL,
    decision           VARCHAR NOT NULL
        CHECK (decision IN ('release', 'release_with_caution', 'block', 'send_back', 'escalate', 'ask', 'abstain')),
    reason             VARCHAR NOT NULL CHECK (length(trim(reason)) > 0),
    decided_by         VARCHAR NOT NULL,
    decided_role       VARCHAR NOT NULL,
    decided_at         TIMESTAMPTZ NOT NULL,
    score_at_decision  DOUBLE,
    band_at_decision   VARCHAR,
    action_at_decision VARCHAR,
    profile_version    INTEGER,
    run_id             INTEGER,
    UNIQUE (response_id, revision)
);
INSERT INTO review_decisions_009 SELECT decision_id, response_id, revision, decision, reason, decided_by, decided_role,
    decided_at, score_at_decision, band_at_decision, action_at_decision, profile_version, run_id FROM review_decisions;
DROP TABLE review_decisions;
ALTER TABLE review_decisions_009 RENAME TO review_decisions;
CREATE OR REPLACE VIEW known_outcomes AS
SELECT response_id,
       revision,
       CASE WHEN decision IN ('block', 'send_back', 'escalate', 'ask', 'abstain') THEN 'bad' ELSE 'good' END AS outcome,
       'review' AS source,
       decided_at
FROM review_decisions;
