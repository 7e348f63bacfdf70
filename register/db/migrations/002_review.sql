-- 002: review decisions on queued responses, and the known outcomes they give calibration.
-- Never edit once landed: add a new numbered file instead.
--
-- A decision binds to one revision of a response (a new revision is a new answer and is reviewed
-- again) and copies the score it was made on, so that calibration can later compare the HRI with
-- what people decided. Decisions are append-only: one per revision, never updated.

CREATE SEQUENCE IF NOT EXISTS seq_review_decision START 1;

CREATE TABLE IF NOT EXISTS review_decisions (
    decision_id        INTEGER PRIMARY KEY,
    response_id        VARCHAR NOT NULL,
    revision           INTEGER NOT NULL,
    decision           VARCHAR NOT NULL
        CHECK (decision IN ('release', 'release_with_caution', 'block', 'send_back', 'escalate')),
    reason             VARCHAR NOT NULL CHECK (length(trim(reason)) > 0),
    decided_by         VARCHAR NOT NULL,         -- actor name, as text
    decided_role       VARCHAR NOT NULL,         -- actor role, as text
    decided_at         TIMESTAMPTZ NOT NULL,
    score_at_decision  DOUBLE,                   -- the current score when the decision was made
    band_at_decision   VARCHAR,                  -- (NULL when the revision had no score)
    action_at_decision VARCHAR,
    profile_version    INTEGER,                  -- the profile version of that score
    run_id             INTEGER,                  -- and its score run
    UNIQUE (response_id, revision)
);

-- Outcomes known for a response revision, for ROC / PR calibration of the HRI. Reviews are the first
-- source; incidents and adjudications can be added to this view by a later migration.
CREATE OR REPLACE VIEW known_outcomes AS
SELECT response_id,
       revision,
       CASE WHEN decision IN ('block', 'send_back', 'escalate') THEN 'bad' ELSE 'good' END AS outcome,
       'review' AS source,
       decided_at
FROM review_decisions;
