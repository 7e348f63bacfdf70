-- 014: validated feedback (paper section V.A), calibration outcomes that carry their kind, and random
-- audit samples of released answers. Never edit once landed: add a new numbered file instead.
--
-- A feedback item is reported on one revision of a response (a claim of it, or the answer as a whole),
-- then validated or rejected by a second person, and a validated item is later resolved. Only a
-- validated item changes a score: validation stores the claim's VALIDATED_NEGATIVE_FEEDBACK label
-- (feedback_at = validated_at) as the response's next revision, resolution stores feedback_resolved
-- the same way; the revisions are named here (validated_revision, resolved_revision).

CREATE SEQUENCE IF NOT EXISTS seq_feedback START 1;

CREATE TABLE IF NOT EXISTS feedback_items (
    feedback_id        INTEGER PRIMARY KEY,
    response_id        VARCHAR NOT NULL,
    revision           INTEGER NOT NULL,         -- the revision the reporter saw
    claim_id           VARCHAR,                  -- NULL: the answer as a whole
    text               VARCHAR NOT NULL CHECK (length(trim(text)) > 0),
    severity           DOUBLE NOT NULL CHECK (severity BETWEEN 0 AND 1),   -- proposed q
    reported_by        VARCHAR NOT NULL,
    reported_role      VARCHAR NOT NULL,
    reported_at        TIMESTAMPTZ NOT NULL,
    state              VARCHAR NOT NULL CHECK (state IN ('reported', 'validated', 'rejected', 'resolved')),
    validated_by       VARCHAR,
    validated_at       TIMESTAMPTZ,              -- = the claim's feedback_at in validated_revision
    validation_method  VARCHAR CHECK (validation_method IN ('review', 'source_check', 'adjudication')),
    validated_severity DOUBLE CHECK (validated_severity BETWEEN 0 AND 1),  -- q_j of s_H
    validated_claim_id VARCHAR,                  -- the claim that carries the label
    validation_note    VARCHAR,
    validated_revision INTEGER,
    rejected_by        VARCHAR,
    rejected_at        TIMESTAMPTZ,
    rejection_reason   VARCHAR,
    resolved_by        VARCHAR,
    resolved_at        TIMESTAMPTZ,
    resolution         VARCHAR,                  -- what fixed it
    resolved_revision  INTEGER
);

-- Random audit samples of released answers (actions release / caution): reviewers decide on them like on
-- the review queue, so that known outcomes cover the low end of the score range too.
CREATE SEQUENCE IF NOT EXISTS seq_audit_sample START 1;

CREATE TABLE IF NOT EXISTS audit_samples (
    sample_id    INTEGER PRIMARY KEY,
    drawn_at     TIMESTAMPTZ NOT NULL,
    drawn_by     VARCHAR NOT NULL,
    actions      VARCHAR[] NOT NULL,             -- the released actions sampled from
    requested    INTEGER NOT NULL,
    population   INTEGER NOT NULL,               -- undecided released responses at the time
    seed         BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS audit_sample_items (
    sample_id    INTEGER NOT NULL,
    response_id  VARCHAR NOT NULL,
    revision     INTEGER NOT NULL,
    score        DOUBLE NOT NULL,
    band         VARCHAR NOT NULL,
    action       VARCHAR NOT NULL
);

-- What an imported outcome is (incident, audit finding, expert adjudication, confirmed correction);
-- imports made before kinds existed say 'unspecified'.
ALTER TABLE imported_outcomes ADD COLUMN kind VARCHAR DEFAULT 'unspecified';

-- Review decisions as outcomes, now with their kind. An escalation passes the answer on without judging
-- it: it is no outcome at all (it was counted as bad). A decision on a revision drawn into an audit
-- sample is an audit finding; any other is a review decision.
CREATE OR REPLACE VIEW known_outcomes AS
SELECT d.response_id,
       d.revision,
       CASE WHEN d.decision IN ('block', 'send_back', 'ask', 'abstain') THEN 'bad' ELSE 'good' END AS outcome,
       'review' AS source,
       d.decided_at,
       CASE WHEN EXISTS (SELECT 1 FROM audit_sample_items a
                         WHERE a.response_id = d.response_id AND a.revision = d.revision)
            THEN 'audit_finding' ELSE 'review_decision' END AS kind
FROM review_decisions d
WHERE d.decision <> 'escalate';
