"""Labelling batches: responses chosen by filters or a random sample, assigned to two or more annotators.

A batch binds to the rubric in force and to the revision of each response at the time it was drawn:
the annotators label that revision, and its adjudicated labels become the next one (a response that
was revised in the meantime is refused at adjudication rather than silently overwritten). Every
annotator of a batch labels every claim of it independently (``annotators``, two by default; the
paper: "at least two annotators when feasible").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

import pandas as pd

from register.access.permissions import Permission, allowed, authorize
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import LabellingError, NotFound
from register.labels.rubrics import current_rubric_version, ensure_default_rubric

__all__ = ["MAX_BATCH_RESPONSES", "Selection", "batch", "batch_annotators", "create_batch", "list_batches",
           "preview_selection"]

MAX_BATCH_RESPONSES = 500  # a batch people can finish; draw several for more


@dataclass(frozen=True)
class Selection:
    """Which current responses a batch takes: every filter given must hold; ``sample`` draws that many at random
    (reproducibly, by ``seed``) from the rest; ``response_ids`` names responses outright."""

    use_cases: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    bands: tuple[str, ...] = ()
    response_ids: tuple[str, ...] = ()
    sample: int | None = None
    seed: int = 0
    with_claims_only: bool = True

    def to_dict(self) -> dict:
        """JSON form stored with the batch (it says how the responses were chosen)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


def _selection_sql(selection: Selection, p: Params) -> str:
    where = ["r.is_current"]
    if selection.with_claims_only:
        where.append("r.claim_count > 0")
    if selection.use_cases:
        where.append(f"r.use_case IN {p.in_list(selection.use_cases)}")
    if selection.models:
        where.append(f"r.model IN {p.in_list(selection.models)}")
    if selection.bands:
        where.append(f"s.band IN {p.in_list(selection.bands)}")
    if selection.response_ids:
        where.append(f"r.response_id IN {p.in_list(selection.response_ids)}")
    order = f"md5(r.response_id || {p(str(selection.seed))})" if selection.sample else "r.response_id"
    limit = min(selection.sample or MAX_BATCH_RESPONSES, MAX_BATCH_RESPONSES)
    return f"""
        SELECT r.response_id, r.revision, r.use_case, r.model, r.claim_count
        FROM responses r LEFT JOIN scores s ON s.response_id = r.response_id AND s.revision = r.revision
             AND s.is_current
        WHERE {' AND '.join(where)}
        ORDER BY {order} LIMIT {p(limit)}"""


def preview_selection(store: Store, selection: Selection) -> pd.DataFrame:
    """The responses a batch with this selection would take (response_id, revision, use_case, model, claim_count)."""
    p = Params()
    return store.frame(_selection_sql(selection, p), p.values)


def _check_annotators(store: Store, annotators: list[str]) -> list[str]:
    names = [a.strip() for a in annotators if a and a.strip()]
    problems = []
    if len(names) != len(set(names)):
        problems.append("an annotator is named twice")
    if len(set(names)) < 2:
        problems.append("name at least two annotators (each claim is labelled independently by two or more)")
    accounts = {u: (role, disabled) for u, role, disabled in store.query(
        "SELECT username, role, disabled FROM users WHERE list_contains(?, username)", [names])}
    for name in names:
        if name not in accounts:
            problems.append(f"{name}: no such account")
        elif accounts[name][1]:
            problems.append(f"{name}: the account is disabled")
        elif not allowed(accounts[name][0], Permission.LABEL):
            problems.append(f"{name}: role {accounts[name][0]} may not label claims")
    if problems:
        raise LabellingError("batch not created: annotators: " + "; ".join(problems))
    return names


def create_batch(store: Store, actor: Actor, title: str, selection: Selection, annotators: list[str]) -> int:
    """Draw a batch of current responses by ``selection`` and assign it to ``annotators``; returns its id."""
    authorize(store, actor, Permission.LABEL_ASSIGN, entity_type="label_batch")
    if not (title or "").strip():
        raise LabellingError("batch not created: title: give the batch a name")
    names = _check_annotators(store, annotators)
    rubric_version = current_rubric_version(store) or ensure_default_rubric(store, actor)
    p = Params()
    chosen_sql = _selection_sql(selection, p)

    def fn(tx: Transaction) -> Change:
        chosen = tx.dicts(chosen_sql, p.values)
        if not chosen:
            raise LabellingError("batch not created: no current response with claims matches the selection")
        batch_id = tx.scalar("SELECT nextval('seq_label_batch')")
        tx.execute("INSERT INTO label_batches VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [batch_id, title.strip(), rubric_version, names, json.dumps(selection.to_dict()), utc_now(),
                    actor.name])
        tx.executemany("INSERT INTO label_batch_items VALUES (?, ?, ?, ?)",
                       [(batch_id, row["response_id"], row["revision"], i) for i, row in enumerate(chosen)])
        after = {"title": title.strip(), "annotators": names, "rubric_version": rubric_version,
                 "selection": selection.to_dict(), "responses": [row["response_id"] for row in chosen]}
        return Change("label_batch", str(batch_id), None, after, result=batch_id)

    return store.write(actor, "label.batch_create", fn)


def batch(store: Store, batch_id: int) -> dict:
    """One batch's record (title, rubric_version, annotators, selection, created_at, created_by, responses)."""
    row = store.one("SELECT b.*, (SELECT count(*) FROM label_batch_items i WHERE i.batch_id = b.batch_id) "
                    "AS responses FROM label_batches b WHERE b.batch_id = ?", [batch_id])
    if row is None:
        raise NotFound(f"labelling batch {batch_id} does not exist")
    row["annotators"] = list(row["annotators"])
    return row


def batch_annotators(store: Store, batch_id: int) -> list[str]:
    """The annotators assigned to a batch."""
    return batch(store, batch_id)["annotators"]


def list_batches(store: Store) -> pd.DataFrame:
    """Every batch, newest first, with its size and how many of its annotations are in."""
    return store.frame("""
        SELECT b.batch_id, b.title, b.rubric_version, b.annotators, b.created_at, b.created_by,
               count(DISTINCT i.response_id) AS responses,
               coalesce(sum(r.claim_count), 0) AS claims
        FROM label_batches b LEFT JOIN label_batch_items i ON i.batch_id = b.batch_id
        LEFT JOIN responses r ON r.response_id = i.response_id AND r.revision = i.revision
        GROUP BY ALL ORDER BY b.batch_id DESC""")
