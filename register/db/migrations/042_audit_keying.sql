-- 042: the audit trail records where its keying began, and the register gets an id of its own (issue 34, class 5).
-- Never edit once landed: add a new numbered file instead.
--
-- audit_keying: one row per keyring the trail was signed under, written in the same transaction as the first event
-- that keyring signs (register.db.audit.record_keying) and by `audit rotate-key --lost`: the trail's head when the
-- keyring was made (the keyring file records the same head as keyed_after), the keyring's first key, and a check
-- value of that key (an HMAC of a fixed text under it: tells a substitute key apart without revealing the key).
-- Once a row exists, a missing keyring or another one fails `audit verify` and every write, and an unsigned event
-- after the first row's head is a forgery; the keyring is never made again without `audit rotate-key --lost`.
CREATE TABLE IF NOT EXISTS audit_keying (
    keyed_after_seq  BIGINT NOT NULL,
    keyed_after_hash VARCHAR NOT NULL,
    first_key        VARCHAR NOT NULL,
    key_check        VARCHAR,            -- NULL for the rows this migration recovers from the trail below
    recorded_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (keyed_after_seq, first_key)
);

-- A trail keyed before this migration: its first signed event follows the head its keyring was made at, and each
-- declared key loss (`audit.key_lost`, signed with the new keyring's first key) follows the head its keyring was
-- made at.
INSERT INTO audit_keying (keyed_after_seq, keyed_after_hash, first_key, key_check, recorded_at)
SELECT seq - 1, prev_hash, key_id, NULL, occurred_at
FROM audit_events
WHERE key_id IS NOT NULL
  AND (seq = (SELECT min(seq) FROM audit_events WHERE key_id IS NOT NULL) OR action = 'audit.key_lost')
ON CONFLICT DO NOTHING;

-- The register's id, written into every anchor kept outside the database (register.db.anchors): an anchor folder
-- that holds another register's anchors (a database file replaced at the same path) says so.
CREATE TABLE IF NOT EXISTS register_identity (
    register_id VARCHAR PRIMARY KEY,
    created_at  TIMESTAMPTZ NOT NULL
);
INSERT INTO register_identity (register_id, created_at)
SELECT CAST(gen_random_uuid() AS VARCHAR), current_timestamp
WHERE NOT EXISTS (SELECT 1 FROM register_identity);
