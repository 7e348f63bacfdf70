-- 044: web sessions, so that a login survives a browser reload (issue 35, item 6). Never edit once landed: add a new
-- numbered file instead.
--
-- One row per login to the console (register.access.web_sessions): started at the login (audited
-- `session.start`), its last activity (touched at most once a minute, not audited: a time stamp, not an action),
-- and its end (`logout`, `session.expired` after HRI_SESSION_MINUTES without activity, `session.revoked` when the
-- account was disabled, its password reset or its role changed: `users.session_generation` moved on since the
-- session recorded it). The browser holds the session's id in a signed, HttpOnly cookie; the table keeps only its
-- SHA-256, so a copy of the database opens no session. `session_no` names the session in the audit trail.
CREATE SEQUENCE IF NOT EXISTS seq_web_session START 1;

CREATE TABLE IF NOT EXISTS web_sessions (
    session_hash       VARCHAR PRIMARY KEY,
    session_no         BIGINT NOT NULL,
    username           VARCHAR NOT NULL,
    method             VARCHAR NOT NULL,   -- local, demo or oidc: how the person logged in
    session_generation INTEGER NOT NULL,   -- the account's users.session_generation when the session started
    created_at         TIMESTAMPTZ NOT NULL,
    last_seen_at       TIMESTAMPTZ NOT NULL,
    ended_at           TIMESTAMPTZ,
    end_action         VARCHAR,            -- the audit action that ended it: logout, session.expired, session.revoked
    end_reason         VARCHAR
);
