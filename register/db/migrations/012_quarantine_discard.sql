-- 012: a quarantined record can be discarded with a reason (kept, never deleted).
-- Never edit once landed: add a new numbered file instead.
--
-- The status CHECK of 001 allows only 'open' and 'resolved', and DuckDB cannot alter a CHECK constraint:
-- the table is rebuilt with the same columns (same order, same values) plus who discarded a row, when and
-- why. A discarded row stays in the table with its raw text and reasons; it no longer counts as open.
CREATE TABLE quarantine_012 (
    quarantine_id   INTEGER PRIMARY KEY,
    batch_id        INTEGER NOT NULL,
    source_name     VARCHAR NOT NULL,
    location        VARCHAR NOT NULL,          -- "line 12" or "rows 4,5,6"
    response_id     VARCHAR,
    raw             VARCHAR NOT NULL,          -- verbatim text of the rejected record
    reasons         JSON NOT NULL,             -- [{field, message}]
    created_at      TIMESTAMPTZ NOT NULL,
    status          VARCHAR NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved', 'discarded')),
    resolved_at     TIMESTAMPTZ,
    resolved_batch_id INTEGER,
    discarded_at    TIMESTAMPTZ,
    discarded_by    VARCHAR,
    discard_reason  VARCHAR,
    CHECK ((status = 'discarded') = (discarded_at IS NOT NULL AND discarded_by IS NOT NULL
                                     AND discard_reason IS NOT NULL))
);
INSERT INTO quarantine_012
SELECT quarantine_id, batch_id, source_name, location, response_id, raw, reasons, created_at, status,
       resolved_at, resolved_batch_id, NULL, NULL, NULL
FROM quarantine;
DROP TABLE quarantine;
ALTER TABLE quarantine_012 RENAME TO quarantine;
