-- 049: the approved-use-case register (issue 37, item 1), beside the source and claims registers (004) and
-- versioned like them: one row per use case with its own row_version, soft delete, an audit event per changed
-- row (register/governance/registers.py). The paper's Scope check (Fig. 1; Table II's S dimension, "outside the
-- approved use case") reads it. Never edit once landed: add a new numbered file instead.
--
-- status: proposed, approved, suspended, retired (register/governance/vocabulary.py, USE_CASE_STATUSES).
-- approved_by is never the owner (four eyes); an approved row names its approver and its review-by date.
-- requester_roles are the roles of the people who ask the use case's questions: a vocabulary of their own,
-- not the console's roles. allowed_categories are claim categories (hri_core.vocabulary.CATEGORIES).

CREATE TABLE IF NOT EXISTS use_case_register (
    use_case_id        VARCHAR PRIMARY KEY,   -- as the responses' use_case field names it; re-import updates by it
    owner              VARCHAR NOT NULL,
    purpose            VARCHAR NOT NULL,
    status             VARCHAR NOT NULL,
    allowed_categories VARCHAR[] NOT NULL,    -- claim categories its answers may make claims in
    allowed_topics     VARCHAR[] NOT NULL,
    requester_roles    VARCHAR[] NOT NULL,
    approved_by        VARCHAR,
    evidence_link      VARCHAR,               -- the approval's evidence: where it is ...
    evidence_hash      VARCHAR,               -- ... and the hash of its content
    review_by          DATE,
    notes              VARCHAR,
    row_version        INTEGER NOT NULL DEFAULT 1,
    created_at         TIMESTAMPTZ,
    created_by         VARCHAR,
    updated_at         TIMESTAMPTZ,
    updated_by         VARCHAR,
    deleted            BOOLEAN NOT NULL DEFAULT false
);
