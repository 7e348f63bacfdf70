-- 010: CLAIM's Authority step against the register, and the minimum evidence rules as the paper words
-- them (Table VIII). Never edit once landed: add a new numbered file instead.
--
-- Two versioned rule tables, edited in the console like the evidence rules (a save writes a new
-- version; the newest is in force; old versions are kept):
--   * use cases and the roles of the people who ask their questions: "allowed" compares a source's
--     restricted_to with them;
--   * authority rules (hri_core.authority.AuthorityRules as JSON): the largest acceptable
--     authority_tier and/or source types per claim category; "authoritative" reads them.
-- The checks themselves are a query over the current register (register/scoring/authority.py), never
-- stored: superseding a source shows at once, and no claim label is ever rewritten.

CREATE TABLE IF NOT EXISTS use_case_versions (
    version     INTEGER PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL,
    created_by  VARCHAR NOT NULL,
    reason      VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS use_case_requesters (
    version          INTEGER NOT NULL,
    use_case         VARCHAR NOT NULL,
    requester_roles  VARCHAR[] NOT NULL,     -- empty: nobody in a restricted role asks this use case's questions
    note             VARCHAR,
    PRIMARY KEY (version, use_case)
);

CREATE TABLE IF NOT EXISTS authority_rule_versions (
    version      INTEGER PRIMARY KEY,
    name         VARCHAR NOT NULL,
    params       JSON NOT NULL,              -- hri_core.authority.AuthorityRules without name and version
    fingerprint  VARCHAR NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    created_by   VARCHAR NOT NULL,
    reason       VARCHAR NOT NULL
);

-- Table VIII as worded (register/governance/vocabulary.py, PAPER_RULES_AS_WORDED): which verification
-- statuses show that a rule's handling was applied (NULL: the mapping rule version 1 was evaluated
-- with), whether a source counts only with an access date, whether a preprint counts only for a claim
-- whose register row says that no peer-reviewed source exists, and which statuses a claim of the type
-- may not carry (the paper's own contribution is "not a literature claim", never "verified").
ALTER TABLE evidence_rules ADD COLUMN IF NOT EXISTS handled_statuses VARCHAR[];
ALTER TABLE evidence_rules ADD COLUMN IF NOT EXISTS needs_access_date BOOLEAN;
ALTER TABLE evidence_rules ADD COLUMN IF NOT EXISTS preprint_only_without_peer_review BOOLEAN;
ALTER TABLE evidence_rules ADD COLUMN IF NOT EXISTS refused_statuses VARCHAR[];
ALTER TABLE register_claims ADD COLUMN IF NOT EXISTS no_peer_reviewed_source BOOLEAN;
