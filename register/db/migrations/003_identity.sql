-- 003: local accounts for the embedded login. Never edit once landed: add a new numbered file instead.
--
-- Passwords are stored only as argon2id hashes (argon2-cffi). Failed logins are counted per account
-- and slow the next attempt down (locked_until); every login, failure, lock and change is audited.
-- Accounts from the company identity provider (st.login / OIDC) are not stored here: their role
-- comes from config/roles.toml at each login.

CREATE TABLE IF NOT EXISTS users (
    username             VARCHAR PRIMARY KEY,
    display_name         VARCHAR NOT NULL,
    role                 VARCHAR NOT NULL CHECK (role IN ('viewer', 'annotator', 'reviewer', 'admin')),
    password_hash        VARCHAR NOT NULL,
    disabled             BOOLEAN NOT NULL DEFAULT false,
    must_change_password BOOLEAN NOT NULL DEFAULT true,
    failed_attempts      INTEGER NOT NULL DEFAULT 0,
    locked_until         TIMESTAMPTZ,
    last_login_at        TIMESTAMPTZ,
    created_at           TIMESTAMPTZ NOT NULL,
    created_by           VARCHAR NOT NULL,
    updated_at           TIMESTAMPTZ NOT NULL,
    updated_by           VARCHAR NOT NULL,
    row_version          INTEGER NOT NULL DEFAULT 1
);
