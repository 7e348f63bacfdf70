-- 006: a keyed audit trail, audit anchors on sign-offs, account kinds, and four-eyes admin grants.
-- Never edit once landed: add a new numbered file instead.
--
-- audit_events.key_id: the id of the keyring key whose HMAC-SHA256 is the event's hash (register.db.keyring);
-- NULL for the events written before the trail was keyed (plain SHA-256; they still verify).

ALTER TABLE audit_events ADD COLUMN IF NOT EXISTS key_id VARCHAR;

-- The head of the audit trail when a checklist run was signed: the sign-off is an anchor that
-- `python -m register audit verify --anchor signoff:ID` checks (NULL for sign-offs made before 006).
ALTER TABLE checklist_signoffs ADD COLUMN IF NOT EXISTS audit_seq BIGINT;
ALTER TABLE checklist_signoffs ADD COLUMN IF NOT EXISTS audit_hash VARCHAR;
ALTER TABLE checklist_signoffs ADD COLUMN IF NOT EXISTS audit_events BIGINT;

-- Every account that acts is a row of users, so that each write can re-read its current role and state:
-- 'local' (password login), 'oidc' (company identity provider: the role comes from config/roles.toml at
-- each login) and 'demo' (HRI_DEMO_MODE only). oidc and demo rows have no usable password hash.
ALTER TABLE users ADD COLUMN IF NOT EXISTS kind VARCHAR DEFAULT 'local';

-- Granting the admin role is a four-eyes action: one admin requests it, another approves it.
CREATE SEQUENCE IF NOT EXISTS seq_role_grant START 1;

CREATE TABLE IF NOT EXISTS role_grants (
    grant_id      INTEGER PRIMARY KEY,
    username      VARCHAR NOT NULL,
    role          VARCHAR NOT NULL,
    requested_by  VARCHAR NOT NULL,
    requested_at  TIMESTAMPTZ NOT NULL,
    reason        VARCHAR,
    status        VARCHAR NOT NULL CHECK (status IN ('pending', 'approved', 'cancelled')),
    decided_by    VARCHAR,
    decided_at    TIMESTAMPTZ
);
