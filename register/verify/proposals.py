"""Machine verdicts waiting for a person: list them, confirm (or correct) and reject them.

A confirmed proposal sets its claim's label -- the judge's, or the label the person chose instead -- and the
criticality, category, source and span the person gives (each left as the claim has it when not given) as a new
revision of the response; every other field of the claim and the response is copied from the revision before
(``register.ingest.revise.revised_claim``). The revision goes through
``register.ingest.revise.revise_responses(origin="verification")`` (audited and scored). A rejected one changes
no label: the claim keeps the label it has (a person's, or the unverified UNSUPPORTED of a claim the pipeline
extracted) until someone labels it. A proposal whose claim changed since the run (another revision moved or
reworded it) is refused as stale, naming it; nothing of the decision is then written.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hri_core.errors import RecordError
from hri_core.models import parse_response
from hri_core.vocabulary import Label
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, RegisterError
from register.ingest.revise import revise_responses, revised_claim
from register.labels.workbench import retrieved_chunks
from register.scoring.reproduce import load_response

__all__ = ["Decision", "decide_proposals", "list_proposals", "proposal_counts", "proposal_item", "proposal_responses"]

STATUSES = ("proposed", "confirmed", "rejected", "applied")
_COLUMNS = ("proposal_id, run_id, response_id, claim_idx, claim_id, claim_text, category, stakes, criticality, span, "
            "evidence_index, link_score, unlinked, label, confidence, abstained, reason, target_label, backend, "
            "judge_profile, status, final_label, decided_by, decided_at, policy_version, cited_sentences, created_at")


@dataclass(frozen=True)
class Decision:
    """A person's decision on one proposal: ``confirm`` (with ``label`` to correct it) or ``reject``.

    A confirmation also sets the claim's ``criticality``, ``category``, ``source_id`` and ``span`` when given:
    None keeps the claim's current value, a blank text clears it."""

    proposal_id: int
    action: str
    label: Label | None = None
    criticality: int | None = None
    category: str | None = None
    source_id: str | None = None
    span: str | None = None

    def decided_fields(self) -> dict[str, Any]:
        """The claim fields this decision sets besides the label (a blank text: the field is cleared)."""
        fields: dict[str, Any] = {} if self.criticality is None else {"criticality": self.criticality}
        for name in ("category", "source_id", "span"):
            value = getattr(self, name)
            if value is not None:
                fields[name] = value.strip() or None
        return fields


# the claim as it stands now, beside each proposal: what a confirmation keeps unless the person changes it
_CURRENT = ("c.criticality AS current_criticality, c.category AS current_category, "
            "c.source_id AS current_source_id, c.span AS current_span, "
            "json_extract_string(r.retrieved_context, '$[*].source_id') AS context_sources")
_CURRENT_JOIN = ("LEFT JOIN claims c ON c.is_current AND c.response_id = p.response_id AND c.claim_idx = p.claim_idx "
                 "AND c.claim_id = p.claim_id LEFT JOIN responses r ON r.is_current AND r.response_id = p.response_id")


def _qualified(columns: str) -> str:
    return ", ".join(f"p.{name.strip()}" for name in columns.split(","))


def list_proposals(store: Store, *, status: str | None = "proposed", response_id: str | None = None,
                   limit: int = 500) -> list[dict[str, Any]]:
    """Proposals (newest run first, then response and claim), optionally of one status and one response; each
    with its claim as it stands now (``current_criticality``, ``current_category``, ``current_source_id``,
    ``current_span``; None when the claim changed or is gone) and the sources of the answer's retrieved context
    (``context_sources``): the choices and defaults of the confirm / correct form."""
    if status is not None and status not in STATUSES:
        raise RegisterError(f"status {status!r} is not one of {', '.join(STATUSES)}")
    return _with_sources(store.dicts(
        f"SELECT {_qualified(_COLUMNS)}, {_CURRENT} FROM judge_proposals p {_CURRENT_JOIN} "
        "WHERE (? IS NULL OR p.status = ?) AND (? IS NULL OR p.response_id = ?) "
        "ORDER BY p.run_id DESC, p.response_id, p.claim_idx LIMIT ?",
        [status, status, response_id, response_id, max(1, min(limit, 10_000))]))


def _with_sources(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for row in rows:
        row["context_sources"] = list(dict.fromkeys(s for s in row["context_sources"] or [] if s))
    return rows


def proposal_counts(store: Store) -> dict[str, int]:
    """Proposals by status."""
    counts = {status: 0 for status in STATUSES}
    counts.update({status: int(n) for status, n in store.query(
        "SELECT status, count(*) FROM judge_proposals GROUP BY status")})
    return counts


def proposal_responses(store: Store, actor: Actor, *, limit: int = 500) -> list[dict[str, Any]]:
    """The responses with proposals waiting for a person (the workbench's queue), newest run first: each with
    its number of ``proposals``, of ``abstained`` verdicts and of ``unlinked`` claims."""
    authorize(store, actor, Permission.LABEL, entity_type="judge_proposal")
    return store.dicts("SELECT response_id, count(*) AS proposals, count(*) FILTER (WHERE abstained) AS abstained, "
                       "count(*) FILTER (WHERE unlinked) AS unlinked, max(run_id) AS run_id FROM judge_proposals "
                       "WHERE status = 'proposed' GROUP BY response_id ORDER BY max(run_id) DESC, response_id LIMIT ?",
                       [max(1, min(limit, 10_000))])


def proposal_item(store: Store, actor: Actor, response_id: str) -> dict[str, Any]:
    """What a person confirming one response's proposals sees: the current revision's ``question``, ``answer``,
    ``use_case``, ``model`` and retrieved ``context`` (chunks), and its waiting ``proposals``, each with its
    provenance (judge profile, backend, confidence, reason, linked span, and the run: ``run_source``,
    ``run_started_at``, ``run_by``).

    Unlike a labelling batch this is not blind: a proposal *is* the machine's verdict, shown so that a person
    confirms, corrects or rejects it."""
    authorize(store, actor, Permission.LABEL, entity_type="judge_proposal", entity_id=response_id)
    row = store.one("SELECT revision, question, answer, use_case, model, raw FROM responses "
                    "WHERE response_id = ? AND is_current", [response_id])
    if row is None:
        raise NotFound(f"response {response_id!r} is not in the register")
    waiting = _with_sources(store.dicts(
        f"SELECT {_qualified(_COLUMNS)}, {_CURRENT}, v.source_name AS run_source, v.started_at AS run_started_at, "
        f"v.actor_name AS run_by FROM judge_proposals p JOIN verification_runs v ON v.run_id = p.run_id "
        f"{_CURRENT_JOIN} WHERE p.status = 'proposed' AND p.response_id = ? ORDER BY p.run_id DESC, p.claim_idx",
        [response_id]))
    return {"response_id": response_id, "revision": row["revision"], "question": row["question"],
            "answer": row["answer"], "use_case": row["use_case"], "model": row["model"],
            "context": retrieved_chunks(row["raw"]), "proposals": waiting}


def decide_proposals(store: Store, actor: Actor, decisions: Sequence[Decision]) -> dict[str, Any]:
    """Confirm or reject proposals; confirmed labels reach the claims as one new revision per response.

    Returns ``{"confirmed", "rejected", "batch_id", "score_run_id", "held"}`` (``held``: the pending label
    changes of confirmations that would lower an answer's decision, waiting for a second person). Refused
    (nothing written) when a proposal is unknown or already decided, a confirmation of an abstention has no label,
    or a claim is stale.
    """
    authorize(store, actor, Permission.LABEL, entity_type="judge_proposal")
    if not decisions:
        raise RegisterError("no decision given")
    ids = [d.proposal_id for d in decisions]
    if len(set(ids)) != len(ids):
        raise RegisterError("a proposal is decided twice in one submission")
    rows = {r["proposal_id"]: r for r in store.dicts(
        f"SELECT {_COLUMNS} FROM judge_proposals WHERE proposal_id IN (SELECT unnest(?::BIGINT[]))", [ids])}
    finals: dict[int, Label | None] = {}
    fields = {d.proposal_id: d.decided_fields() for d in decisions}
    for decision in decisions:
        row = rows.get(decision.proposal_id)
        if row is None:
            raise NotFound(f"proposal {decision.proposal_id} does not exist")
        if row["status"] != "proposed":
            raise RegisterError(f"proposal {decision.proposal_id} is already {row['status']}")
        if decision.action == "reject":
            finals[decision.proposal_id] = None
        elif decision.action == "confirm":
            label = Label(decision.label) if decision.label else (Label(row["label"]) if row["label"] else None)
            if label is None:
                raise RegisterError(f"proposal {decision.proposal_id}: the judge abstained; confirming it needs "
                                    "the label you give the claim")
            finals[decision.proposal_id] = label
        else:
            raise RegisterError(f"proposal {decision.proposal_id}: action {decision.action!r} is not confirm or reject")
    confirmed = [rows[i] for i, label in finals.items() if label is not None]
    batch = None
    if confirmed:
        responses = _revised(store, confirmed, finals, fields)
        shown = ", ".join(str(r["proposal_id"]) for r in confirmed[:20])
        batch = revise_responses(store, actor, responses, origin="verification",
                                 subject=f"confirmed judge proposals {shown}", permission=Permission.LABEL)

    def write(tx: Transaction) -> Change:
        now = utc_now()
        tx.executemany("UPDATE judge_proposals SET status = ?, final_label = ?, decided_by = ?, decided_at = ? "
                       "WHERE proposal_id = ? AND status = 'proposed'",
                       [["confirmed" if label else "rejected", label.value if label else None, actor.name, now, pid]
                        for pid, label in finals.items()])
        after = {str(pid): (label.value if label else "rejected") for pid, label in finals.items()}
        return Change("judge_proposal", None, None, {"decisions": after,
                                                     "batch_id": batch.batch_id if batch else None,
                                                     "held": list(batch.held) if batch else []})

    store.write(actor, "judge_proposal.decide", write)
    return {"confirmed": len(confirmed), "rejected": len(finals) - len(confirmed),
            "batch_id": batch.batch_id if batch and batch.batch_id else None,
            "score_run_id": batch.score_run_id if batch else None, "held": list(batch.held) if batch else []}


def _revised(store: Store, confirmed: list[dict[str, Any]], finals: dict[int, Label | None],
             fields: dict[int, dict[str, Any]]) -> list[Any]:
    """The current revision of each response with the confirmed labels (and the fields the person set) on their
    claims, everything else as it was; stale claims refused."""
    by_response: dict[str, list[dict[str, Any]]] = {}
    for row in confirmed:
        by_response.setdefault(row["response_id"], []).append(row)
    current = {rid: raw for rid, raw in store.query(
        "SELECT response_id, raw FROM responses WHERE is_current AND response_id IN (SELECT unnest(?::VARCHAR[]))",
        [list(by_response)])}
    out = []
    for response_id, rows in by_response.items():
        if response_id not in current:
            raise NotFound(f"response {response_id} is not in the register")
        record = json.loads(current[response_id]) if current[response_id] else None
        if not isinstance(record, dict):  # a flat-table record: its stored columns
            record = load_response(store, response_id).model_dump(mode="json")
        claims = list(record.get("claims") or [])
        for row in rows:
            idx = row["claim_idx"]
            claim = claims[idx] if idx < len(claims) else None
            if claim is None or claim.get("claim_id") != row["claim_id"] or claim.get("text") != row["claim_text"]:
                raise RegisterError(f"proposal {row['proposal_id']}: claim {row['claim_id']} of {response_id} changed "
                                    "since it was verified (stale); verify the response again")
            label = finals[row["proposal_id"]]
            assert label is not None
            claims[idx] = revised_claim(claim, {"labels": [label.value], **fields[row["proposal_id"]]})
        try:
            out.append(parse_response({**record, "claims": claims}, record=response_id))
        except RecordError as error:
            raise RegisterError(f"response {response_id}: {error}") from error
    return out
