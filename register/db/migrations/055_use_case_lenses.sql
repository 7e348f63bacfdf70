-- 055: a profile and a CLAIM lens per use case (issue 37, item 3). A lens version is the whole table of
-- bindings, saved together like the use cases' requesters (010): pending until a second person approves it
-- (approval_steps, kind 'use_case_lens'; register/scoring/lenses.py), the newest approved one in force. A use
-- case without a row is scored under the default: the active profile, the active mitigation policy, every CLAIM
-- step, no human review wired into Mitigation.
--
-- profile_version / policy_version: NULL means the default (the active one). steps: the CLAIM steps that run
-- (hri_core/lens.py, CLAIM_STEPS; Link and Inference always: the score is theirs). human_review: Mitigation
-- hands every answer of the use case to a person (its decision is at least review).
--
-- A profile version first bound by an approved lens, never the default, is 'bound' (published for the use cases
-- its lens names): scoring_profiles is made again with that status allowed, its rows kept as they are.
-- Each score row names the lens it was scored under: lens_version (NULL: no lens in force), the steps that ran
-- and whether human review was wired in (NULL on rows written before this migration or by a Spark job: every
-- step, no human review). Never edit once landed: add a new numbered file instead.

CREATE TABLE IF NOT EXISTS lens_versions (
    version     INTEGER PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS use_case_lenses (
    version          INTEGER NOT NULL,
    use_case         VARCHAR NOT NULL,
    profile_version  INTEGER,
    policy_version   INTEGER,
    steps            VARCHAR[] NOT NULL,
    human_review     BOOLEAN NOT NULL,
    note             VARCHAR,
    PRIMARY KEY (version, use_case)
);

CREATE TABLE scoring_profiles_055 (
    profile_version INTEGER PRIMARY KEY,
    name            VARCHAR NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('draft', 'active', 'archived', 'bound')),
    params          JSON NOT NULL,
    fingerprint     VARCHAR NOT NULL,
    based_on        INTEGER,
    created_at      TIMESTAMPTZ NOT NULL,
    created_by      VARCHAR NOT NULL,
    published_at    TIMESTAMPTZ,
    published_by    VARCHAR,
    reason          VARCHAR
);
INSERT INTO scoring_profiles_055 SELECT profile_version, name, status, params, fingerprint, based_on, created_at,
    created_by, published_at, published_by, reason FROM scoring_profiles;
DROP TABLE scoring_profiles;
ALTER TABLE scoring_profiles_055 RENAME TO scoring_profiles;

ALTER TABLE scores ADD COLUMN lens_version INTEGER;
ALTER TABLE scores ADD COLUMN claim_steps VARCHAR[];
ALTER TABLE scores ADD COLUMN human_review BOOLEAN;
