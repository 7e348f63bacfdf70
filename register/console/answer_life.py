"""An answer's whole life in the audit trail: every event that did something to one response, found by its id.

Most events are filed under the record they write (an import batch, a score run, a feedback item, an
annotation, a verification run), not under the answer. Which of those records belong to the answer is
derived from what the register stores, in one statement:

- the import batches that stored one of its revisions or quarantined one of its records (``responses.batch_id``,
  ``quarantine.batch_id``; revisions made in the register are batches too, format ``revision:<origin>``):
  the batch's opening, closing and resumption, and of its chunks only the one that stored it (the first
  chunk event of the batch at or after the row's ``imported_at`` / ``created_at``: each chunk is one
  transaction whose event is appended after its rows);
- the score runs that scored it (``scores.run_id``), but only those that gave a revision its first score or
  changed its band, action or decision from its previous score (a full rescore that changes nothing of
  this answer is not part of its life);
- its feedback items, annotations, adjudications, labelling batches (drawn; applied only by the
  ``label.apply`` that stored its labels, ``label_provenance.recorded_at``), verification runs
  (``judge_proposals.run_id``) and the decisions on its proposals (``judge_proposal.decide`` events carry no
  record id: the first such event of the deciding person at or after ``judge_proposals.decided_at``),
  its quarantined records;
- events filed under the answer itself (``response``: review decisions; refused attempts);
- the records listed in ``ANSWER_RECORDS`` whose tables exist (risk acceptances, pending label changes).

The audit events are joined once on (entity type, entity id): no event's JSON is read. ``docs/performance.md``
gives its time on a generated register.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from register.db.audit import EVENT_COLUMNS, LISTED_EVENTS, EventFilter, checked_page, event_where
from register.db.export import EXPORT_LIMIT, CsvExport, copy_csv
from register.db.sql import Params
from register.db.store import Store
from register.readmodels.response_ids import revisions_select

__all__ = ["ANSWER_RECORDS", "LIFE_COLUMNS", "AnswerRecord", "answer_events", "life_select", "names_answer",
           "write_answer_events_csv"]

# what an event of the answer's life did to it, beside the event's own columns
LIFE_COLUMNS = (*EVENT_COLUMNS, "what_it_did")

# import batch events about the whole batch, and those written once per chunk (only the chunk that stored it counts)
_BATCH_ACTIONS = ("import.start", "import.batch", "import.resume", "import.close")
_CHUNK_ACTIONS = ("import.chunk", "import.copies")


@dataclass(frozen=True)
class AnswerRecord:
    """A table of records that each concern one answer (a ``response_id`` column), whose events are filed under
    ``entity_type`` with the record's id (``id_column``) as entity id. Used only when the table exists."""

    table: str
    id_column: str
    entity_type: str
    what: str  # how an event of it is described: "<what> <id>"


# Records of later features, found by their tables: a risk acceptance of a block answer, a lower-risk label change
# waiting for a second person. Identifiers from this list only reach the SQL (never a user's text).
ANSWER_RECORDS: tuple[AnswerRecord, ...] = (
    AnswerRecord("risk_acceptances", "acceptance_id", "risk_acceptance", "risk acceptance"),
    AnswerRecord("pending_label_changes", "change_id", "label_change", "lower-risk change"),
)


def names_answer(store: Store, record_id: str) -> bool:
    """Whether ``record_id`` is the id of an answer in the register (stored, or only quarantined)."""
    p = Params()
    rid = p(record_id)
    return bool(store.scalar(f"SELECT EXISTS (SELECT 1 FROM responses WHERE {revisions_select(rid)}) "
                             f"OR EXISTS (SELECT 1 FROM quarantine WHERE response_id = {rid})", p.values))


def _present(store: Store) -> tuple[bool, list[AnswerRecord]]:
    """Whether score rows carry a decision, and which ``ANSWER_RECORDS`` tables exist (with their columns)."""
    columns = {(t, c) for t, c in store.query(
        "SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' "
        "AND (table_name = 'scores' OR list_contains(?, table_name))", [[r.table for r in ANSWER_RECORDS]])}
    records = [r for r in ANSWER_RECORDS if {(r.table, r.id_column), (r.table, "response_id")} <= columns]
    return ("scores", "decision") in columns, records


def life_select(store: Store, p: Params, response_id: str) -> str:
    """SELECT of (seq, what_it_did): each audit event in the life of ``response_id`` once, with what it did to the
    answer (values bound through ``p``). ``store`` is read only to see which optional columns and tables exist."""
    with_decision, records = _present(store)
    rid = p(response_id)
    decision = "decision" if with_decision else "CAST(NULL AS VARCHAR)"
    hooks = "".join(
        f"UNION ALL SELECT {p(r.entity_type)}, CAST({r.id_column} AS VARCHAR), 'record', "
        f"{p(r.what + ' ')} || {r.id_column} FROM {r.table} WHERE response_id = {rid} " for r in records)
    batch_actions, chunk_actions = p(list(_BATCH_ACTIONS)), p(list(_CHUNK_ACTIONS))
    return f"""
    WITH revs AS (
        SELECT revision, batch_id, imported_at FROM responses WHERE {revisions_select(rid)}
    ),
    held AS (  -- where an import batch stored something of the answer
        SELECT batch_id, imported_at AS at, 'stored revision ' || revision AS what FROM revs
        UNION ALL
        SELECT batch_id, created_at, 'quarantined a record of it (' || location || ')' FROM quarantine
        WHERE response_id = {rid}
    ),
    scored AS (
        SELECT run_id, revision, score, band, action, {decision} AS decision,
               row_number() OVER (PARTITION BY revision ORDER BY run_id) AS nth,
               lag(band) OVER w AS band_before, lag(action) OVER w AS action_before,
               lag({decision}) OVER w AS decision_before
        FROM scores WHERE response_id = {rid} WINDOW w AS (ORDER BY run_id)
    ),
    keyed(entity_type, entity_id, kind, what) AS (
        SELECT 'import_batch', CAST(h.batch_id AS VARCHAR), 'batch',
               'import batch ' || h.batch_id || ' (' || b.format || ': ' || b.source_name || ') '
               || string_agg(h.what, ', ' ORDER BY h.at)
        FROM held h JOIN import_batches b USING (batch_id) GROUP BY h.batch_id, b.format, b.source_name
        UNION ALL
        SELECT 'score_run', CAST(run_id AS VARCHAR), 'record',
               'scored revision ' || revision || ': ' || round(score, 2) || ' ' || band || ', action ' || action
               || coalesce(', decision ' || decision, '')
               || CASE WHEN nth = 1 THEN ' (its first score)'
                       ELSE ' (was ' || band_before || ', action ' || action_before
                            || coalesce(', decision ' || decision_before, '') || ')' END
        FROM scored
        WHERE nth = 1 OR band IS DISTINCT FROM band_before OR action IS DISTINCT FROM action_before
              OR decision IS DISTINCT FROM decision_before
        UNION ALL
        SELECT 'feedback', CAST(feedback_id AS VARCHAR), 'record',
               'feedback #' || feedback_id || coalesce(' on claim ' || claim_id, ' on the whole answer')
        FROM feedback_items WHERE response_id = {rid}
        UNION ALL
        SELECT DISTINCT 'annotation', batch_id || '/' || response_id || '/' || unit_id, 'record',
               'annotation of claim ' || unit_id || ' (labelling batch ' || batch_id || ')'
        FROM annotations WHERE response_id = {rid}
        UNION ALL
        SELECT 'adjudication', batch_id || '/' || response_id || '/' || unit_id, 'record',
               'adjudication of claim ' || unit_id || ' by ' || rule || ' (labelling batch ' || batch_id || ')'
        FROM adjudications WHERE response_id = {rid}
        UNION ALL
        SELECT 'label_batch', CAST(batch_id AS VARCHAR), 'label_batch',
               'labelling batch ' || batch_id || ' (revision ' || revision || ' drawn)'
        FROM label_batch_items WHERE response_id = {rid}
        UNION ALL
        SELECT 'verification_run', CAST(run_id AS VARCHAR), 'record',
               'verification run ' || run_id || ': ' || count(*) || ' verdict(s) on its claims'
        FROM judge_proposals WHERE response_id = {rid} GROUP BY run_id
        UNION ALL
        SELECT 'quarantine', CAST(quarantine_id AS VARCHAR), 'record',
               'its quarantined record (' || location || ')'
        FROM quarantine WHERE response_id = {rid}
        UNION ALL
        SELECT unnest(['response', 'judge_proposal']), {rid}, 'answer', NULL
        {hooks}
    ),
    candidates AS (
        SELECT e.seq, e.action, e.occurred_at, e.entity_id, k.kind, k.what
        FROM audit_events e JOIN keyed k ON e.entity_type = k.entity_type AND e.entity_id = k.entity_id
    ),
    chunks AS (  -- the chunk event that stored each revision or quarantined record: the batch's first at or after it
        SELECT c.seq, h.what || ' (import batch ' || h.batch_id || ')' AS what
        FROM held h ASOF JOIN (SELECT * FROM candidates WHERE kind = 'batch'
                               AND list_contains({chunk_actions}, action)) c
             ON c.entity_id = CAST(h.batch_id AS VARCHAR) AND h.at <= c.occurred_at
    ),
    applied AS (  -- the label.apply that stored its resolved labels
        SELECT c.seq, 'stored its resolved labels as revision ' || lp.revision || ' (labelling batch '
                      || lp.batch_id || ')' AS what
        FROM (SELECT DISTINCT batch_id, revision, recorded_at FROM label_provenance
              WHERE response_id = {rid} AND batch_id IS NOT NULL) lp
        ASOF JOIN (SELECT * FROM candidates WHERE kind = 'label_batch' AND action = 'label.apply') c
             ON c.entity_id = CAST(lp.batch_id AS VARCHAR) AND lp.recorded_at <= c.occurred_at
    ),
    decided AS (  -- a person's decisions on its judge proposals (the event names no record)
        SELECT e.seq, 'decided verdict(s) on its claims: ' || d.decisions AS what
        FROM (SELECT decided_by, decided_at,
                     string_agg(claim_id || ' ' || coalesce(final_label, status), ', ' ORDER BY claim_idx) AS decisions
              FROM judge_proposals WHERE response_id = {rid} AND decided_at IS NOT NULL
              GROUP BY decided_by, decided_at) d
        ASOF JOIN (SELECT seq, actor_name, occurred_at FROM audit_events WHERE action = 'judge_proposal.decide') e
             ON e.actor_name = d.decided_by AND d.decided_at <= e.occurred_at
    ),
    reviewed AS (  -- its review decisions (and refused attempts), filed under the answer
        SELECT c.seq, CASE WHEN c.action = 'review.decide' AND r.decision IS NOT NULL
                           THEN 'review decision ' || r.decision || ' on revision ' || r.revision
                                || coalesce(' (score ' || round(r.score_at_decision, 2) || ' '
                                            || r.band_at_decision || ')', '')
                           WHEN c.action = 'denied' THEN 'refused attempt on it'
                           ELSE c.action END AS what
        FROM (SELECT * FROM candidates WHERE kind = 'answer') c
        ASOF LEFT JOIN (SELECT * FROM review_decisions WHERE response_id = {rid}) r
             ON c.occurred_at >= r.decided_at
    ),
    life AS (
        SELECT seq, what FROM candidates WHERE kind = 'record'
        UNION ALL SELECT seq, what FROM candidates WHERE kind = 'batch' AND list_contains({batch_actions}, action)
        UNION ALL SELECT seq, what FROM candidates WHERE kind = 'label_batch' AND action <> 'label.apply'
        UNION ALL SELECT seq, what FROM chunks
        UNION ALL SELECT seq, what FROM applied
        UNION ALL SELECT seq, what FROM decided
        UNION ALL SELECT seq, what FROM reviewed
    )
    SELECT seq, string_agg(DISTINCT what, '; ') AS what_it_did FROM life GROUP BY seq"""


def _life_query(store: Store, response_id: str, f: EventFilter) -> tuple[str, Params]:
    p = Params()
    life = life_select(store, p, response_id)
    where = event_where(EventFilter(actor=f.actor, actions=f.actions, entity_type=f.entity_type, since=f.since,
                                    until=f.until), p)  # the answer replaces the exact record id
    columns = ", ".join(f"e.{c}" for c in EVENT_COLUMNS)
    return (f"SELECT {columns}, l.what_it_did FROM audit_events e JOIN ({life}) l USING (seq) WHERE {where}", p)


def answer_events(store: Store, response_id: str, f: EventFilter | None = None, *, limit: int = LISTED_EVENTS,
                  offset: int = 0) -> tuple[Any, int]:
    """The events in the life of ``response_id`` that also match ``f`` (its record id aside), oldest first, as a
    DataFrame (``LIFE_COLUMNS``), and how many there are in all."""
    limit, offset = checked_page(limit, offset)
    select, p = _life_query(store, response_id, f or EventFilter())
    total = store.scalar(f"SELECT count(*) FROM ({select})", p.values)
    frame = store.frame(f"{select} ORDER BY e.seq LIMIT {p(limit)} OFFSET {p(offset)}", p.values)
    return frame, int(total or 0)


def write_answer_events_csv(store: Store, response_id: str, f: EventFilter, path: str | Path, *,
                            limit: int = EXPORT_LIMIT) -> CsvExport:
    """The events of ``answer_events`` (oldest first, at most ``limit``) written to the CSV file ``path`` by DuckDB
    (``register.db.export.copy_csv``: formulas escaped)."""
    limit, _ = checked_page(limit)
    select, p = _life_query(store, response_id, f)
    return copy_csv(store, f"{select} ORDER BY e.seq LIMIT {p(limit)}", p.values, path)
