"""The quarantine as a work list: its rows for the console's grid, and discarding a record with a reason.

Fixing a record is ``register.ingest.importer.reimport_quarantined`` (a new import batch resolves the
row). Discarding is the other way out of ``open``: the row keeps its raw text and reasons and gains
``status = 'discarded'``, who, when and why (migration 012); it is never deleted, and it no longer
counts as open (``status``, the console, ``quarantine list``). Both need ``Permission.IMPORT``.
"""

from __future__ import annotations

import json

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import InvalidDecision, NotFound, RegisterError

__all__ = ["MAX_REASON_CHARS", "STATUSES", "discard_quarantined", "quarantine_rows"]

STATUSES = ("open", "resolved", "discarded")
MAX_REASON_CHARS = 2000
_COLUMNS = ("quarantine_id, status, batch_id, source_name, location, response_id, raw, reasons, created_at, "
            "resolved_at, resolved_batch_id, discarded_at, discarded_by, discard_reason")


def quarantine_rows(store: Store, statuses: tuple[str, ...] = ("open",), *, limit: int = 500) -> list[dict]:
    """Quarantine rows of the given statuses, oldest first, at most ``limit``; ``reasons`` as a list."""
    unknown = [s for s in statuses if s not in STATUSES]
    if unknown:
        raise ValueError(f"unknown quarantine status(es) {unknown}; known: {STATUSES}")
    rows = store.dicts(f"SELECT {_COLUMNS} FROM quarantine WHERE list_contains(?, status) "
                       "ORDER BY quarantine_id LIMIT ?", [list(statuses), int(limit)])
    for row in rows:
        row["reasons"] = json.loads(row["reasons"]) if isinstance(row["reasons"], str) else row["reasons"]
    return rows


def discard_quarantined(store: Store, actor: Actor, quarantine_id: int, reason: str) -> None:
    """Close an open quarantine row without importing it: status ``discarded``, with who, when and why.

    The row is kept (raw text, reasons) and the write is audited as ``quarantine.discard``. Raises
    ``InvalidDecision`` for an empty or overlong reason, ``NotFound`` for an unknown row and
    ``RegisterError`` when the row is no longer open (fixed or discarded meanwhile).
    """
    authorize(store, actor, Permission.IMPORT, entity_type="quarantine", entity_id=quarantine_id)
    reason = (reason or "").strip()
    if not reason:
        raise InvalidDecision("reason", f"quarantine row {quarantine_id}: a discard needs a reason (why the "
                                        "record is not to be imported)")
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidDecision("reason", f"quarantine row {quarantine_id}: the reason has {len(reason):,} "
                                        f"characters; at most {MAX_REASON_CHARS:,}")

    def fn(tx: Transaction) -> Change:
        row = tx.one("SELECT status, source_name, location, response_id FROM quarantine WHERE quarantine_id = ?",
                     [quarantine_id])
        if row is None:
            raise NotFound(f"quarantine row {quarantine_id} does not exist")
        if row["status"] != "open":
            raise RegisterError(f"quarantine row {quarantine_id} is already {row['status']}: nothing to discard")
        now = utc_now()
        tx.execute("UPDATE quarantine SET status = 'discarded', discarded_at = ?, discarded_by = ?, "
                   "discard_reason = ? WHERE quarantine_id = ? AND status = 'open'",
                   [now, actor.name, reason, quarantine_id])
        return Change("quarantine", str(quarantine_id), row,
                      {"status": "discarded", "reason": reason, "discarded_at": now.isoformat()})

    store.write(actor, "quarantine.discard", fn)
