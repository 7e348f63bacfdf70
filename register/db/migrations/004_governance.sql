-- 004: governance records (paper sections XI-XIV): the source register (extends 001's sources),
-- the claims register (Table VII), minimum evidence rules as versioned data (Table VIII) and
-- pre-submission checklist runs with sign-offs (Table IX). Never edit once landed.

ALTER TABLE sources ADD COLUMN IF NOT EXISTS archive_url VARCHAR;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS content_hash VARCHAR;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS notes VARCHAR;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS created_at TIMESTAMPTZ;
ALTER TABLE sources ADD COLUMN IF NOT EXISTS created_by VARCHAR;

CREATE TABLE IF NOT EXISTS register_claims (
    claim_key           VARCHAR PRIMARY KEY,   -- stable key: re-import updates by it
    statement           VARCHAR NOT NULL,
    claim_type          VARCHAR NOT NULL,
    source_ids          VARCHAR[] NOT NULL,    -- links into sources.source_id
    verification_status VARCHAR NOT NULL,
    reviewer            VARCHAR,
    reviewed_on         DATE,
    notes               VARCHAR,
    row_version         INTEGER NOT NULL DEFAULT 1,
    created_at          TIMESTAMPTZ,
    created_by          VARCHAR,
    updated_at          TIMESTAMPTZ,
    updated_by          VARCHAR,
    deleted             BOOLEAN NOT NULL DEFAULT false
);

-- one row per (version, claim type); a new version copies and changes; old versions are kept
CREATE TABLE IF NOT EXISTS evidence_rule_versions (
    rule_version INTEGER PRIMARY KEY,
    created_at   TIMESTAMPTZ NOT NULL,
    created_by   VARCHAR NOT NULL,
    reason       VARCHAR
);

CREATE TABLE IF NOT EXISTS evidence_rules (
    rule_version           INTEGER NOT NULL,
    claim_type             VARCHAR NOT NULL,
    acceptable_source_types VARCHAR[] NOT NULL,
    handling               VARCHAR[] NOT NULL,   -- required handling when evidence is missing
    guidance               VARCHAR,              -- the rule's own wording
    PRIMARY KEY (rule_version, claim_type)
);

CREATE SEQUENCE IF NOT EXISTS seq_checklist_run START 1;
CREATE SEQUENCE IF NOT EXISTS seq_checklist_signoff START 1;

CREATE TABLE IF NOT EXISTS checklist_runs (
    run_id        INTEGER PRIMARY KEY,
    run_at        TIMESTAMPTZ NOT NULL,
    run_by        VARCHAR NOT NULL,
    run_role      VARCHAR NOT NULL,
    rule_version  INTEGER,
    outcome       VARCHAR NOT NULL,      -- automated: pass (no check failed) / fail
    results       JSON NOT NULL,         -- per check: status, offending rows, note
    content_hash  VARCHAR NOT NULL,      -- sha256 of the checked rows + rule version + results
    editors       VARCHAR[] NOT NULL     -- last editors of the checked rows (four eyes)
);

CREATE TABLE IF NOT EXISTS checklist_signoffs (
    signoff_id    INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL,
    signed_by     VARCHAR NOT NULL,
    signed_role   VARCHAR NOT NULL,
    signed_at     TIMESTAMPTZ NOT NULL,
    outcome       VARCHAR NOT NULL,      -- passed (every item pass or waived) / failed
    decisions     JSON NOT NULL,         -- per item: decision (pass / fail / waived) and reason
    content_hash  VARCHAR NOT NULL       -- the run's hash at signing time
);
