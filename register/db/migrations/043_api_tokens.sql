-- 043: personal API tokens for the HTTP API (/api/v1, issue 35). Never edit once landed: add a new numbered file.
--
-- A token is `hri_<token_id>_<secret>`; only the SHA-256 of the 256-bit random secret is kept (secret_hash, hex),
-- never the secret. A request names its token by token_id (the key: one indexed read per request) and the secret is
-- compared in constant time (register.access.api_tokens). The token acts as its account with the account's role
-- at the time of each request: disabling the account ends its tokens, a role change applies at the next call.
-- created_at, expires_at and revoked_* are written by audited writes; last_used_at is bookkeeping, refreshed at
-- most once a minute per token outside the audit trail. No foreign key to users (the register declares none).
CREATE TABLE IF NOT EXISTS api_tokens (
    token_id     VARCHAR PRIMARY KEY,
    username     VARCHAR NOT NULL,
    name         VARCHAR,
    secret_hash  VARCHAR NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL,
    created_by   VARCHAR NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ,
    revoked_by   VARCHAR
);
