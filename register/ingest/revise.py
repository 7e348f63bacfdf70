"""New revisions of responses made inside the register (adjudicated labels, validated feedback, verified
claims), stored and scored exactly as an imported revision is.

Labels that people or judges change in the console never edit a stored row: the changed response is
merged by the same batch path as an import (``register.ingest.batches.run_batch``), so it becomes the
next revision (the previous one stays, with its score), it is audited (``import.start`` /
``import.batch`` with the batch's source and format), and the active profile scores it. The batch's
``format`` says where the revision came from (``revision:adjudication``, ``revision:feedback``...), its
``source_name`` what it is about, so the batch history reads as the label's provenance. As an import, the
batch ends in ``register.readmodels.hub.revisions_committed``: the new revisions are in the search index as soon
as they are stored, or, in the console, as soon as its background catch-up has taken them (``search_catchup``; a
search finds them meanwhile by a scan).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hri_core import Response
from hri_core.fingerprint import canonical_json
from hri_core.vocabulary import Label
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import RegisterError
from register.ingest import pending
from register.ingest.batches import run_batch
from register.ingest.items import Item
from register.ingest.reports import BatchReport, ImportReport
from register.readmodels import hub
from register.scoring.profiles import active_profile

__all__ = ["REVISION_ORIGINS", "revise_responses", "revised_claim"]

# Where a revision made in the register comes from (the batch format is ``revision:<origin>``).
REVISION_ORIGINS = ("adjudication", "annotation", "feedback", "verification")

_CHUNK = 5_000


def revised_claim(before: Mapping[str, Any], decided: Mapping[str, Any]) -> dict[str, Any]:
    """A claim's next revision (JSON form): ``before`` with the fields a person ``decided`` set, every other
    field -- source, span, evidence, ``contradicted_by``, category, ``is_core``, entailment, feedback -- copied.

    A decided None clears that field. Two fields follow the labels rather than the copy: ``contradicted_by``
    belongs to a CONTRADICTED claim only (dropped when the decided labels no longer say CONTRADICTED), and a
    VALIDATED_NEGATIVE_FEEDBACK label stays (only the feedback workflow sets or settles it)."""
    claim = {**before, **decided}
    labels = [str(label) for label in claim.get("labels") or []]
    feedback = Label.VALIDATED_NEGATIVE_FEEDBACK.value
    if "labels" in decided:
        if feedback in (before.get("labels") or []) and feedback not in labels:
            labels.append(feedback)
        if Label.CONTRADICTED.value not in labels:
            claim.pop("contradicted_by", None)
        claim["labels"] = labels
    return {name: value for name, value in claim.items() if value is not None}


def revise_responses(store: Store, actor: Actor, responses: list[Response], *, origin: str, subject: str,
                     permission: Permission, score: bool = True, hold_lowering: bool = True,
                     follow_ups: Mapping[str, dict] | None = None) -> BatchReport:
    """Store each response as its next revision (unchanged ones count as unchanged) in one batch, and score.

    ``origin``: one of ``REVISION_ORIGINS``; ``subject``: what the change is about, in words (it becomes
    the batch's source name, e.g. ``"adjudication of claim c3 of r-17"``); ``permission``: what the
    actor must hold for this kind of change (checked here after ``LABEL``, which every origin implies,
    against the account's current state).
    Returns the batch report (``new_revisions``, ``unchanged``, ``score_run_id``...).

    Nothing lowers risk unseen: a revision that would lower its answer's decision is not stored but held as a
    pending label change for a second person (``register.ingest.pending.hold_lowering``; its id in the report's
    ``held``), with ``follow_ups[response_id]``: what its approval also records (``pending.FOLLOW_UPS``).
    ``hold_lowering=False`` only for the approval of such a change (``register.ingest.approvals``).
    When every revision is held no batch runs: the report's ``batch_id`` is 0.
    """
    # every origin changes labels: that much is checked before any argument is read; then the caller's own
    authorize(store, actor, Permission.LABEL, entity_type="response")
    if origin not in REVISION_ORIGINS:
        raise RegisterError(f"{origin!r} is not a revision origin ({', '.join(REVISION_ORIGINS)})")
    authorize(store, actor, permission, entity_type="response")
    if not responses:
        raise RegisterError("nothing to revise: no responses given")
    held: list[int] = []
    if hold_lowering:
        responses, held = pending.hold_lowering(store, actor, responses, origin=origin, subject=subject,
                                                follow_ups=follow_ups)
        if not responses:
            return BatchReport(batch_id=0, source_name=subject, format=f"revision:{origin}", held=held,
                               notes=[f"{len(held)} change(s) would lower the decision: pending a second person"])
    items = []
    for position, response in enumerate(responses, start=1):
        record = response.model_dump(mode="json")
        raw = canonical_json(record, ensure_ascii=False, compact=False)  # the raw text revisions have always stored
        items.append(Item(f"{origin} {position}", raw, record, [], response.response_id))
    profile = active_profile(store) if score else None
    report = ImportReport()
    batch = run_batch(store, actor, source_name=subject, fmt=f"revision:{origin}", sha256=None, items=iter(items),
                      notes=[f"{origin} by {actor.name}"], chunk_size=_CHUNK, profile=profile, report=report)
    hub.revisions_committed(store, actor)  # the new revisions into the search index (now, or the console's thread)
    batch.held = held
    return batch
