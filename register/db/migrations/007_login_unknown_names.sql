-- 007: failed logins with names that are no account, counted per time window. Never edit once landed:
-- add a new numbered file instead.
--
-- Such a name is chosen by whoever types it, so each failure must not become an audit event of its own
-- (an attacker could grow the trail without bound and put any text into it). The register writes one
-- `login.failed_unknown` event when a window sees its first such failure (carrying the final tally of
-- the previous window) and counts the rest here: one row per window that had any, whatever the names.
-- Names are kept only as short digests (register/access/login_failures.py says why).

CREATE TABLE IF NOT EXISTS login_unknown_windows (
    window_start  TIMESTAMPTZ PRIMARY KEY,
    window_end    TIMESTAMPTZ NOT NULL,
    failures      BIGINT NOT NULL,
    first_at      TIMESTAMPTZ NOT NULL,
    last_at       TIMESTAMPTZ NOT NULL,
    name_digests  VARCHAR[] NOT NULL,          -- distinct names seen, as digests, at most 50
    sealed        BOOLEAN NOT NULL DEFAULT false  -- its final tally is in the audit trail
);
