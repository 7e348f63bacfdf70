"""Label changes that would lower an answer's decision wait for a second person (issue 33, item 3).

Every revision made in the register goes through ``register.ingest.revise.revise_responses``, which asks
``hold_lowering`` first: each proposed revision whose decision (``register.scoring.preview.decision_of``, the
pure path on the register's current settings) is less severe than its current revision's at the same moment is
not stored. It is written to ``pending_label_changes`` (migration 034) with its origin, proposer, time and both
decisions, audited (``label_change.hold``). A change whose decision cannot be computed is held too (fail
closed). Until a reviewer other than the proposer approves it (``register.ingest.approvals``), the answer keeps
its labels and stays in the review queue, marked "lower-risk change pending" (``pending_keys_select``). What the
change stands for beyond its revision (an adjudication's label provenance, a feedback item's resolution) is held
with it as its follow-up and recorded only at approval.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from hri_core import Response
from hri_core.decision import Decision
from hri_core.fingerprint import canonical_json
from register.access.permissions import Permission, authorize
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.scoring.preview import RegisterSettings, decision_of, lowers, register_settings
from register.scoring.reproduce import load_response

__all__ = ["FOLLOW_UPS", "PENDING_MARK", "STATUSES", "hold_lowering", "list_pending", "pending_follow_up",
           "pending_keys_select"]

STATUSES = ("pending", "approved", "rejected")
PENDING_MARK = "lower-risk change pending"  # how the review queue marks such an answer
# what the approval of a held change may also record, with the revision it stores (register.ingest.approvals):
# an adjudication's label provenance, a feedback item's resolution
FOLLOW_UPS = ("label_provenance", "feedback_resolve")
_COLUMNS = ("change_id, response_id, base_revision, base_key, origin, subject, record, decision_before, "
            "decision_after, reasons_after, proposed_by, proposed_at, status, decided_by, decided_at, decision_note, "
            "applied_revision")


def pending_keys_select(p: Params | None = None) -> str:
    """A SELECT of the response keys with a lower-risk change pending (the review queue's marker).

    ``p`` is accepted for symmetry with the other key selects; nothing is bound."""
    return "SELECT base_key FROM pending_label_changes WHERE status = 'pending'"


def _current(store: Store, response_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    return {rid: (int(rev), int(key)) for rid, rev, key in store.query(
        "SELECT response_id, revision, response_key FROM responses WHERE is_current "
        "AND list_contains(?, response_id)", [sorted(set(response_ids))])}


def _compared(store: Store, before: Response, after: Response, as_of: datetime,
              settings: RegisterSettings) -> tuple[Decision, Decision] | None:
    """(current decision, proposed decision), or None when either cannot be computed (fail closed: held)."""
    try:
        return (decision_of(store, before, as_of=as_of, settings=settings),
                decision_of(store, after, as_of=as_of, settings=settings))
    except Exception:  # noqa: BLE001 -- any failure to decide means a person must look: the change is held
        return None


def hold_lowering(store: Store, actor: Actor, responses: Sequence[Response], *, origin: str,
                  subject: str, follow_ups: Mapping[str, dict] | None = None) -> tuple[list[Response], list[int]]:
    """The responses that may be stored now, and the ids of the pending changes written for the others (those
    whose proposed revision would lower the answer's decision, or whose decision cannot be computed).
    ``follow_ups``: by response id, what the approval of its held change also records (``FOLLOW_UPS``; migration
    037), stored with the change. Needs ``Permission.LABEL`` at least (``revise_responses`` checks the revision's
    own permission first)."""
    authorize(store, actor, Permission.LABEL, entity_type="response")
    current = _current(store, [r.response_id for r in responses])
    as_of = utc_now()
    before = {r.response_id: load_response(store, r.response_id) for r in responses if r.response_id in current}
    settings = register_settings(store, [*before.values(), *responses])  # read once for the whole batch
    free: list[Response] = []
    held: list[tuple[Response, Decision | None, Decision | None]] = []
    for response in responses:
        if response.response_id not in current:
            free.append(response)  # a new answer lowers nothing
            continue
        compared = _compared(store, before[response.response_id], response, as_of, settings)
        if compared is None:
            held.append((response, None, None))
        elif lowers(*compared):
            held.append((response, *compared))
        else:
            free.append(response)
    if not held:
        return free, []

    def write(tx: Transaction) -> Change:
        ids = [int(i) for (i,) in tx.query("SELECT nextval('seq_pending_change') FROM range(?)", [len(held)])]
        now = utc_now()
        rows = []
        for change_id, (response, before, after) in zip(ids, held, strict=True):
            revision, key = current[response.response_id]
            rows.append([change_id, response.response_id, revision, key, origin, subject[:500],
                         canonical_json(response.model_dump(mode="json"), ensure_ascii=False),
                         before.decision if before else "unknown", after.decision if after else "unknown",
                         json.dumps(list(after.reasons) if after else ["the decision could not be computed"]),
                         actor.name, now, "pending", _follow_up(follow_ups, response.response_id)])
        tx.executemany("INSERT INTO pending_label_changes (change_id, response_id, base_revision, base_key, origin, "
                       "subject, record, decision_before, decision_after, reasons_after, proposed_by, proposed_at, "
                       "status, follow_up) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        # one event per held change, filed under its id: an answer's life in the audit trail finds it by its id
        events: list[tuple[str, str, str | None, Any, Any]] = [
            ("label_change.hold", "label_change", str(r[0]), None,
             {"response_id": r[1], "revision": r[2], "origin": origin, "decision": f"{r[7]} -> {r[8]}"})
            for r in rows]
        first, *others = events
        return Change("label_change", first[2], None, first[4], result=ids, extra_events=others)

    ids: list[int] = store.write(actor, "label_change.hold", write)
    return free, ids


def _follow_up(follow_ups: Mapping[str, dict] | None, response_id: str) -> str | None:
    follow_up = (follow_ups or {}).get(response_id)
    if follow_up is None:
        return None
    unknown = sorted(set(follow_up) - set(FOLLOW_UPS))
    if unknown:  # a caller's mistake: the approval would not know what to do with it
        raise ValueError(f"unknown follow-up {', '.join(unknown)} of a held change; known: {', '.join(FOLLOW_UPS)}")
    return canonical_json(follow_up, ensure_ascii=False)


def pending_follow_up(store: Store, kind: str, key: str, value: int | str) -> int | None:
    """The id of a pending change whose follow-up ``kind`` has ``key`` equal to ``value`` (e.g. the pending
    resolution of feedback item 7: ``("feedback_resolve", "feedback_id", 7)``), or None."""
    if kind not in FOLLOW_UPS:
        raise ValueError(f"unknown follow-up {kind!r}")
    found = store.scalar("SELECT min(change_id) FROM pending_label_changes WHERE status = 'pending' "
                         "AND json_extract_string(follow_up, ?) = ?", [f"$.{kind}.{key}", str(value)])
    return None if found is None else int(found)


def list_pending(store: Store, *, status: str | None = "pending", response_id: str | None = None,
                 limit: int = 500) -> list[dict[str, Any]]:
    """Pending label changes (newest first), optionally of one status and one response; ``reasons_after`` as a
    list, without the proposed record."""
    rows = store.dicts(f"SELECT {_COLUMNS} FROM pending_label_changes WHERE (? IS NULL OR status = ?) "
                       "AND (? IS NULL OR response_id = ?) ORDER BY change_id DESC LIMIT ?",
                       [status, status, response_id, response_id, max(1, min(limit, 10_000))])
    for row in rows:
        row["reasons_after"] = json.loads(row["reasons_after"])
        del row["record"]
    return rows
