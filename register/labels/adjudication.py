"""Disagreements and their adjudication; the resolved labels become a new revision of the response.

The paper: "Disagreements may be resolved by majority vote, expert adjudication, or a documented escalation
rule." A unit of a complete response (every annotator finished it) whose readings differ is in the
queue (``queue``). Its adjudication records one rule with a reason and the adjudicator, who may not be
one of the batch's annotators (four eyes):

* ``majority``: the reading a strict majority of the annotators gave (there is none between two
  annotators who disagree: use another rule);
* ``expert``: the adjudicator's own reading;
* ``escalation`` (the documented rule, ``escalated_reading``): the most cautious reading: the union of
  the annotators' labels (SUPPORTED dropped when any other label is there, PARTIAL when UNSUPPORTED is:
  ``hri_core.vocabulary.cautious_label_set``), the highest criticality
  and its category, the profile's default dimensions; the claim is kept if any annotator kept it.

When every unit of a response is agreed or adjudicated, ``apply_resolved`` stores the resolved claims as
the next revision through ``register.ingest.revise.revise_responses`` (``origin="adjudication"``, or
``"annotation"`` when nobody disagreed), which audits and rescores it, and records the provenance of
every label (``label_provenance``: annotated, adjudicated, or imported for a validated-feedback label
kept from the record). The revision decides labels and criticality, and category, dimensions, source and span
where the resolved reading gives them; every other field of the claim (and those left blank) is copied from the
revision drawn (``register.ingest.revise.revised_claim``). A response revised since the batch was drawn is not
applied (it is named).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from hri_core import Response, parse_response
from hri_core.models import NO_TEXT_LIMITS
from hri_core.vocabulary import Label, cautious_label_set
from register.access.permissions import Permission, authorize, require_other_person
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import LabellingError, NotFound
from register.ingest.revise import revise_responses, revised_claim
from register.labels.batches import batch
from register.labels.units import readings_sql, unit_status_sql
from register.labels.workbench import checked_reading
from register.readmodels.response_ids import revisions_select
from register.scoring.reproduce import load_response

__all__ = ["RULES", "ApplyReport", "adjudicate", "apply_resolved", "current_score", "escalated_reading",
           "label_provenance", "queue", "unit_readings"]

RULES = ("majority", "expert", "escalation")


def _adjudicator(store: Store, actor: Actor, batch_id: int, entity_id: str) -> dict:
    """The batch, when ``actor`` may adjudicate it: holds the permission and is none of its annotators."""
    authorize(store, actor, Permission.ADJUDICATE, entity_type="label_batch", entity_id=entity_id)
    record = batch(store, batch_id)
    for annotator in record["annotators"]:
        require_other_person(store, actor, annotator, Permission.ADJUDICATE, entity_type="label_batch",
                             entity_id=entity_id, what=f"annotations in labelling batch {batch_id}")
    return record


def queue(store: Store, actor: Actor, batch_id: int | None = None) -> pd.DataFrame:
    """Units whose annotators disagree and that nobody adjudicated yet, oldest batch first: batch_id, title,
    response_id, unit_id, text, readings (how many different readings), annotators."""
    authorize(store, actor, Permission.ADJUDICATE, entity_type="label_batch", entity_id=batch_id)
    p = Params()
    return store.frame(f"""
        WITH st AS ({unit_status_sql(p, batch_id)}),
        txt AS (SELECT batch_id, response_id, unit_id, min(text) AS text FROM ({readings_sql(p, batch_id)})
                GROUP BY ALL)
        SELECT st.batch_id, b.title, st.response_id, st.unit_id, txt.text, st.readings, b.annotators
        FROM st JOIN label_batches b USING (batch_id) JOIN txt USING (batch_id, response_id, unit_id)
        WHERE st.complete AND NOT st.agreed AND st.adjudication_id IS NULL
        ORDER BY st.batch_id, st.response_id, st.position, st.unit_id""", p.values)


def unit_readings(store: Store, actor: Actor, batch_id: int, response_id: str, unit_id: str) -> pd.DataFrame:
    """Every annotator's reading of one unit (for the adjudicator: never shown to the annotators)."""
    _adjudicator(store, actor, batch_id, f"{batch_id}/{response_id}/{unit_id}")
    p = Params()
    return store.frame(f"""
        SELECT annotator, state, text, labels, criticality, category, dimensions, source_id, span, note, reading
        FROM ({readings_sql(p, batch_id, response_id)}) WHERE unit_id = {p(unit_id)} ORDER BY annotator""", p.values)


def escalated_reading(rows: Sequence[dict]) -> dict:
    """The documented escalation rule (module docstring) over the annotators' rows of one unit."""
    labelled = [r for r in rows if r["state"] == "labelled"]
    if not labelled:
        return {"keep": False}
    # the union, made an allowed set the cautious way (SUPPORTED beside another label, PARTIAL beside UNSUPPORTED go)
    labels = [label.value for label in cautious_label_set(label for r in labelled for label in r["labels"])]
    top = max(labelled, key=lambda r: (r["criticality"], r["category"] is not None))
    return {"keep": True, "labels": labels, "criticality": top["criticality"], "category": top["category"],
            "dimensions": None, "source_id": next((r["source_id"] for r in labelled if r["source_id"]), None),
            "span": next((r["span"] for r in labelled if r["span"]), None), "text": labelled[0]["text"]}


def _majority_reading(rows: Sequence[dict], unit_id: str) -> dict:
    counts = Counter(r["reading"] for r in rows)
    reading, votes = counts.most_common(1)[0]
    if votes * 2 <= len(rows):
        raise LabellingError(f"claim {unit_id}: rule: no strict majority among {len(rows)} annotators "
                             f"(the most common reading has {votes}); use expert adjudication or escalation")
    row = next(r for r in rows if r["reading"] == reading)
    if row["state"] != "labelled":
        return {"keep": False}
    return {"keep": True, **{k: row[k] for k in ("labels", "criticality", "category", "dimensions", "source_id",
                                                 "span", "text")}}


def adjudicate(store: Store, actor: Actor, batch_id: int, response_id: str, unit_id: str, *, rule: str,
               reason: str, labels: Sequence[str] = (), criticality: int = 1, category: str | None = None,
               dimensions: Sequence[str] | None = None, source_id: str | None = None, span: str | None = None,
               keep: bool = True) -> ApplyReport:
    """Resolve one disagreed unit by ``rule`` (``majority``, ``expert`` or ``escalation``) with a ``reason``.

    The reading arguments are the adjudicator's own and count only for ``expert``. Afterwards every
    resolved response of the batch is applied (``apply_resolved``); its report is returned.
    """
    entity = f"{batch_id}/{response_id}/{unit_id}"
    _adjudicator(store, actor, batch_id, entity)
    problems = []
    if rule not in RULES:
        problems.append(f"rule: {rule!r} is not one of {', '.join(RULES)}")
    if not (reason or "").strip():
        problems.append("reason: say why (it is kept with the adjudication)")
    if problems:
        raise LabellingError(f"claim {unit_id}: " + "; ".join(problems))
    p = Params()
    status = store.one(f"SELECT * FROM ({unit_status_sql(p, batch_id, response_id)}) WHERE unit_id = {p(unit_id)}",
                       p.values)
    if status is None:
        raise NotFound(f"claim {unit_id!r} is not a unit of response {response_id!r} in batch {batch_id}")
    if not status["complete"]:
        raise LabellingError(f"claim {unit_id}: not every annotator has finished response {response_id} yet")
    if status["agreed"]:
        raise LabellingError(f"claim {unit_id}: the annotators agree; there is nothing to adjudicate")
    if status["adjudication_id"] is not None:
        raise LabellingError(f"claim {unit_id}: already adjudicated (adjudication {status['adjudication_id']})")
    q = Params()
    rows = store.dicts(f"SELECT * FROM ({readings_sql(q, batch_id, response_id)}) WHERE unit_id = {q(unit_id)} "
                       "ORDER BY annotator", q.values)
    if rule == "majority":
        decided = _majority_reading(rows, unit_id)
    elif rule == "escalation":
        decided = escalated_reading(rows)
    elif keep:
        decided = {"keep": True, **checked_reading(unit_id, labels, criticality, category, dimensions, source_id,
                                                    span), "text": rows[0]["text"]}
    else:
        decided = {"keep": False}
    reason = reason.strip()

    def fn(tx: Transaction) -> Change:
        adjudication_id = tx.scalar("SELECT nextval('seq_adjudication')")
        tx.execute("INSERT INTO adjudications VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [adjudication_id, batch_id, response_id, unit_id, rule, reason, actor.name, actor.role, utc_now(),
                    decided["keep"], decided.get("text"), decided.get("labels"), decided.get("dimensions"),
                    decided.get("criticality"), decided.get("category"), decided.get("source_id"),
                    decided.get("span")])
        readings = {r["annotator"]: r["reading"] for r in rows}
        return Change("adjudication", entity, {"readings": readings},
                      {"rule": rule, "reason": reason, **{k: v for k, v in decided.items() if k != "text"}},
                      result=adjudication_id)

    store.write(actor, "label.adjudicate", fn)
    return apply_resolved(store, actor, batch_id)


# --- applying resolved labels --------------------------------------------------------------------------------


@dataclass
class ApplyReport:
    """What ``apply_resolved`` did: responses revised (or confirmed unchanged), those refused as stale, the
    score run."""

    applied: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)  # would lower their decision: pending a second person
    new_revisions: int = 0
    unchanged: int = 0
    score_run_id: int | None = None


def _stored_response(store: Store, response_id: str, revision: int) -> Response:
    """The full stored record of a revision (extensions such as categories included) when it is a JSON object."""
    raw = store.scalar(f"SELECT raw FROM responses WHERE {revisions_select('?')} AND revision = ?",
                       [response_id, response_id, revision])
    record = json.loads(raw) if raw else None
    if isinstance(record, dict):
        return parse_response(record, limits=NO_TEXT_LIMITS)
    return load_response(store, response_id, revision)  # a flat-table record: the stored columns


# reading fields a blank of which means "not decided" (an annotator's form starts them blank)
_KEPT_WHEN_BLANK = ("category", "dimensions", "source_id", "span")


def _resolved_claims(base: Response, units: list[dict]) -> tuple[list[dict], list[tuple[str, str, str]]]:
    """The claims of the next revision and (claim_id, label, provenance) for each of their labels."""
    originals = {c.claim_id: c for c in base.claims}
    claims, provenance = [], []
    for unit in units:
        if not unit["keep"]:
            continue
        original = originals.get(unit["unit_id"])
        record = original.model_dump(mode="json") if original is not None else {"claim_id": unit["unit_id"],
                                                                               "text": unit["text"]}
        labels = list(unit["labels"])
        how = unit["provenance"]
        kept_feedback = original is not None and Label.VALIDATED_NEGATIVE_FEEDBACK in original.labels
        if kept_feedback and Label.VALIDATED_NEGATIVE_FEEDBACK.value not in labels:
            # confirmed wrong by validated feedback: a SUPPORTED reading gives way (SUPPORTED stands alone)
            labels = [label.value for label in cautious_label_set([*labels, Label.VALIDATED_NEGATIVE_FEEDBACK])]
        # what the reading leaves blank (no source, span, category or dimensions chosen) is not decided: the
        # claim keeps it from the revision before (applying agreed labels used to empty source and span)
        decided = {"labels": labels, "criticality": unit["criticality"],
                   **{name: unit[name] for name in _KEPT_WHEN_BLANK if unit[name] is not None}}
        record = revised_claim(record, decided)
        if original is None:
            record.pop("entailment", None)
        claims.append(record)
        for label in labels:
            origin = "imported" if kept_feedback and label == Label.VALIDATED_NEGATIVE_FEEDBACK.value and \
                label not in unit["labels"] else how
            provenance.append((unit["unit_id"], label, origin))
    return claims, provenance


def _resolved_units(store: Store, batch_id: int) -> dict[str, list[dict]]:
    """For every complete, fully resolved, not yet applied response of the batch: its units in answer order
    with the resolved reading and how it was resolved."""
    p = Params()
    rows = store.dicts(f"""
        WITH st AS ({unit_status_sql(p, batch_id)}),
        ready AS (SELECT response_id FROM st GROUP BY response_id
                  HAVING bool_and(complete) AND bool_and(agreed OR adjudication_id IS NOT NULL)
                     AND NOT bool_or(applied)),
        first AS (SELECT * FROM ({readings_sql(p, batch_id)}) QUALIFY row_number() OVER (
                  PARTITION BY batch_id, response_id, unit_id ORDER BY annotator) = 1)
        SELECT st.response_id, st.unit_id, st.position, st.agreed,
               CASE WHEN st.agreed THEN f.state = 'labelled' ELSE a.keep_unit END AS keep,
               CASE WHEN st.agreed THEN 'annotated' ELSE 'adjudicated' END AS provenance,
               a.adjudication_id,
               CASE WHEN st.agreed THEN f.text ELSE coalesce(a.text, f.text) END AS text,
               CASE WHEN st.agreed THEN f.labels ELSE a.labels END AS labels,
               CASE WHEN st.agreed THEN f.criticality ELSE a.criticality END AS criticality,
               CASE WHEN st.agreed THEN f.category ELSE a.category END AS category,
               CASE WHEN st.agreed THEN f.dimensions ELSE a.dimensions END AS dimensions,
               CASE WHEN st.agreed THEN f.source_id ELSE a.source_id END AS source_id,
               CASE WHEN st.agreed THEN f.span ELSE a.span END AS span
        FROM st JOIN ready USING (response_id) JOIN first f USING (batch_id, response_id, unit_id)
        LEFT JOIN adjudications a ON a.batch_id = st.batch_id AND a.response_id = st.response_id
             AND a.unit_id = st.unit_id
        ORDER BY st.response_id, st.position, st.unit_id""", p.values)
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["response_id"], []).append(row)
    return out


def apply_resolved(store: Store, actor: Actor, batch_id: int) -> ApplyReport:
    """Store the resolved labels of every fully resolved response of the batch as its next revision, rescored.

    Four eyes: the actor is none of the batch's annotators. Responses revised since the batch was drawn
    are refused (``stale``) and left in the batch.
    """
    record = _adjudicator(store, actor, batch_id, str(batch_id))
    report = ApplyReport()
    resolved = _resolved_units(store, batch_id)
    if not resolved:
        return report
    drawn = dict(store.query("SELECT i.response_id, i.revision FROM label_batch_items i JOIN responses r "
                             "ON r.response_id = i.response_id AND r.is_current WHERE i.batch_id = ? "
                             "AND r.revision = i.revision", [batch_id]))
    revised, provenance = [], {}
    for response_id, units in resolved.items():
        if response_id not in drawn:
            report.stale.append(response_id)
            continue
        base = _stored_response(store, response_id, drawn[response_id])
        claims, labels = _resolved_claims(base, units)
        record_json = base.model_dump(mode="json")
        record_json["claims"] = claims
        revised.append(parse_response(record_json, limits=NO_TEXT_LIMITS))
        adjudication = {u["unit_id"]: u["adjudication_id"] for u in units}
        provenance[response_id] = [(cid, label, how, adjudication.get(cid)) for cid, label, how in labels]
    if not revised:
        return report
    any_adjudicated = any(u["provenance"] == "adjudicated" for r in revised for u in resolved[r.response_id])
    origin = "adjudication" if any_adjudicated else "annotation"
    ids = [r.response_id for r in revised]
    # a held response's provenance is recorded when a second person approves its labels (register.ingest.approvals)
    follow_ups = {rid: {"label_provenance": {"batch_id": batch_id, "rubric_version": record["rubric_version"],
                                             "rows": [list(entry) for entry in entries]}}
                  for rid, entries in provenance.items()}
    batch_report = revise_responses(store, actor, revised, origin=origin, permission=Permission.ADJUDICATE,
                                    subject=f"labelling batch {batch_id} ({record['title']}): "
                                            f"{len(ids)} response(s) resolved", follow_ups=follow_ups)
    # a response whose resolved labels would lower its decision waits for a second person: not applied yet
    held = {rid for (rid,) in store.query("SELECT response_id FROM pending_label_changes WHERE "
                                          "list_contains(?, change_id)", [batch_report.held])} if batch_report.held \
        else set()
    ids = [rid for rid in ids if rid not in held]
    provenance = {rid: entries for rid, entries in provenance.items() if rid not in held}
    report.held = sorted(held)
    report.applied, report.new_revisions, report.unchanged = ids, batch_report.new_revisions, batch_report.unchanged
    report.score_run_id = batch_report.score_run_id
    if not ids:
        return report
    rubric_version = record["rubric_version"]

    def fn(tx: Transaction) -> Change:
        current = dict(tx.query("SELECT response_id, revision FROM responses WHERE is_current AND "
                                "list_contains(?, response_id)", [ids]))
        now = utc_now()
        rows = [(rid, current[rid], cid, label, how, batch_id, adj, rubric_version, now)
                for rid, entries in provenance.items() for cid, label, how, adj in entries]
        if rows:
            tx.executemany("INSERT OR REPLACE INTO label_provenance VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        return Change("label_batch", str(batch_id), None,
                      {"applied": {rid: current[rid] for rid in ids}, "stale": report.stale,
                       "labels": len(rows), "rubric_version": rubric_version, "score_run_id": report.score_run_id})

    store.write(actor, "label.apply", fn)
    return report


def label_provenance(store: Store, response_id: str, revision: int | None = None) -> pd.DataFrame:
    """Where each label of a revision's claims came from (current revision by default); a label with no record
    is ``imported`` (it came in a file)."""
    if revision is None:
        revision = store.scalar(f"SELECT revision FROM responses WHERE {revisions_select('?')} AND is_current",
                                [response_id, response_id])
        if revision is None:
            raise NotFound(f"response {response_id!r} does not exist")
    return store.frame("""
        SELECT c.claim_id, c.label, coalesce(lp.provenance, 'imported') AS provenance, lp.batch_id, lp.adjudication_id,
               lp.rubric_version, a.rule, a.adjudicator, a.reason
        FROM (SELECT claim_idx, claim_id, unnest(labels) AS label FROM claims WHERE response_id = $rid
              AND revision = $rev) c
        LEFT JOIN label_provenance lp ON lp.response_id = $rid AND lp.revision = $rev AND lp.claim_id = c.claim_id
             AND lp.label = c.label
        LEFT JOIN adjudications a ON a.adjudication_id = lp.adjudication_id
        ORDER BY c.claim_idx, label""", {"rid": response_id, "rev": revision})


def current_score(store: Store, response_id: str) -> dict | None:
    """The current score of a response (revision, score, band, action), to show what an adjudication changed."""
    return store.one("SELECT revision, score, band, action FROM scores WHERE is_current AND response_id = ?",
                     [response_id])
