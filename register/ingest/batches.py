"""Writing an import batch: start it, store its chunks (accepted records and quarantine), finish it.

Called by ``register.ingest.importer``. Each chunk of ``Item``s is validated (``items.validate_item``)
and stored in one ``Store.write`` transaction: valid records are merged by
``register.ingest.records.insert_responses`` (new / new revision / unchanged), open quarantine rows
they fix are marked ``resolved``, invalid ones go to the ``quarantine`` table with their location,
response id, raw text verbatim and reasons, and the batch's counts grow. Finishing a batch checks
``accepted + quarantined == records`` against the stored counts; then what the batch changed is
scored under the active profile.

One record never rolls back the others: when a chunk's transaction fails for a reason that is not
the database's as a whole (in use, a conflict), the chunk is written again in halves, down to the one
record that cannot be stored, which is quarantined with the database's reason. If even that fails,
the failure is the database's, not the record's, and the import stops.

An import stopped halfway (killed, Ctrl-C) leaves its batch unfinished, with the counts of the chunks
it committed. ``unfinished_batches`` lists them (``status`` shows them); ``resume_batch`` continues
one after checking its counts against its stored rows (``import --resume``); ``close_batch`` finishes
one as it stands when its file changed since.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hri_core import FieldProblem, Response
from hri_core.feedback import latest_feedback_time
from hri_core.models import TextLimits
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import DatabaseError, DatabaseInUse, RegisterError, WriteConflict
from register.ingest.bulk import stage_plain
from register.ingest.items import Item, reasons_of, text_limits, validate_item
from register.ingest.rag_inputs import store_rag_inputs
from register.ingest.readers import decode_line
from register.ingest.records import insert_responses, merge_staged, stage
from register.ingest.reports import COUNTS, REPORT_LIMIT, BatchReport, ImportReport, QuarantinedRecord
from register.scoring import scorer

__all__ = ["close_batch", "finish_batch", "record_failed_fix", "resume_batch", "run_batch", "start_batch",
           "unfinished_batches", "write_chunk"]

# Errors of one chunk's data that splitting the chunk can isolate; the database's own state (in use by
# another process, a concurrent writer) is not one of them.
_RECORD_ERRORS = (DatabaseError, pa.ArrowException, OverflowError, ValueError, UnicodeError)


def start_batch(store: Store, actor: Actor, source_name: str, fmt: str, sha256: str | None,
                chunk_size: int | None = None) -> BatchReport:
    """Open an import batch for one file (its own audited transaction); the report to fill."""
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    def fn(tx: Transaction) -> Change:
        batch_id = tx.scalar("SELECT nextval('seq_batch')")
        tx.execute("INSERT INTO import_batches (batch_id, source_name, source_sha256, format, started_at, "
                   "actor_name, chunk_size) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [batch_id, source_name, sha256, fmt, utc_now(), actor.name, chunk_size])
        return Change("import_batch", str(batch_id), None,
                      {"source_name": source_name, "format": fmt, "source_sha256": sha256}, result=batch_id)

    return BatchReport(store.write(actor, "import.start", fn), source_name, fmt)


def write_chunk(store: Store, actor: Actor, batch: BatchReport, chunk: list[Item], report: ImportReport) -> None:
    """Validate a chunk and store it in one transaction: merge, resolve, quarantine, batch counts.

    A failure that one of its records causes is isolated: the chunk is written again in halves, and
    the record that cannot be stored alone is quarantined with the reason (see the module docstring).
    """
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    try:
        _write_chunk(store, actor, batch, chunk, report)
    except (DatabaseInUse, WriteConflict):
        raise
    except _RECORD_ERRORS as error:
        if len(chunk) > 1:
            half = len(chunk) // 2
            write_chunk(store, actor, batch, chunk[:half], report)
            write_chunk(store, actor, batch, chunk[half:], report)
            return
        item = decode_line(chunk[0])  # a plain record was never decoded: its response id is wanted here
        problem = FieldProblem("", f"the record passed validation but could not be stored "
                                   f"({type(error).__name__}: {error}); report this")
        unstorable = Item(item.location, item.raw, None, [problem], item.response_id, check_model=False)
        try:
            _write_chunk(store, actor, batch, [unstorable], report)
        except _RECORD_ERRORS:
            raise error from None  # not this record: the database refuses every write


def _write_chunk(store: Store, actor: Actor, batch: BatchReport, chunk: list[Item], report: ImportReport) -> None:
    parts: list[list[tuple[Response, str]]] = []  # k-th occurrence of each response id -> parts[k]
    occurrences: dict[str, int] = {}
    accepted: dict[str, list[Any]] = {"response_id": [], "location": [], "ref": []}
    rejected: dict[str, list[Any]] = {"location": [], "response_id": [], "raw": [], "reasons": [], "resolved": []}
    pending: list[tuple[int, Item, list[FieldProblem]]] = []
    last_valid: dict[str, int] = {}
    current: dict[str, tuple[Response, dict | None]] = {}  # the last valid occurrence is the stored revision
    limits = text_limits()  # once per chunk: reading the settings is not free
    imported_at = utc_now()  # no feedback_at may be later (beyond the clock skew): hri_core.feedback
    plain = _plain_records(chunk, limits, imported_at)

    def accept(rid: str, item: Item) -> None:
        for key, value in (("response_id", rid), ("location", item.location), ("ref", item.ref)):
            accepted[key].append(value)

    for position, item in enumerate(chunk):
        if position in plain.taken:  # staged in bulk: no quarantine reference (a line naming one is not plain)
            accept(plain.taken[position], item)
            continue
        response, problems = validate_item(item, limits, imported_at)
        if response is None:
            pending.append((position, item, problems))
            continue
        rid = response.response_id
        k = occurrences.get(rid, 0)
        occurrences[rid] = k + 1
        if k == len(parts):
            parts.append([])
        parts[k].append((response, item.raw))
        last_valid[rid] = position
        current[rid] = (response, item.extra)
        accept(rid, item)
    listed: list[QuarantinedRecord] = []
    for position, item, problems in pending:
        # nothing is quarantined without a reason
        reasons = reasons_of(problems or [FieldProblem("", "the record could not be read as a response")])
        # a later valid occurrence of the same response in this chunk fixes it already
        fixed = item.response_id is not None and last_valid.get(item.response_id, -1) > position
        for key, value in (("location", item.location), ("response_id", item.response_id), ("raw", item.raw),
                           ("reasons", json.dumps(reasons)), ("resolved", fixed)):
            rejected[key].append(value)
        listed.append(QuarantinedRecord(batch.source_name, item.location, item.response_id, reasons))
    accepted_table = pa.table(accepted, schema=pa.schema([("response_id", pa.string()), ("location", pa.string()),
                                                          ("ref", pa.int64())]))
    rejected_table = pa.table(rejected, schema=pa.schema([("location", pa.string()), ("response_id", pa.string()),
                                                          ("raw", pa.string()), ("reasons", pa.string()),
                                                          ("resolved", pa.bool_())]))

    def fn(tx: Transaction) -> Change:
        now = utc_now()
        merged = merge_staged(tx, batch.batch_id, now, plain.responses, plain.claims)
        new, revised, unchanged = merged.new_responses, merged.new_revisions, merged.unchanged
        for part in parts:
            merged = insert_responses(tx, batch.batch_id, now, part)
            new, revised, unchanged = (new + merged.new_responses, revised + merged.new_revisions,
                                       unchanged + merged.unchanged)
        store_rag_inputs(tx, list(current.values()))  # RAG metric inputs of the revisions just stored
        params = {"batch": batch.batch_id, "source": batch.source_name, "at": now}
        resolved = 0
        if accepted_table.num_rows:
            with tx.relation("_import_accepted", accepted_table):
                resolved = tx.execute("""
                    UPDATE quarantine SET status = 'resolved', resolved_at = $at, resolved_batch_id = $batch
                    WHERE status = 'open' AND (
                        response_id IN (SELECT response_id FROM _import_accepted)
                        OR quarantine_id IN (SELECT ref FROM _import_accepted WHERE ref IS NOT NULL)
                        OR (response_id IS NULL AND source_name = $source
                            AND location IN (SELECT location FROM _import_accepted)))
                """, params) or 0
        if rejected_table.num_rows:
            _insert_quarantine(tx, rejected_table, params)
        counts = {"records": len(chunk), "accepted": accepted_table.num_rows, "new_responses": new,
                  "new_revisions": revised, "unchanged": unchanged, "quarantined": rejected_table.num_rows,
                  "resolved": resolved}
        tx.execute("""
            UPDATE import_batches SET records_total = records_total + $records, accepted = accepted + $accepted,
                new_responses = new_responses + $new_responses, new_revisions = new_revisions + $new_revisions,
                unchanged = unchanged + $unchanged, quarantined = quarantined + $quarantined
            WHERE batch_id = $batch
        """, {"batch": batch.batch_id, **{k: v for k, v in counts.items() if k != "resolved"}})
        return Change("import_batch", str(batch.batch_id), None, counts, result=counts)

    counts = store.write(actor, "import.chunk", fn)
    for name, value in counts.items():
        setattr(batch, name, getattr(batch, name) + value)
    room = REPORT_LIMIT - len(report.quarantined_records)  # listed once the chunk is stored, never twice
    report.quarantined_records.extend(listed[:max(0, room)])


# The compiled check of plain JSON Lines records (``register.ingest.bulk``); off, every record takes the
# per-record path (the tests compare the two).
BULK_VALIDATION = True


@dataclass
class _Plain:
    """The plain records of a chunk, checked and staged in bulk: chunk position -> response id, and their rows."""

    taken: dict[int, str]
    responses: pa.Table
    claims: pa.Table


def _plain_records(chunk: list[Item], limits: TextLimits, imported_at: datetime) -> _Plain:
    """Check the chunk's undecoded JSON Lines records in one compiled pass; decode the rest in Python.

    A plain record whose response id is also another record's in the chunk (as the per-record path reads ids:
    stripped text, or an integer's digits) takes the per-record path too, so that repeated ids keep their file
    order (the later occurrence is the later revision, an invalid one before a valid one is marked fixed).
    """
    undecoded = [position for position, item in enumerate(chunk) if not item.decoded]
    taken: dict[int, str] = {}
    responses, claims = stage([])
    if undecoded and BULK_VALIDATION:
        found = stage_plain([chunk[p].raw for p in undecoded], limits,
                            latest_feedback=latest_feedback_time(imported_at))
        taken = {undecoded[i]: rid for i, rid in zip(found.positions, found.response_ids, strict=True)}
        responses, claims = found.responses, found.claims
    for position in undecoded:
        if position not in taken:
            decode_line(chunk[position])
    ids = Counter(item.response_id for position, item in enumerate(chunk)
                  if position not in taken and item.response_id is not None)
    ids.update(taken.values())
    repeated = {position for position, rid in taken.items() if ids[rid] > 1}
    if repeated:
        for position in repeated:
            decode_line(chunk[position])
            del taken[position]
        keep = pa.array(sorted(taken.values()), pa.string())
        responses = responses.filter(pc.is_in(responses.column("response_id"), keep))
        claims = claims.filter(pc.is_in(claims.column("response_id"), keep))
    return _Plain(taken, responses, claims)


def _insert_quarantine(tx: Transaction, rejected: pa.Table, params: dict) -> None:
    """The chunk's invalid records into the quarantine, unless the same record is open there already."""
    with tx.relation("_import_rejected", rejected):
        tx.execute("""
            INSERT INTO quarantine (quarantine_id, batch_id, source_name, location, response_id, raw, reasons,
                                    created_at, status, resolved_at, resolved_batch_id)
            SELECT nextval('seq_quarantine'), $batch, $source, s.location, s.response_id, s.raw,
                   s.reasons::JSON, $at, CASE WHEN s.resolved THEN 'resolved' ELSE 'open' END,
                   CASE WHEN s.resolved THEN $at END, CASE WHEN s.resolved THEN $batch END
            FROM _import_rejected s
            WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.status = 'open' AND q.source_name = $source
                              AND q.location = s.location AND q.raw = s.raw)
        """, params)


def finish_batch(store: Store, actor: Actor, batch: BatchReport, sha256: str | None) -> None:
    """Check the invariant against the stored counts and close the batch with its audit event."""
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    if batch.records == 0:
        batch.notes.append("empty file: 0 records")
    if not batch.balanced:
        raise RegisterError(f"import of {batch.source_name}: {batch.accepted} accepted + {batch.quarantined} "
                            f"quarantined != {batch.records} records (batch {batch.batch_id} left unfinished): "
                            "report this; import the file again once it is fixed")
    expected = (batch.records, batch.accepted, batch.new_responses, batch.new_revisions, batch.unchanged,
                batch.quarantined)

    def fn(tx: Transaction) -> Change:
        stored = tx.query_row("SELECT records_total, accepted, new_responses, new_revisions, unchanged, quarantined "
                              "FROM import_batches WHERE batch_id = ?", [batch.batch_id],
                              what=f"import batch {batch.batch_id}")
        if tuple(stored) != expected:
            raise RegisterError(f"import batch {batch.batch_id}: stored counts {tuple(stored)} differ from the "
                                f"import's own {expected}; the batch is left unfinished: report this")
        tx.execute("UPDATE import_batches SET finished_at = ? WHERE batch_id = ?", [utc_now(), batch.batch_id])
        after = {name: getattr(batch, name) for name in COUNTS}
        after.update(source_name=batch.source_name, format=batch.format, source_sha256=sha256, notes=batch.notes)
        return Change("import_batch", str(batch.batch_id), None, after)

    store.write(actor, "import.batch", fn)


def _chunks(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    while chunk := list(islice(items, size)):
        yield chunk


def run_batch(store: Store, actor: Actor, *, source_name: str, fmt: str, sha256: str | None,
              items: Iterator[Item], notes: list[str], chunk_size: int, profile, report: ImportReport,
              on_chunk: Callable[[BatchReport, int], None] | None = None,
              resumed: BatchReport | None = None) -> BatchReport:
    """One file as one batch: start it, write its items a chunk per transaction, finish it, score it.

    ``resumed``: an unfinished batch of the same file (``resume_batch``): its stored records are the
    first ``resumed.records`` of the file (chunks commit in file order), so those are skipped.
    """
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    if resumed is None:
        batch = start_batch(store, actor, source_name, fmt, sha256, chunk_size)
    else:
        batch = resumed
        items = islice(items, batch.records, None)
    notes[:0] = batch.notes  # the reader appends to ``notes`` while it reads: keep that very list
    batch.notes = notes
    for chunk in _chunks(items, chunk_size):
        write_chunk(store, actor, batch, chunk, report)
        if on_chunk:
            on_chunk(batch, len(chunk))
    finish_batch(store, actor, batch, sha256)
    report.batches.append(batch)
    if profile is not None:
        _score_unscored(store, actor, profile, batch)
    return batch


def _score_unscored(store: Store, actor: Actor, profile, batch: BatchReport) -> None:
    """Score this batch and any earlier batch holding current responses without a current score.

    Usually that is this batch alone. An import stopped halfway (or run with ``score=False``) leaves
    stored but unscored responses; importing the same file again finds them unchanged, so scoring
    only the new batch would leave them unscored for good.
    """
    batches = [b for (b,) in store.query("""
        SELECT DISTINCT r.batch_id FROM responses r
        ANTI JOIN scores s ON s.response_id = r.response_id AND s.revision = r.revision AND s.is_current
        WHERE r.is_current ORDER BY r.batch_id""")]
    for batch_id in batches:
        summary = scorer.score_imported(store, actor, profile, batch_id=batch_id)
        if batch_id == batch.batch_id:
            batch.score_run_id, batch.scored = summary.run_id, summary.responses_scored
        else:
            batch.notes.append(f"also scored {summary.responses_scored:,} unscored responses of batch {batch_id}")
        if summary.failed_count:  # failed closed: scored as worst case with action review, named here
            batch.scoring_failures += summary.failed_count
            batch.notes.append(f"{summary.failed_count:,} response(s) could not be scored and went to review: "
                               + "; ".join(f"{rid} ({why})" for rid, why in summary.failed.items()))


def record_failed_fix(store: Store, actor: Actor, quarantine_id: int, fixed_raw_text: str, reasons: list[dict],
                      old_raw: str, old_reasons) -> None:
    """A fix that is still invalid: the quarantine row stays open with the new text and reasons (audited
    as ``quarantine.fix_failed`` with the text and reasons it had before)."""
    authorize(store, actor, Permission.IMPORT, entity_type="quarantine", entity_id=quarantine_id)
    def fn(tx: Transaction) -> Change:
        tx.execute("UPDATE quarantine SET raw = ?, reasons = ?::JSON WHERE quarantine_id = ? AND status = 'open'",
                   [fixed_raw_text, json.dumps(reasons), quarantine_id])
        return Change("quarantine", str(quarantine_id),
                      {"raw": old_raw, "reasons": json.loads(old_reasons) if isinstance(old_reasons, str)
                       else old_reasons}, {"raw": fixed_raw_text, "reasons": reasons})

    store.write(actor, "quarantine.fix_failed", fn)


_UNFINISHED_COLUMNS = ("batch_id, source_name, source_sha256, format, started_at, actor_name, chunk_size, "
                       "records_total, accepted, new_responses, new_revisions, unchanged, quarantined")


def unfinished_batches(store: Store, source_name: str | None = None) -> list[dict]:
    """Import batches that were started and never finished (an import killed or interrupted), oldest first."""
    where, params = ("AND source_name = ?", [source_name]) if source_name is not None else ("", [])
    return store.dicts(f"SELECT {_UNFINISHED_COLUMNS} FROM import_batches WHERE finished_at IS NULL {where} "
                       "ORDER BY batch_id", params)


def _report_of(row: dict) -> BatchReport:
    batch = BatchReport(row["batch_id"], row["source_name"], row["format"])
    batch.records, batch.accepted, batch.quarantined = row["records_total"], row["accepted"], row["quarantined"]
    batch.new_responses, batch.new_revisions, batch.unchanged = (row["new_responses"], row["new_revisions"],
                                                                 row["unchanged"])
    return batch


def _reconcile(tx: Transaction, row: dict) -> dict:
    """The batch's stored counts, checked against what it stored: every record counted once, as many
    stored responses as it counts new ones and revisions, no more quarantine rows than it counts."""
    stored = tx.one(f"SELECT {_UNFINISHED_COLUMNS}, finished_at FROM import_batches WHERE batch_id = ?",
                    [row["batch_id"]])
    if stored is None or stored["finished_at"] is not None:
        raise RegisterError(f"import batch {row['batch_id']} is no longer unfinished (finished meanwhile)")
    responses = tx.scalar("SELECT count(*) FROM responses WHERE batch_id = ?", [row["batch_id"]])
    quarantine = tx.scalar("SELECT count(*) FROM quarantine WHERE batch_id = ?", [row["batch_id"]])
    problems = []
    if stored["accepted"] + stored["quarantined"] != stored["records_total"]:
        problems.append(f"{stored['accepted']} accepted + {stored['quarantined']} quarantined != "
                        f"{stored['records_total']} records")
    if responses != stored["new_responses"] + stored["new_revisions"]:
        problems.append(f"it holds {responses} responses but its counts say "
                        f"{stored['new_responses'] + stored['new_revisions']} (new and revised)")
    if quarantine > stored["quarantined"]:
        problems.append(f"it holds {quarantine} quarantine rows but counts {stored['quarantined']}")
    if problems:
        raise RegisterError(f"import batch {row['batch_id']} ({row['source_name']}) cannot be finished: "
                            + "; ".join(problems) + ". Its rows were changed outside the importer: report this")
    return stored


def resume_batch(store: Store, actor: Actor, row: dict) -> BatchReport:
    """Take up an unfinished batch (audited ``import.resume``): its counts reconciled, its report to go on filling."""
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    def fn(tx: Transaction) -> Change:
        stored = _reconcile(tx, row)
        counts = {name: stored["records_total" if name == "records" else name] for name in COUNTS if name != "resolved"}
        return Change("import_batch", str(row["batch_id"]), None, {"resumed_after": counts}, result=stored)

    batch = _report_of(store.write(actor, "import.resume", fn))
    batch.notes.append(f"resumed after {batch.records:,} stored records (the import of "
                       f"{row['started_at']:%Y-%m-%d %H:%M} UTC was interrupted)")
    return batch


def close_batch(store: Store, actor: Actor, row: dict, reason: str) -> None:
    """Finish an unfinished batch as it stands (audited ``import.close``): what it stored is kept and counted."""
    authorize(store, actor, Permission.IMPORT, entity_type="import_batch")
    def fn(tx: Transaction) -> Change:
        stored = _reconcile(tx, row)
        tx.execute("UPDATE import_batches SET finished_at = ? WHERE batch_id = ?", [utc_now(), row["batch_id"]])
        after = {name: stored["records_total" if name == "records" else name] for name in COUNTS if name != "resolved"}
        after.update(source_name=row["source_name"], reason=reason)
        return Change("import_batch", str(row["batch_id"]), None, after)

    store.write(actor, "import.close", fn)
