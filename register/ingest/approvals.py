"""Approving or rejecting a label change that would lower an answer's decision (``register.ingest.pending``).

Four eyes: the approver holds review permission (``Permission.REVIEW_DECIDE``, checked against the account's
current state) and is not the proposer (refused and audited otherwise). An approved change is stored as the
answer's next revision through ``revise_responses`` (scored, audited) -- unless the answer was revised since the
change was proposed, which is refused as stale. With the revision, the approval records what the change stood for
beyond it (its follow-up, migration 037): an adjudication's label provenance, a feedback item's resolution (by the
reviewer who resolved it). A rejection needs a reason and records none of it. Both are audited
(``label_change.approve`` / ``label_change.reject``).
"""

from __future__ import annotations

import json
from datetime import datetime

from hri_core import parse_response
from hri_core.models import NO_TEXT_LIMITS
from register.access.permissions import Permission, authorize, require_other_person
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, RegisterError, StaleEdit
from register.ingest.revise import revise_responses

__all__ = ["approve_change", "reject_change"]

_ENTITY = "label_change"


def _open_change(store: Store, actor: Actor, change_id: int) -> dict:
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type=_ENTITY, entity_id=change_id)
    row = store.one("SELECT * FROM pending_label_changes WHERE change_id = ?", [int(change_id)])
    if row is None:
        raise NotFound(f"label change {change_id} does not exist")
    if row["status"] != "pending":
        raise RegisterError(f"label change {change_id} is already {row['status']}")
    require_other_person(store, actor, row["proposed_by"], Permission.REVIEW_DECIDE, entity_type=_ENTITY,
                         entity_id=change_id, what=f"label change {change_id}")
    return row


def approve_change(store: Store, actor: Actor, change_id: int, note: str | None = None) -> int:
    """Store the pending change as the answer's next revision; returns that revision."""
    row = _open_change(store, actor, change_id)
    current = store.scalar("SELECT revision FROM responses WHERE is_current AND response_id = ?",
                           [row["response_id"]])
    if current != row["base_revision"]:
        raise StaleEdit(f"label change {change_id}: response {row['response_id']} was revised since it was proposed "
                        f"(revision {current}, the change was made on {row['base_revision']}); reject it and "
                        "decide again")
    resolution = (json.loads(row.get("follow_up") or "null") or {}).get("feedback_resolve")
    if resolution and store.scalar("SELECT state FROM feedback_items WHERE feedback_id = ?",
                                   [int(resolution["feedback_id"])]) != "validated":
        raise StaleEdit(f"label change {change_id}: feedback #{resolution['feedback_id']} is no longer validated "
                        "(decided meanwhile): reject this change")
    response = parse_response(json.loads(row["record"]), record=row["response_id"], limits=NO_TEXT_LIMITS)
    report = revise_responses(store, actor, [response], origin=row["origin"], permission=Permission.REVIEW_DECIDE,
                              subject=f"label change {change_id} approved: {row['subject']}"[:500],
                              hold_lowering=False)
    revision = int(store.scalar("SELECT revision FROM responses WHERE is_current AND response_id = ?",
                                [row["response_id"]]))

    def write(tx: Transaction) -> Change:
        changed = tx.execute("UPDATE pending_label_changes SET status = 'approved', decided_by = ?, decided_at = ?, "
                             "decision_note = ?, applied_revision = ? WHERE change_id = ? AND status = 'pending'",
                             [actor.name, utc_now(), (note or "").strip() or None, revision, int(change_id)])
        if not changed:
            raise StaleEdit(f"label change {change_id} was decided by someone else meanwhile: reload")
        recorded = _record_follow_up(tx, actor, row, revision)
        return Change(_ENTITY, str(change_id), {"status": "pending"},
                      {"status": "approved", "response_id": row["response_id"], "revision": revision,
                       "batch_id": report.batch_id, "decision": f"{row['decision_before']} -> "
                                                                f"{row['decision_after']}",
                       **({"follow_up": recorded} if recorded else {})}, result=revision)

    result: int = store.write(actor, "label_change.approve", write)
    return result


def _record_follow_up(tx: Transaction, actor: Actor, row: dict, revision: int) -> dict:
    """Record what the approved change stood for beyond its revision (``pending.FOLLOW_UPS``), with that revision;
    returns it for the audit event ({} when none). A feedback item resolved meanwhile by someone else is refused."""
    follow_up = json.loads(row.get("follow_up") or "null") or {}
    provenance = follow_up.get("label_provenance")
    if provenance:  # an adjudication's labels: who agreed or decided them, under which rubric (label_provenance)
        now = utc_now()
        tx.executemany("INSERT OR REPLACE INTO label_provenance VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       [(row["response_id"], revision, claim_id, label, how, provenance["batch_id"], adjudication,
                         provenance["rubric_version"], now)
                        for claim_id, label, how, adjudication in provenance["rows"]])
    resolution = follow_up.get("feedback_resolve")
    if resolution:  # a validated feedback item's resolution, which the held revision records
        changed = tx.execute(
            "UPDATE feedback_items SET state = 'resolved', resolved_by = ?, resolved_at = ?, resolution = ?, "
            "resolved_revision = ? WHERE feedback_id = ? AND state = 'validated'",
            [resolution["resolved_by"], _resolved_at(resolution), resolution["resolution"], revision,
             int(resolution["feedback_id"])])
        if not changed:
            raise StaleEdit(f"label change {row['change_id']}: feedback #{resolution['feedback_id']} is no longer "
                            "validated (decided meanwhile): reject this change")
    return follow_up


def _resolved_at(resolution: dict) -> datetime:
    """When the held resolution is recorded: the time the system gave it (a history recorded after the fact,
    ``register.feedback.items``), else now."""
    given = resolution.get("resolved_at")
    return datetime.fromisoformat(given) if given else utc_now()


def reject_change(store: Store, actor: Actor, change_id: int, reason: str) -> None:
    """Reject the pending change with a reason: the answer keeps its labels."""
    row = _open_change(store, actor, change_id)  # the permission first: a refusal says nothing of the input
    if not (reason or "").strip():
        raise RegisterError(f"label change {change_id}: reason: say why the change is rejected")

    def write(tx: Transaction) -> Change:
        changed = tx.execute("UPDATE pending_label_changes SET status = 'rejected', decided_by = ?, decided_at = ?, "
                             "decision_note = ? WHERE change_id = ? AND status = 'pending'",
                             [actor.name, utc_now(), reason.strip()[:2000], int(change_id)])
        if not changed:
            raise StaleEdit(f"label change {change_id} was decided by someone else meanwhile: reload")
        return Change(_ENTITY, str(change_id), {"status": "pending"},
                      {"status": "rejected", "response_id": row["response_id"], "reason": reason.strip()[:2000]})

    store.write(actor, "label_change.reject", write)
