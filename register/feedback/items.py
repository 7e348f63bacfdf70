"""Validated feedback (paper section V.A): reported, validated or rejected by a second person, resolved.

"The (H) dimension should include only validated feedback, meaning feedback confirmed by a reviewer,
source check, or adjudication process." Anyone signed in reports a problem with an answer or one of its
claims, with a proposed severity q in [0, 1] (``report_feedback``). A reviewer other than the reporter
validates it, naming how it was confirmed (``validate_feedback``), or rejects it with a reason
(``reject_feedback``): four eyes. Later a reviewer resolves it, saying what fixed it
(``resolve_feedback``).

Only validation and resolution change a score, and never by editing a stored row: validation gives the
claim the label ``VALIDATED_NEGATIVE_FEEDBACK`` with ``feedback_at`` = the validation time, one more
``feedback_count`` and ``feedback_resolved`` false; resolution sets ``feedback_resolved`` once no validated
item of that claim is left open. Both go through ``register.ingest.revise.revise_responses`` (origin
``feedback``): the next revision of the response, audited and rescored. The feedback row then records
which revision carries the change (``validated_revision`` / ``resolved_revision``).

The revision is written before the feedback row (two transactions: the batch path writes its own). If
the second write failed, the label would stand without its validation record, and ``outside_register``
-- and with it the pre-submission checklist -- names exactly such labels: the failure is visible, never
silent.
"""

from __future__ import annotations

import math
from datetime import datetime

import pandas as pd

from hri_core import Claim, Label
from hri_core.vocabulary import cautious_label_set
from register.access.permissions import SYSTEM_ROLE, Permission, authorize, deny, require_other_person
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import InvalidFeedback, NotFound, PermissionDenied, RegisterError, StaleEdit
from register.governance.feedback_labels import validated_outside_register
from register.ingest.pending import pending_follow_up
from register.ingest.revise import revise_responses
from register.readmodels.response_ids import revisions_select
from register.scoring.reproduce import load_response

__all__ = ["MAX_TEXT", "STATES", "VALIDATION_METHODS", "feedback_item", "list_feedback", "outside_register",
           "reject_feedback", "report_feedback", "resolve_feedback", "settled_claim", "validate_feedback",
           "validated_claim"]

STATES = ("reported", "validated", "rejected", "resolved")
# how a validator confirmed the problem: the paper's "reviewer, source check, or adjudication process"
VALIDATION_METHODS = {"review": "confirmed by review", "source_check": "confirmed by a source check",
                      "adjudication": "confirmed by adjudication"}
MAX_TEXT = 4_000  # characters of a report, note, reason or resolution

_ENTITY = "feedback"
_COLUMNS = ("feedback_id, response_id, revision, claim_id, text, severity, reported_by, reported_role, reported_at, "
            "state, validated_by, validated_at, validation_method, validated_severity, validated_claim_id, "
            "validation_note, validated_revision, rejected_by, rejected_at, rejection_reason, resolved_by, "
            "resolved_at, resolution, resolved_revision")


def _text(value, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidFeedback(field, "is required: say what is wrong" if field == "text" else "is required")
    value = value.strip()
    if len(value) > MAX_TEXT:
        raise InvalidFeedback(field, f"{len(value):,} characters is more than the limit of {MAX_TEXT:,}")
    return value


def _severity(value, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 <= value <= 1.0:
        raise InvalidFeedback(field, f"must be a number from 0 to 1, got {value!r}")
    return float(value)


def _when(store: Store, actor: Actor, at: datetime | None, field: str, permission: Permission, *,
          entity_type: str = _ENTITY, entity_id=None, not_before: datetime | None = None) -> datetime:
    """The time a step is recorded at: now, or ``at`` for a history recorded after the fact (the demo's, or one
    carried over from another tool), which only the system role may give (a person's step happens when they take
    it); a refusal is audited under ``permission``, the step's own. ``at`` must carry its time zone, lie in the past
    and not before ``not_before`` (the step before it)."""
    if at is None:
        return utc_now()
    if actor.role != SYSTEM_ROLE:
        deny(store, actor, permission, entity_type, entity_id,
             f"{field}: only the system records feedback at a past time; a person's step is recorded when taken",
             PermissionDenied)
    if not isinstance(at, datetime) or at.tzinfo is None:
        raise InvalidFeedback(field, f"must be a time with its time zone, got {at!r}")
    if at > utc_now():
        raise InvalidFeedback(field, f"{at.isoformat()} is in the future")
    if not_before is not None and at < not_before:
        raise InvalidFeedback(field, f"{at.isoformat()} is before the step it follows ({not_before.isoformat()})")
    return at


def feedback_item(store: Store, feedback_id: int) -> dict:
    """One feedback item as a dict (every column), or ``NotFound``."""
    row = store.one(f"SELECT {_COLUMNS} FROM feedback_items WHERE feedback_id = ?", [feedback_id])
    if row is None:
        raise NotFound(f"feedback #{feedback_id} does not exist")
    return row


def list_feedback(store: Store, *, states: tuple[str, ...] = (), response_id: str | None = None,
                  limit: int = 500) -> pd.DataFrame:
    """Feedback items, newest report first, optionally of some states and of one response."""
    unknown = [s for s in states if s not in STATES]
    if unknown:
        raise InvalidFeedback("state", f"{', '.join(map(repr, unknown))} is not a state ({', '.join(STATES)})")
    return store.frame(
        f"SELECT {_COLUMNS} FROM feedback_items "
        "WHERE (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], state)) "
        "AND (?::VARCHAR IS NULL OR response_id = ?::VARCHAR) "
        "ORDER BY reported_at DESC, feedback_id DESC LIMIT ?",
        [list(states), list(states), response_id, response_id, int(limit)])


def outside_register(store: Store, *, limit: int | None = None) -> pd.DataFrame:
    """Current claims whose VALIDATED_NEGATIVE_FEEDBACK label has no validation record here: "validated outside
    the register" (``register.governance.feedback_labels``, which the checklist reads too)."""
    return validated_outside_register(store, limit=limit)


def report_feedback(store: Store, actor: Actor, response_id: str, text: str, severity: float, *,
                    claim_id: str | None = None, at: datetime | None = None) -> int:
    """Report a problem with a response (``claim_id`` None: the answer as a whole); returns the feedback id.

    ``severity`` is the reporter's proposed q in [0, 1]; the validator may change it. Nothing is scored.
    ``at``: when it was reported, for a history recorded after the fact (system role only; default now).
    """
    authorize(store, actor, Permission.FEEDBACK_SUBMIT, entity_type="response", entity_id=response_id)
    text = _text(text, "text")
    severity = _severity(severity, "severity")
    reported_at = _when(store, actor, at, "at", Permission.FEEDBACK_SUBMIT, entity_type="response",
                        entity_id=response_id)

    def fn(tx: Transaction) -> Change:
        revision = tx.scalar(f"SELECT revision FROM responses WHERE {revisions_select('?')} AND is_current",
                             [response_id, response_id])
        if revision is None:
            raise NotFound(f"response {response_id!r} does not exist")
        if claim_id is not None and not tx.scalar(
                "SELECT count(*) FROM claims WHERE response_id = ? AND revision = ? AND claim_id = ?",
                [response_id, revision, claim_id]):
            raise InvalidFeedback("claim_id", f"response {response_id!r} revision {revision} has no claim "
                                              f"{claim_id!r}")
        feedback_id = tx.scalar("SELECT nextval('seq_feedback')")
        at = reported_at
        tx.execute("INSERT INTO feedback_items (feedback_id, response_id, revision, claim_id, text, severity, "
                   "reported_by, reported_role, reported_at, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'reported')",
                   [feedback_id, response_id, revision, claim_id, text, severity, actor.name, actor.role, at])
        return Change(_ENTITY, str(feedback_id), None,
                      {"response_id": response_id, "revision": revision, "claim_id": claim_id, "text": text,
                       "severity": severity, "state": "reported", "reported_at": at.isoformat()},
                      result=feedback_id)

    return store.write(actor, "feedback.report", fn)


def _open_item(store: Store, actor: Actor, feedback_id: int, state: str, permission: Permission) -> dict:
    """The item, checked to be in ``state`` (else ``StaleEdit``)."""
    authorize(store, actor, permission, entity_type=_ENTITY, entity_id=feedback_id)
    item = feedback_item(store, feedback_id)
    if item["state"] != state:
        raise StaleEdit(f"feedback #{feedback_id} is {item['state']}, not {state}: reload")
    return item


def validated_claim(claim: Claim, validated_at: datetime) -> Claim:
    """The claim once feedback on it is validated: VALIDATED_NEGATIVE_FEEDBACK added to its labels (a SUPPORTED
    label gives way: confirmed wrong, and SUPPORTED stands alone, ``hri_core.vocabulary``), ``feedback_at`` =
    ``validated_at``, ``feedback_count`` + 1, ``feedback_resolved`` false; every other field as it was."""
    return claim.model_copy(update={
        "labels": cautious_label_set((*claim.labels, Label.VALIDATED_NEGATIVE_FEEDBACK)),
        "feedback_at": validated_at, "feedback_count": (claim.feedback_count or 0) + 1,
        "feedback_resolved": False})


def settled_claim(claim: Claim, *, resolved: bool) -> Claim:
    """The claim with ``feedback_resolved`` set; every other field as it was."""
    return claim.model_copy(update={"feedback_resolved": resolved})


def _revise_claim(store: Store, actor: Actor, response_id: str, claim_id: str, update, subject: str,
                  follow_up: dict | None = None) -> int | None:
    """Store the current revision of ``response_id`` with ``update(claim)`` applied to one claim; returns
    the new revision number (rescored by the batch path), or None when the change would lower the answer's
    decision and waits for a second person (``register.ingest.pending``)."""
    response = load_response(store, response_id)
    if claim_id not in {c.claim_id for c in response.claims}:
        raise InvalidFeedback("claim_id", f"the current revision of {response_id!r} has no claim {claim_id!r}")
    claims = [update(c) if c.claim_id == claim_id else c for c in response.claims]
    # a copy, not a re-validation: the stored text met the text limits in force when it was imported
    revised = response.model_copy(update={"claims": type(response.claims)(claims)})
    report = revise_responses(store, actor, [revised], origin="feedback", subject=subject,
                              permission=Permission.FEEDBACK_VALIDATE,
                              follow_ups={response_id: follow_up} if follow_up else None)
    if report.held:  # it would lower the decision: pending approval, the answer keeps its labels meanwhile
        return None
    if report.new_revisions != 1:  # quarantined or unchanged: the label did not land, say so (fail closed)
        raise RegisterError(f"{subject}: the revision was not stored ({report.quarantined} quarantined, "
                            f"{report.unchanged} unchanged; see import batch {report.batch_id})")
    return int(store.scalar(f"SELECT revision FROM responses WHERE {revisions_select('?')} AND is_current",
                            [response_id, response_id]))


def validate_feedback(store: Store, actor: Actor, feedback_id: int, method: str, *, severity: float | None = None,
                      claim_id: str | None = None, note: str | None = None, at: datetime | None = None) -> int:
    """Confirm a reported problem (four eyes: not by its reporter); returns the revision that carries it.

    ``method``: one of ``VALIDATION_METHODS``; ``severity``: q_j (default: the proposed one); ``claim_id``:
    the claim that gets the label (default: the reported claim; required for a report on the whole answer).
    The claim gets VALIDATED_NEGATIVE_FEEDBACK (in place of SUPPORTED, which stands alone), ``feedback_at`` = now,
    ``feedback_count`` + 1 and ``feedback_resolved`` false, as the response's next revision, rescored.
    ``at``: when it was validated, for a history recorded after the fact (system role only; default now).
    """
    item = _open_item(store, actor, feedback_id, "reported", Permission.FEEDBACK_VALIDATE)
    require_other_person(store, actor, item["reported_by"], Permission.FEEDBACK_VALIDATE, entity_type=_ENTITY,
                         entity_id=feedback_id, what=f"feedback #{feedback_id}")
    if method not in VALIDATION_METHODS:
        raise InvalidFeedback("method", f"{method!r} is not a validation method ({', '.join(VALIDATION_METHODS)})")
    q = _severity(item["severity"] if severity is None else severity, "severity")
    target = claim_id or item["claim_id"]
    if target is None:
        raise InvalidFeedback("claim_id", f"feedback #{feedback_id} is about the whole answer: name the claim "
                                          "the problem is in")
    note = None if note is None or not str(note).strip() else _text(note, "note")
    validated_at = _when(store, actor, at, "at", Permission.FEEDBACK_VALIDATE, entity_id=feedback_id,
                         not_before=item["reported_at"])

    def labelled(claim: Claim) -> Claim:
        return validated_claim(claim, validated_at)

    revision = _revise_claim(store, actor, item["response_id"], target, labelled,
                             f"feedback #{feedback_id} validated on claim {target} of {item['response_id']}")

    def fn(tx: Transaction) -> Change:
        changed = tx.execute(
            "UPDATE feedback_items SET state = 'validated', validated_by = ?, validated_at = ?, "
            "validation_method = ?, validated_severity = ?, validated_claim_id = ?, validation_note = ?, "
            "validated_revision = ? WHERE feedback_id = ? AND state = 'reported'",
            [actor.name, validated_at, method, q, target, note, revision, feedback_id])
        if not changed:
            raise StaleEdit(f"feedback #{feedback_id} was decided by someone else meanwhile: reload")
        return Change(_ENTITY, str(feedback_id), {"state": "reported"},
                      {"state": "validated", "method": method, "severity": q, "claim_id": target,
                       "response_id": item["response_id"], "revision": revision,
                       "validated_at": validated_at.isoformat(), "note": note}, result=revision)

    return store.write(actor, "feedback.validate", fn)


def reject_feedback(store: Store, actor: Actor, feedback_id: int, reason: str) -> None:
    """Reject a reported problem with a reason (four eyes: not by its reporter). Nothing is scored."""
    item = _open_item(store, actor, feedback_id, "reported", Permission.FEEDBACK_VALIDATE)
    require_other_person(store, actor, item["reported_by"], Permission.FEEDBACK_VALIDATE, entity_type=_ENTITY,
                         entity_id=feedback_id, what=f"feedback #{feedback_id}")
    reason = _text(reason, "reason")

    def fn(tx: Transaction) -> Change:
        at = utc_now()
        changed = tx.execute("UPDATE feedback_items SET state = 'rejected', rejected_by = ?, rejected_at = ?, "
                             "rejection_reason = ? WHERE feedback_id = ? AND state = 'reported'",
                             [actor.name, at, reason, feedback_id])
        if not changed:
            raise StaleEdit(f"feedback #{feedback_id} was decided by someone else meanwhile: reload")
        return Change(_ENTITY, str(feedback_id), {"state": "reported"},
                      {"state": "rejected", "reason": reason, "rejected_at": at.isoformat()})

    store.write(actor, "feedback.reject", fn)


def resolve_feedback(store: Store, actor: Actor, feedback_id: int, resolution: str, *,
                     at: datetime | None = None) -> int | None:
    """Mark a validated problem resolved, saying what fixed it; returns the revision that records it.

    The claim's ``feedback_resolved`` becomes true (in a new revision, rescored) once no other validated
    item on it is open; while one is, nothing is scored and None is returned. None too when marking it
    resolved would lower the answer's decision: that change waits for a second reviewer
    (``register.ingest.pending``) and the item stays validated until it is approved (the approval records the
    resolution; a rejection leaves it open to resolve again). The count stays: the paper's floor fires on repeated
    feedback even when resolved.
    """
    item = _open_item(store, actor, feedback_id, "validated", Permission.FEEDBACK_VALIDATE)
    resolution = _text(resolution, "resolution")
    still_open = store.scalar(
        "SELECT count(*) FROM feedback_items WHERE response_id = ? AND validated_claim_id = ? "
        "AND state = 'validated' AND feedback_id <> ?",
        [item["response_id"], item["validated_claim_id"], feedback_id])
    resolved_at = _when(store, actor, at, "at", Permission.FEEDBACK_VALIDATE, entity_id=feedback_id,
                        not_before=item["validated_at"])
    waiting = pending_follow_up(store, "feedback_resolve", "feedback_id", feedback_id)
    if waiting is not None:
        raise StaleEdit(f"feedback #{feedback_id}: its resolution already waits for a second reviewer "
                        f"(label change {waiting})")

    def settled(claim: Claim) -> Claim:
        return settled_claim(claim, resolved=not still_open)

    # held (it would lower the decision): the item stays validated until a second reviewer approves the change,
    # whose approval records this resolution with the revision it stores (register.ingest.approvals)
    follow_up = {"feedback_resolve": {"feedback_id": feedback_id, "resolution": resolution,
                                      "resolved_by": actor.name, **({"resolved_at": resolved_at.isoformat()}
                                                                    if at is not None else {})}}
    revision = _revise_claim(store, actor, item["response_id"], item["validated_claim_id"], settled,
                             f"feedback #{feedback_id} resolved on claim {item['validated_claim_id']} of "
                             f"{item['response_id']}", follow_up) if not still_open else None
    if revision is None and not still_open:
        return None

    def fn(tx: Transaction) -> Change:
        changed = tx.execute(
            "UPDATE feedback_items SET state = 'resolved', resolved_by = ?, resolved_at = ?, resolution = ?, "
            "resolved_revision = ? WHERE feedback_id = ? AND state = 'validated'",
            [actor.name, resolved_at, resolution, revision, feedback_id])
        if not changed:
            raise StaleEdit(f"feedback #{feedback_id} was resolved by someone else meanwhile: reload")
        return Change(_ENTITY, str(feedback_id), {"state": "validated"},
                      {"state": "resolved", "resolution": resolution, "resolved_at": resolved_at.isoformat(),
                       "revision": revision, "claim_feedback_resolved": not still_open}, result=revision)

    result: int | None = store.write(actor, "feedback.resolve", fn)
    return result
