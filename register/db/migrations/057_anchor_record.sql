-- 057: the register records the newest anchor it wrote outside the database (issue 34, class 5).
-- Never edit once landed: add a new numbered file instead.
--
-- One row, written in the transaction of a write whose head is anchored (register.db.anchors.AnchorFolder.due): the
-- anchored event, when, the anchor folder and the database file it was written for. `audit verify` then tells a
-- deleted or truncated anchor file ("the register recorded an anchor of event N ... the folder holds none that
-- recent") from a register that never kept one, where before both read "no anchor kept yet". A register copied or
-- moved to another path, or pointed at another anchor folder, is told apart by the two paths.
CREATE TABLE IF NOT EXISTS audit_anchor_record (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    seq         BIGINT NOT NULL,
    anchored_at TIMESTAMPTZ NOT NULL,
    folder      VARCHAR NOT NULL,
    database    VARCHAR NOT NULL
);
