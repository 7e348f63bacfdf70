"""The annotator's side of a labelling batch: what an annotator may see (blind) and what they write.

Blind labelling is enforced here, not in the page: ``work_item`` returns the question, the answer, the
claims' text, the retrieved context (from the stored record, ``responses.raw``) and the sources it
cites, and the acting annotator's *own* annotations; never another annotator's labels, the claims'
current labels, nor the response's score. Only the batch's annotators may read its items or write
annotations to it (``PermissionDenied``, audited, for anyone else).

An annotator can also restructure the answer's claims, for themselves only (the paper's limitations
warn about compound claims): ``split_claim`` replaces a claim by its parts (``<claim>~1``, ``<claim>~2``...),
``merge_claims`` replaces several by one (``<a>+<b>``), ``add_claim`` adds a claim the extraction
missed (``<response>~new<n>``). Two annotators who make the same change make the same unit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd
from pydantic import ValidationError

from hri_core.models import Claim, problems_from_validation
from hri_core.vocabulary import Label
from register.access.permissions import Permission, authorize, deny
from register.access.sources import readable_sources
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import LabellingError, NotFound, PermissionDenied, RegisterError
from register.labels.batches import batch
from register.labels.units import readings_sql

__all__ = ["ANNOTATOR_LABELS", "Reading", "add_claim", "annotator_progress", "batch_progress", "batch_responses",
           "checked_reading", "my_batches", "merge_claims", "retrieved_chunks", "save_annotation", "save_annotations",
           "split_claim", "work_item"]

# Validated negative feedback is the outcome of a feedback validation, not an annotator's judgement of a claim:
# annotators choose among the other seven, and an imported feedback label is kept (provenance "imported").
ANNOTATOR_LABELS: tuple[str, ...] = tuple(label.value for label in Label
                                          if label is not Label.VALIDATED_NEGATIVE_FEEDBACK)

Reading = dict[str, Any]


def _require_annotator(store: Store, actor: Actor, batch_id: int) -> dict:
    """The batch, when ``actor`` may label and is one of its annotators; otherwise an audited refusal."""
    authorize(store, actor, Permission.LABEL, entity_type="label_batch", entity_id=batch_id)
    record = batch(store, batch_id)
    if actor.name not in record["annotators"]:
        deny(store, actor, Permission.LABEL, "label_batch", batch_id,
             f"{actor.name} is not an annotator of labelling batch {batch_id}", PermissionDenied)
    return record


def my_batches(store: Store, actor: Actor) -> pd.DataFrame:
    """The batches ``actor`` annotates, newest first, with their own progress (units labelled / to label)."""
    authorize(store, actor, Permission.LABEL, entity_type="label_batch")
    p = Params()
    return store.frame(f"""
        WITH rd AS ({readings_sql(p)})
        SELECT b.batch_id, b.title, b.rubric_version, b.created_at,
               count(DISTINCT rd.response_id) AS responses,
               count(*) FILTER (WHERE rd.state = 'labelled') AS labelled,
               count(*) FILTER (WHERE rd.state IN ('labelled', 'open')) AS units
        FROM label_batches b JOIN rd ON rd.batch_id = b.batch_id AND rd.annotator = {p(actor.name)}
        GROUP BY ALL ORDER BY b.batch_id DESC""", p.values)


def batch_responses(store: Store, actor: Actor, batch_id: int) -> pd.DataFrame:
    """The batch's responses in order with the actor's progress on each (no labels, no scores)."""
    _require_annotator(store, actor, batch_id)
    p = Params()
    return store.frame(f"""
        WITH rd AS ({readings_sql(p, batch_id)})
        SELECT i.position, i.response_id, i.revision,
               count(*) FILTER (WHERE rd.state = 'labelled') AS labelled,
               count(*) FILTER (WHERE rd.state IN ('labelled', 'open')) AS units
        FROM label_batch_items i JOIN rd ON rd.batch_id = i.batch_id AND rd.response_id = i.response_id
             AND rd.annotator = {p(actor.name)}
        WHERE i.batch_id = {p(batch_id)}
        GROUP BY ALL ORDER BY i.position""", p.values)


def annotator_progress(store: Store, actor: Actor, batch_id: int) -> dict:
    """``{"labelled", "units", "responses_done", "responses"}`` for the acting annotator."""
    frame = batch_responses(store, actor, batch_id)
    return {"labelled": int(frame["labelled"].sum()), "units": int(frame["units"].sum()),
            "responses_done": int((frame["labelled"] == frame["units"]).sum()), "responses": len(frame)}


def batch_progress(store: Store, batch_id: int) -> pd.DataFrame:
    """Per annotator of a batch: units labelled and to label (counts only; for reviewers and pages)."""
    p = Params()
    return store.frame(f"""
        WITH rd AS ({readings_sql(p, batch_id)})
        SELECT annotator, count(*) FILTER (WHERE state = 'labelled') AS labelled,
               count(*) FILTER (WHERE state IN ('labelled', 'open')) AS units
        FROM rd GROUP BY annotator ORDER BY annotator""", p.values)


def _item(store: Store, batch_id: int, response_id: str) -> dict:
    row = store.one("SELECT i.revision, r.question, r.answer, r.use_case, r.model, r.raw FROM label_batch_items i "
                    "JOIN responses r ON r.response_id = i.response_id AND r.revision = i.revision "
                    "WHERE i.batch_id = ? AND i.response_id = ?", [batch_id, response_id])
    if row is None:
        raise NotFound(f"response {response_id!r} is not in labelling batch {batch_id}")
    return row


def retrieved_chunks(raw: str | None) -> list[dict]:
    """The retrieved chunks of a stored record (``[]`` when it has none or is a flat-table record)."""
    try:
        record = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return []
    chunks = record.get("retrieved_context") if isinstance(record, dict) else None
    if not isinstance(chunks, list):
        return []
    return [{"id": str(c.get("id", c.get("doc_id", ""))), "text": str(c.get("text") or ""),
             "source_id": c.get("source_id")} for c in chunks if isinstance(c, dict)]


def work_item(store: Store, actor: Actor, batch_id: int, response_id: str) -> dict:
    """What an annotator sees of one response: ``question``, ``answer``, ``use_case``, ``model``, ``context``
    (chunks), ``sources`` (the register's sources the context and claims cite, restricted ones without their
    reference), ``units`` (the actor's units in answer order: unit_id, origin, text, state, their own labels, and
    ``claim_source_id``: the source of the claim, or of the first claim a made unit derives from that has one, in
    the revision drawn).

    Never another annotator's labels, the current labels or the score."""
    _require_annotator(store, actor, batch_id)
    item = _item(store, batch_id, response_id)
    context = retrieved_chunks(item["raw"])
    p = Params()
    units = store.dicts(f"""
        WITH rd AS ({readings_sql(p, batch_id, response_id)})
        SELECT unit_id, origin, derived_from, position, text, state, labels, dimensions, criticality, category,
               source_id, span, note
        FROM rd WHERE annotator = {p(actor.name)} AND state <> 'absent' ORDER BY position, unit_id""", p.values)
    cited = {c["source_id"] for c in context if c["source_id"]}
    # each claim's source in the revision drawn: the Source the form starts at (a reading left at it keeps it)
    claim_sources = dict(store.query("SELECT claim_id, source_id FROM claims WHERE response_id = ? AND revision = ? "
                                     "AND source_id IS NOT NULL", [response_id, item["revision"]]))
    cited |= set(claim_sources.values())
    for unit in units:
        origins = [unit["unit_id"]] if unit["origin"] == "claim" else list(unit["derived_from"] or [])
        unit["claim_source_id"] = next((claim_sources[c] for c in origins if c in claim_sources), None)
    readable = readable_sources(store, cited, actor.role)
    sources = store.dicts("SELECT source_id, title, ref, source_type FROM sources WHERE list_contains(?, source_id) "
                          "AND NOT deleted ORDER BY source_id", [sorted(cited)])
    for source in sources:
        if not readable.get(source["source_id"], True):
            source["ref"] = None
            source["title"] = "restricted source"
    return {"batch_id": batch_id, "response_id": response_id, "revision": item["revision"],
            "question": item["question"], "answer": item["answer"], "use_case": item["use_case"],
            "model": item["model"], "context": context, "sources": sources, "units": units}


def _my_units(store: Store, actor: Actor, batch_id: int, response_id: str) -> dict[str, dict]:
    p = Params()
    rows = store.dicts(f"WITH rd AS ({readings_sql(p, batch_id, response_id)}) SELECT * FROM rd "
                       f"WHERE annotator = {p(actor.name)} AND state <> 'absent'", p.values)
    return {row["unit_id"]: row for row in rows}


def checked_reading(unit_id: str, labels: Sequence[str], criticality: int, category: str | None,
                     dimensions: Sequence[str] | None, source_id: str | None, span: str | None) -> dict:
    """The reading validated as an ``hri_core`` claim: the same rules as an imported claim."""
    labels = [str(label).strip().upper() for label in labels if str(label).strip()]
    if not labels:
        raise LabellingError(f"claim {unit_id}: labels: choose at least one label")
    outside = [label for label in labels if label not in ANNOTATOR_LABELS]
    if outside:
        raise LabellingError(f"claim {unit_id}: labels: {', '.join(outside)} cannot be chosen by an annotator "
                             f"(choose among {', '.join(ANNOTATOR_LABELS)})")
    try:
        claim = Claim.model_validate({
            "claim_id": unit_id, "labels": labels, "criticality": criticality, "category": category or None,
            "dimensions": list(dimensions) if dimensions else None,  # none chosen: the profile's defaults
            "source_id": (source_id or "").strip() or None, "span": (span or "").strip() or None})
    except ValidationError as error:
        problems = "; ".join(f"{p.loc}: {p.message}" for p in problems_from_validation(error))
        raise LabellingError(f"claim {unit_id}: {problems}") from error
    return {"labels": [label.value for label in claim.labels], "criticality": claim.criticality,
            "category": claim.category,
            "dimensions": None if claim.dimensions is None else [d.value for d in claim.dimensions],
            "source_id": claim.source_id, "span": claim.span}


def save_annotation(store: Store, actor: Actor, batch_id: int, response_id: str, unit_id: str, *,
                    labels: Sequence[str], criticality: int = 1, category: str | None = None,
                    dimensions: Sequence[str] | None = None, source_id: str | None = None, span: str | None = None,
                    note: str | None = None) -> None:
    """The actor's labels of one unit (a claim of the response or one they made); replaces their earlier ones."""
    _require_annotator(store, actor, batch_id)
    mine = _my_units(store, actor, batch_id, response_id)
    if unit_id not in mine:
        raise NotFound(f"claim {unit_id!r} is not a claim of response {response_id!r} in batch {batch_id}")
    unit = mine[unit_id]
    if unit["state"] == "replaced":
        raise LabellingError(f"claim {unit_id}: you replaced it (split or merged); label its replacement instead")
    reading = checked_reading(unit_id, labels, criticality, category, dimensions, source_id, span)
    note = (note or "").strip() or None

    def fn(tx: Transaction) -> Change:
        before = tx.one("SELECT labels, criticality, category, dimensions, source_id, span FROM annotations WHERE "
                        "batch_id = ? AND response_id = ? AND unit_id = ? AND annotator = ?",
                        [batch_id, response_id, unit_id, actor.name])
        tx.execute("DELETE FROM annotations WHERE batch_id = ? AND response_id = ? AND unit_id = ? AND annotator = ?",
                   [batch_id, response_id, unit_id, actor.name])
        tx.execute("INSERT INTO annotations VALUES (?, ?, ?, ?, ?, ?, ?, 'labelled', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [batch_id, response_id, unit_id, actor.name, unit["origin"], unit["derived_from"],
                    unit["position"], unit["text"], reading["labels"], reading["dimensions"], reading["criticality"],
                    reading["category"], reading["source_id"], reading["span"], note, utc_now()])
        return Change("annotation", f"{batch_id}/{response_id}/{unit_id}", before, reading)

    store.write(actor, "label.annotate", fn)


READING_FIELDS = ("labels", "criticality", "category", "dimensions", "source_id", "span", "note")


def save_annotations(store: Store, actor: Actor, batch_id: int, response_id: str,
                     readings: Sequence[Reading]) -> dict[str, str]:
    """Several claims' labels at once (the workbench grid): each reading is a ``unit_id`` with the fields
    ``save_annotation`` takes (``READING_FIELDS``; one left out takes that function's default).

    Every valid reading is saved as its own audited ``label.annotate`` write, exactly as when labelled one
    at a time; an invalid one is refused with its claim and field named and does not stop the others.
    Returns ``{unit_id: why}`` for the refused readings (empty when all were saved). Who may label is
    checked once first: an actor who may not label this batch is refused as a whole.
    """
    _require_annotator(store, actor, batch_id)
    refused: dict[str, str] = {}
    for reading in readings:
        unit_id = str(reading.get("unit_id") or "")
        fields = {name: reading[name] for name in READING_FIELDS if name in reading}
        fields["labels"] = list(fields.get("labels") or [])
        try:
            save_annotation(store, actor, batch_id, response_id, unit_id, **fields)
        except PermissionDenied:
            raise  # the account changed meanwhile: not a problem of one reading
        except RegisterError as error:
            refused[unit_id] = str(error)
    return refused


def _insert_made(tx: Transaction, batch_id: int, response_id: str, actor: Actor, units: list[tuple],
                 replaced: list[dict]) -> None:
    now = utc_now()
    for unit in replaced:
        tx.execute("DELETE FROM annotations WHERE batch_id = ? AND response_id = ? AND unit_id = ? AND annotator = ?",
                   [batch_id, response_id, unit["unit_id"], actor.name])
        tx.execute("INSERT INTO annotations (batch_id, response_id, unit_id, annotator, origin, position, state, text, "
                   "annotated_at) VALUES (?, ?, ?, ?, ?, ?, 'replaced', ?, ?)",
                   [batch_id, response_id, unit["unit_id"], actor.name, unit["origin"], unit["position"], unit["text"],
                    now])
    for unit_id, origin, derived_from, position, text in units:
        tx.execute("INSERT INTO annotations (batch_id, response_id, unit_id, annotator, origin, derived_from, "
                   "position, state, text, annotated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?, ?)",
                   [batch_id, response_id, unit_id, actor.name, origin, derived_from, position, text, now])


def _texts(texts: Sequence[str], what: str) -> list[str]:
    cleaned = [t.strip() for t in texts if t and t.strip()]
    if len(cleaned) != len(list(texts)):
        raise LabellingError(f"{what}: every claim needs its text")
    return cleaned


def split_claim(store: Store, actor: Actor, batch_id: int, response_id: str, claim_id: str,
                texts: Sequence[str]) -> list[str]:
    """Replace one original claim by two or more parts (for this annotator); returns the parts' unit ids."""
    _require_annotator(store, actor, batch_id)
    parts = _texts(texts, f"split of {claim_id}")
    if len(parts) < 2:
        raise LabellingError(f"split of {claim_id}: a split needs at least two parts")
    mine = _my_units(store, actor, batch_id, response_id)
    unit = mine.get(claim_id)
    if unit is None or not unit["is_original"] or unit["state"] == "replaced":
        raise LabellingError(f"split of {claim_id}: only a claim of the answer that you have not replaced can be split")
    made = [(f"{claim_id}~{i}", "split", [claim_id], unit["position"] + i / 100, text)
            for i, text in enumerate(parts, start=1)]

    def fn(tx: Transaction) -> Change:
        _insert_made(tx, batch_id, response_id, actor, made, [unit])
        return Change("annotation", f"{batch_id}/{response_id}/{claim_id}", {"text": unit["text"]},
                      {"split_into": {m[0]: m[4] for m in made}}, result=[m[0] for m in made])

    return store.write(actor, "label.split", fn)


def merge_claims(store: Store, actor: Actor, batch_id: int, response_id: str, claim_ids: Sequence[str],
                 text: str) -> str:
    """Replace two or more original claims by one (for this annotator); returns the merged unit's id."""
    _require_annotator(store, actor, batch_id)
    ids = list(dict.fromkeys(claim_ids))
    if len(ids) < 2:
        raise LabellingError("merge: choose at least two claims")
    (merged_text,) = _texts([text], "merge")
    mine = _my_units(store, actor, batch_id, response_id)
    bad = [cid for cid in ids if cid not in mine or not mine[cid]["is_original"] or mine[cid]["state"] == "replaced"]
    if bad:
        raise LabellingError(f"merge: {', '.join(bad)} cannot be merged (only claims of the answer you have not "
                             "replaced)")
    ids.sort(key=lambda cid: mine[cid]["position"])
    unit_id = "+".join(ids)
    made = [(unit_id, "merge", ids, mine[ids[0]]["position"], merged_text)]

    def fn(tx: Transaction) -> Change:
        _insert_made(tx, batch_id, response_id, actor, made, [mine[cid] for cid in ids])
        return Change("annotation", f"{batch_id}/{response_id}/{unit_id}", {cid: mine[cid]["text"] for cid in ids},
                      {"merged_into": unit_id, "text": merged_text}, result=unit_id)

    return store.write(actor, "label.merge", fn)


def add_claim(store: Store, actor: Actor, batch_id: int, response_id: str, text: str) -> str:
    """Add a claim the extraction missed (for this annotator); returns its unit id."""
    _require_annotator(store, actor, batch_id)
    (claim_text,) = _texts([text], "added claim")
    mine = _my_units(store, actor, batch_id, response_id)
    added = sum(1 for unit in mine.values() if unit["origin"] == "added")
    unit_id = f"{response_id}~new{added + 1}"
    made = [(unit_id, "added", None, 1_000_000.0 + added, claim_text)]

    def fn(tx: Transaction) -> Change:
        _insert_made(tx, batch_id, response_id, actor, made, [])
        return Change("annotation", f"{batch_id}/{response_id}/{unit_id}", None, {"added": claim_text}, result=unit_id)

    return store.write(actor, "label.add_claim", fn)
