-- 034: label changes that would lower an answer's decision wait for a second person (issue 33, item 3).
-- A revision made in the register (verification confirm, workbench or grid labels, adjudication, feedback) whose
-- decision -- computed on the register's current profile, sources, authority rules, requesters and mitigation
-- policy -- is less severe than the current revision's is not stored: it waits here, proposed revision and all,
-- until a reviewer other than its proposer approves it (it is then stored as the next revision) or rejects it
-- with a reason. Meanwhile the answer keeps its labels and stays in the review queue, marked by this table
-- (register.ingest.pending.pending_keys_select). Never edit once landed: add a new numbered file instead.

CREATE SEQUENCE IF NOT EXISTS seq_pending_change START 1;

CREATE TABLE pending_label_changes (
    change_id       BIGINT PRIMARY KEY,
    response_id     VARCHAR NOT NULL,
    base_revision   INTEGER NOT NULL,          -- the revision the change was proposed on
    base_key        BIGINT NOT NULL,           -- its response_key: the review queue's marker
    origin          VARCHAR NOT NULL,          -- register.ingest.revise.REVISION_ORIGINS
    subject         VARCHAR NOT NULL,
    record          VARCHAR NOT NULL,          -- the proposed revision, canonical JSON
    decision_before VARCHAR NOT NULL,
    decision_after  VARCHAR NOT NULL,
    reasons_after   VARCHAR NOT NULL,          -- JSON list of the proposed revision's decision reasons
    proposed_by     VARCHAR NOT NULL,
    proposed_at     TIMESTAMPTZ NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    decided_by      VARCHAR,
    decided_at      TIMESTAMPTZ,
    decision_note   VARCHAR,                   -- the approver's or rejecter's reason
    applied_revision INTEGER
);
