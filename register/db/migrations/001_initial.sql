-- 001: the system of record. Never edit once landed: add a new numbered file instead.
-- Large tables (claims, scores) carry no index constraints on purpose: DuckDB bulk loads and
-- set-based scoring are much faster without them; the importer and scorer keep keys unique.

CREATE SEQUENCE IF NOT EXISTS seq_batch START 1;
CREATE SEQUENCE IF NOT EXISTS seq_quarantine START 1;
CREATE SEQUENCE IF NOT EXISTS seq_score_run START 1;
CREATE SEQUENCE IF NOT EXISTS seq_audit START 1;
CREATE SEQUENCE IF NOT EXISTS seq_response_key START 1;

CREATE TABLE IF NOT EXISTS import_batches (
    batch_id        INTEGER PRIMARY KEY,
    source_name     VARCHAR NOT NULL,
    source_sha256   VARCHAR,
    format          VARCHAR NOT NULL,
    started_at      TIMESTAMPTZ NOT NULL,
    finished_at     TIMESTAMPTZ,
    actor_name      VARCHAR NOT NULL,
    records_total   INTEGER NOT NULL DEFAULT 0,
    accepted        INTEGER NOT NULL DEFAULT 0,  -- new responses + new revisions + unchanged
    new_responses   INTEGER NOT NULL DEFAULT 0,
    new_revisions   INTEGER NOT NULL DEFAULT 0,
    unchanged       INTEGER NOT NULL DEFAULT 0,
    quarantined     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS responses (
    response_id   VARCHAR NOT NULL,
    revision      INTEGER NOT NULL,
    response_key  BIGINT NOT NULL,             -- surrogate key of (response_id, revision): integer joins
    is_current    BOOLEAN NOT NULL,
    content_hash  VARCHAR NOT NULL,            -- sha256 of the canonical validated record
    batch_id      INTEGER NOT NULL,
    imported_at   TIMESTAMPTZ NOT NULL,
    use_case      VARCHAR,
    model         VARCHAR,
    created_at    TIMESTAMPTZ,
    question      VARCHAR,
    answer        VARCHAR,
    stakes        VARCHAR,
    claim_count   INTEGER NOT NULL,
    raw           JSON NOT NULL                -- the record as the user sent it: nothing is lost
);

CREATE TABLE IF NOT EXISTS claims (
    response_id       VARCHAR NOT NULL,
    revision          INTEGER NOT NULL,
    response_key      BIGINT NOT NULL,
    claim_idx         INTEGER NOT NULL,        -- position in the response, 0-based
    is_current        BOOLEAN NOT NULL,        -- copy of responses.is_current: scoring scans claims only
    claim_id          VARCHAR NOT NULL,
    text              VARCHAR,
    labels            VARCHAR[] NOT NULL,
    label_mask        INTEGER NOT NULL,        -- bit i = hri_core.vocabulary.LABELS[i]
    dimensions        VARCHAR[],               -- NULL: the profile's default dimensions apply
    dim_mask          INTEGER,                 -- bit i = hri_core.vocabulary.DIMENSIONS[i]; NULL as above
    criticality       INTEGER NOT NULL,
    source_id         VARCHAR,
    span              VARCHAR,
    feedback_at       TIMESTAMPTZ,
    feedback_count    INTEGER,
    feedback_resolved BOOLEAN
);

CREATE TABLE IF NOT EXISTS sources (
    source_id     VARCHAR PRIMARY KEY,
    title         VARCHAR,
    ref           VARCHAR,
    source_type   VARCHAR,
    authority_tier INTEGER,
    publisher     VARCHAR,
    access_date   DATE,
    valid_until   DATE,
    superseded_by VARCHAR,
    restricted_to VARCHAR[],
    row_version   INTEGER NOT NULL DEFAULT 1,
    updated_at    TIMESTAMPTZ,
    updated_by    VARCHAR,
    deleted       BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE IF NOT EXISTS scoring_profiles (
    profile_version INTEGER PRIMARY KEY,
    name            VARCHAR NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('draft', 'active', 'archived')),
    params          JSON NOT NULL,             -- hri_core.ScoringProfile.to_dict()
    fingerprint     VARCHAR NOT NULL,
    based_on        INTEGER,
    created_at      TIMESTAMPTZ NOT NULL,
    created_by      VARCHAR NOT NULL,
    published_at    TIMESTAMPTZ,
    published_by    VARCHAR,
    reason          VARCHAR
);

CREATE TABLE IF NOT EXISTS score_runs (
    run_id           INTEGER PRIMARY KEY,
    profile_version  INTEGER NOT NULL,
    as_of            TIMESTAMPTZ NOT NULL,
    started_at       TIMESTAMPTZ NOT NULL,
    actor_name       VARCHAR NOT NULL,
    scope            VARCHAR NOT NULL,         -- 'all' or 'batch:<id>'
    responses_scored INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS scores (
    run_id            INTEGER NOT NULL,
    response_id       VARCHAR NOT NULL,
    revision          INTEGER NOT NULL,
    profile_version   INTEGER NOT NULL,
    as_of             TIMESTAMPTZ NOT NULL,
    is_current        BOOLEAN NOT NULL,        -- the latest score of the current revision
    s_f DOUBLE NOT NULL, s_c DOUBLE NOT NULL, s_u DOUBLE NOT NULL, s_o DOUBLE NOT NULL,
    s_s DOUBLE NOT NULL, s_p DOUBLE NOT NULL, s_h DOUBLE NOT NULL,
    hri_add           DOUBLE NOT NULL,
    hri               DOUBLE NOT NULL,
    score             DOUBLE NOT NULL,
    band              VARCHAR NOT NULL,
    action            VARCHAR NOT NULL,
    no_claims         BOOLEAN NOT NULL,
    total_criticality INTEGER NOT NULL,
    floors_fired      INTEGER NOT NULL,
    decisive_claim_id VARCHAR,                 -- the floor that set HRI*, when it beat HRI_add
    decisive_rule_id  VARCHAR
);

-- Every floor that fired, one row per (claim, rule): which claim, which rule, which value.
CREATE TABLE IF NOT EXISTS score_floors (
    run_id        INTEGER NOT NULL,
    response_id   VARCHAR NOT NULL,
    revision      INTEGER NOT NULL,
    claim_idx     INTEGER NOT NULL,
    claim_id      VARCHAR NOT NULL,
    rule_id       VARCHAR NOT NULL,
    label         VARCHAR NOT NULL,
    criticality   INTEGER NOT NULL,
    value         DOUBLE NOT NULL
);

CREATE TABLE IF NOT EXISTS quarantine (
    quarantine_id   INTEGER PRIMARY KEY,
    batch_id        INTEGER NOT NULL,
    source_name     VARCHAR NOT NULL,
    location        VARCHAR NOT NULL,          -- "line 12" or "rows 4,5,6"
    response_id     VARCHAR,
    raw             VARCHAR NOT NULL,          -- verbatim text of the rejected record
    reasons         JSON NOT NULL,             -- [{field, message}]
    created_at      TIMESTAMPTZ NOT NULL,
    status          VARCHAR NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
    resolved_at     TIMESTAMPTZ,
    resolved_batch_id INTEGER
);

CREATE TABLE IF NOT EXISTS audit_events (
    seq          BIGINT PRIMARY KEY,
    occurred_at  TIMESTAMPTZ NOT NULL,
    actor_name   VARCHAR NOT NULL,
    actor_role   VARCHAR NOT NULL,
    action       VARCHAR NOT NULL,
    entity_type  VARCHAR NOT NULL,
    entity_id    VARCHAR,
    before       VARCHAR,                   -- canonical JSON text, hashed verbatim
    after        VARCHAR,
    prev_hash    VARCHAR NOT NULL,
    hash         VARCHAR NOT NULL
);
