-- 036: formal review of block answers (issue 33, item 2; seed 001, Table VI: a Critical answer must not be used
-- "without formal review"). Releasing an answer whose decision is block (release, or release with caution) is a
-- risk acceptance: one reviewer proposes it with a reason and an expiry date, a different reviewer approves it.
-- It is bound to the score state it was proposed on: the revision (its key and the SHA-256 of its claims), the
-- answer's decision then, the profile version and score run of that score. While accepted, unexpired, on the
-- current revision and with the answer's decision unchanged, the answer is out of the review queue; a new
-- revision, a rescore or a register change that changes the decision, or the expiry date passing re-opens it
-- (register.scoring.accepted.in_force_select). Never edit once landed: add a new numbered file instead.

CREATE SEQUENCE IF NOT EXISTS seq_risk_acceptance START 1;

CREATE TABLE risk_acceptances (
    acceptance_id   BIGINT PRIMARY KEY,
    response_id     VARCHAR NOT NULL,
    revision        INTEGER NOT NULL,
    response_key    BIGINT NOT NULL,
    claims_hash     VARCHAR NOT NULL,          -- SHA-256 of the revision's claims, canonical JSON
    decision_at     VARCHAR NOT NULL,          -- the answer's decision when proposed (block)
    profile_version INTEGER,
    run_id          BIGINT,
    score_at        DOUBLE,
    band_at         VARCHAR,
    release         VARCHAR NOT NULL CHECK (release IN ('release', 'release_with_caution')),
    reason          VARCHAR NOT NULL CHECK (length(trim(reason)) > 0),
    expires_on      DATE NOT NULL,             -- in force through this day (UTC)
    proposed_by     VARCHAR NOT NULL,
    proposed_role   VARCHAR NOT NULL,
    proposed_at     TIMESTAMPTZ NOT NULL,
    status          VARCHAR NOT NULL CHECK (status IN ('proposed', 'accepted', 'rejected')),
    decided_by      VARCHAR,
    decided_role    VARCHAR,
    decided_at      TIMESTAMPTZ,
    decision_note   VARCHAR
);
