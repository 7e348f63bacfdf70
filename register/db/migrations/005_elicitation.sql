-- 005: weight elicitation (AHP, Delphi) and calibration outcomes. Never edit once landed: add a new
-- numbered file instead.
--
-- An elicitation record is the evidence behind a draft profile's weights: who the experts were, what
-- they judged, the consistency or the spread, and when. It links to the profile version it produced.
-- Delphi sessions keep every round and every submission; a submission is hidden from the other
-- experts until its round is closed (the register enforces that, the pages only render it).

CREATE SEQUENCE IF NOT EXISTS seq_elicitation START 1;
CREATE SEQUENCE IF NOT EXISTS seq_delphi_session START 1;
CREATE SEQUENCE IF NOT EXISTS seq_outcome_import START 1;

CREATE TABLE IF NOT EXISTS elicitations (
    elicitation_id  INTEGER PRIMARY KEY,
    method          VARCHAR NOT NULL CHECK (method IN ('ahp', 'delphi', 'calibration')),
    profile_version INTEGER NOT NULL,          -- the draft profile this record produced
    record          JSON NOT NULL,             -- experts, judgements / rounds, CR / spread, result
    created_at      TIMESTAMPTZ NOT NULL,
    created_by      VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS delphi_sessions (
    session_id      INTEGER PRIMARY KEY,
    title           VARCHAR NOT NULL,
    facilitator     VARCHAR NOT NULL,
    experts         VARCHAR[] NOT NULL,
    iqr_threshold   DOUBLE NOT NULL CHECK (iqr_threshold > 0),
    status          VARCHAR NOT NULL CHECK (status IN ('open', 'finalised')),
    created_at      TIMESTAMPTZ NOT NULL,
    profile_version INTEGER                    -- set when the session is finalised into a draft
);

CREATE TABLE IF NOT EXISTS delphi_rounds (
    session_id   INTEGER NOT NULL,
    round_number INTEGER NOT NULL,
    status       VARCHAR NOT NULL CHECK (status IN ('open', 'closed')),
    opened_at    TIMESTAMPTZ NOT NULL,
    closed_at    TIMESTAMPTZ,
    summary      JSON,                         -- hri_core.delphi.RoundSummary.to_dict() once closed
    PRIMARY KEY (session_id, round_number)
);

CREATE TABLE IF NOT EXISTS delphi_submissions (
    session_id   INTEGER NOT NULL,
    round_number INTEGER NOT NULL,
    expert       VARCHAR NOT NULL,
    weights      JSON NOT NULL,                -- normalised to sum 1
    rationale    VARCHAR,
    submitted_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, round_number, expert)
);

-- Outcomes brought from outside (audits, incidents, adjudications) as a CSV of response_id,outcome.
CREATE TABLE IF NOT EXISTS outcome_imports (
    import_id    INTEGER PRIMARY KEY,
    source_name  VARCHAR NOT NULL,
    imported_at  TIMESTAMPTZ NOT NULL,
    imported_by  VARCHAR NOT NULL,
    rows_total   INTEGER NOT NULL,
    accepted     INTEGER NOT NULL,
    rejected     INTEGER NOT NULL,
    problems     JSON NOT NULL                 -- [{row, field, message}]
);

CREATE TABLE IF NOT EXISTS imported_outcomes (
    import_id    INTEGER NOT NULL,
    row_number   INTEGER NOT NULL,             -- 1-based data row of the CSV (the header is row 0)
    response_id  VARCHAR NOT NULL,
    outcome      VARCHAR NOT NULL CHECK (outcome IN ('good', 'bad'))
);
