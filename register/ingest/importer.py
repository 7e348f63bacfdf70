"""Import interchange files into the register: the public API of ``register.ingest``.

Called by the CLI (``python -m register import``), the demo seeder (``register.demo``) and the app's
pages (first-start seeding, upload, quarantine fixes). ``import_path`` takes one file or a folder
(every supported file in it, sorted by name, one import batch per file); ``reimport_quarantined``
imports the fixed text of one quarantined record. The work is done by one module per step:

- ``files``: which files, and whether each may be imported at all (size, type by extension and by
  sniffing its first bytes) -- checked before anything is written;
- ``readers``: JSON Lines, CSV and Parquet (and a fixed record's text) streamed into ``items.Item``s;
  flat tables are checked by the pandera schema of ``frame_schema``;
- ``batches``: each chunk of ``chunk_size`` records validated (``hri_core.parse_response``, pydantic)
  and stored in one ``Store.write`` transaction, so memory stays bounded by a chunk, not by the file;
- ``reports``: what the import did, per file and in all.

An import stopped halfway (killed, Ctrl-C) keeps its committed chunks and leaves its batch unfinished
(``status`` lists it). ``import_path(..., resume=True)`` (``python -m register import --resume FILE``)
finishes it: for each file, an unfinished batch of the same name and content is taken up where it
stopped (its counts reconciled with its stored rows first, audited ``import.resume``), with the chunk
size it ran with, and ends like any batch (``import.batch``, scored); one of the same name whose file
changed since is closed as it stands (``import.close``) and the file imported anew. Nothing is lost:
re-importing records that were stored counts them as unchanged.

Validation collects every failure, never only the first. A valid record is merged by
``register.ingest.records.insert_responses`` (new / new revision / unchanged); an invalid one goes to
the ``quarantine`` table with its location (``line 7``, ``rows 4,5``), its response id when known,
its raw text verbatim and its reasons ``[{field, message}]``. Nothing is dropped:
``accepted + quarantined == records`` is asserted for every batch, against the stored counts.

Quarantine life cycle. A quarantine row stays ``open`` until a valid record for it is imported:
(a) any valid record with the same response id, (b) for a row that had no response id, a valid record
at the same location of a file with the same name, or (c) a record that names the row explicitly,
either through ``reimport_quarantined`` (the page's "fix in place") or through the ``_quarantine``
key that ``register.ingest.exporter.export_quarantine`` writes on each line. The row is then marked
``resolved`` (``resolved_at``, ``resolved_batch_id``) in the same transaction that stores the fixed
record. Re-importing a still-broken record adds no second open row when an open row with the same
file name, location and raw text exists, so re-importing any file twice adds no rows at all.
Duplicate response ids inside one file are imported in file order: a later occurrence with other
content becomes the next revision, one with the same content counts as unchanged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from hri_core import FieldProblem, RecordError
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import NotFound, RegisterError
from register.ingest.batches import close_batch, record_failed_fix, resume_batch, run_batch, unfinished_batches
from register.ingest.files import DEFAULT_MAX_BYTES, FORMATS, check_file, files_to_import, scan_file
from register.ingest.items import QUARANTINE_KEY, Item, reasons_of, validate_item
from register.ingest.rag_files import RAG_KINDS, RagOptions, rag_items, rag_kind
from register.ingest.readers import READERS, text_items
from register.ingest.reports import DEFAULT_CHUNK, DEFERRED, INDEXED, BatchReport, ImportReport, QuarantinedRecord
from register.readmodels import hub
from register.scoring.profiles import active_profile

__all__ = ["DEFAULT_CHUNK", "DEFAULT_MAX_BYTES", "FORMATS", "QUARANTINE_KEY", "BatchReport", "ImportReport",
           "ProgressFn", "QuarantinedRecord", "check_file", "import_path", "reimport_quarantined", "scan_file"]

ProgressFn = Callable[[int, "int | None", str], None]


def import_path(store: Store, actor: Actor, path: str | Path, *, progress: ProgressFn | None = None,
                chunk_size: int = DEFAULT_CHUNK, score: bool = True, max_bytes: int | None = None,
                resume: bool = False, rag: RagOptions | None = None,
                defer_index: bool | None = False) -> ImportReport:
    """Import a file or every supported file of a folder (one batch per file); score what changed.

    ``progress(done_records, total_or_None, message)`` is called after every chunk; ``total`` is known
    for JSON Lines (its non-blank lines) and None otherwise. With ``score=True`` each batch that
    added responses or revisions is rescored under the active profile. ``resume=True`` finishes the
    unfinished batch of each file (see the module docstring). RAGChecker results and RAGAS result tables
    are recognised by their content (``register.ingest.rag_files``); ``rag`` adds what they do not say
    (use case, model, ...) and sets their response id prefix. Raises ``ImportRejected`` (before anything
    is written) when a file is refused, ``NotFound`` when there is no active profile to score with.

    The search index catches up with the new revisions last (``hub.revisions_committed``): with
    ``defer_index=False`` before the report (the command line's default: scripts read the index after an import);
    ``True`` leaves it to later (``import --defer-index``: the running console's background catch-up, or ``python
    -m register search-index``); ``None`` hands it to this process's background indexer when one runs (the
    console's imports: upload, inbox, API), else indexes before the report. The report says which
    (``ImportReport.search_index``). Search finds the new answers either way (what the index has not caught up
    with is scanned).
    """
    authorize(store, actor, Permission.IMPORT, entity_type="import", entity_id=str(path))
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    path = Path(path)
    files, skipped = files_to_import(path)
    formats = [check_file(f, max_bytes=max_bytes) for f in files]  # refuse before writing anything
    profile = active_profile(store) if score else None
    scans = [scan_file(f, fmt) for f, fmt in zip(files, formats, strict=True)]
    kinds = [rag_kind(f, fmt) for f, fmt in zip(files, formats, strict=True)]
    totals = [None if kind else total for (_, total), kind in zip(scans, kinds, strict=True)]
    known = [t for t in totals if t is not None]
    grand_total = sum(known) if len(known) == len(totals) else None
    report = ImportReport(notes=skipped)
    done = 0

    def on_chunk(batch: BatchReport, size: int) -> None:
        nonlocal done
        done += size
        if progress:
            progress(done, grand_total, f"{batch.source_name}: {batch.records:,} records, {batch.accepted:,} accepted, "
                                        f"{batch.quarantined:,} quarantined")

    for file, fmt, kind, (sha256, _) in zip(files, formats, kinds, scans, strict=True):
        notes: list[str] = []
        resumed, size = _resumed(store, actor, file.name, sha256, report) if resume else (None, chunk_size)
        if kind:  # read (and refused if unreadable) before its batch starts
            items = rag_items(kind, file, fmt, rag or RagOptions(), notes)
        else:
            items = READERS[fmt](file, size or chunk_size, notes)
        batch = run_batch(store, actor, source_name=file.name, fmt=kind or fmt, sha256=sha256, items=items,
                          notes=notes,
                          chunk_size=size or chunk_size, profile=profile, report=report, on_chunk=on_chunk,
                          resumed=resumed)
        if progress:
            progress(done, grand_total, f"{file.name}: done, {batch.records:,} records"
                                        + (f", {batch.scored:,} scored" if batch.score_run_id else ""))
    # the new revisions into the search index (until then a search scans them: it is never stale, only slower);
    # its progress in the import's terms: every record read, the message saying how far the index is
    def index_progress(_indexed: int, _total: int | None, message: str) -> None:
        if progress:
            progress(done, grand_total, message)

    indexed = hub.revisions_committed(store, actor, progress=index_progress, defer=defer_index)
    report.search_index = DEFERRED if indexed is None else INDEXED
    return report


def _resumed(store: Store, actor: Actor, name: str, sha256: str, report: ImportReport) -> tuple[BatchReport | None,
                                                                                            int | None]:
    """The unfinished batch of this file to take up, and its chunk size; unfinished batches of the same
    name whose content differs are closed as they stand (their stored records are kept)."""
    candidates = unfinished_batches(store, name)
    same = [row for row in candidates if row["source_sha256"] == sha256]
    take = same[-1] if same else None
    for row in candidates:
        if row is not take:
            reason = ("its file changed since it was interrupted" if row["source_sha256"] != sha256
                      else "a later interrupted import of the same file is resumed instead")
            close_batch(store, actor, row, reason)
            report.notes.append(f"closed unfinished batch {row['batch_id']} of {name} as it stood "
                                f"({row['records_total']:,} records stored): {reason}")
    if take is None:
        report.notes.append(f"{name}: no unfinished import of this file to resume; imported it anew")
        return None, None
    return resume_batch(store, actor, take), take["chunk_size"]


def reimport_quarantined(store: Store, actor: Actor, quarantine_id: int, fixed_raw_text: str, *,
                         score: bool = True) -> ImportReport:
    """Fix one quarantined record in place: validate the fixed text, import it in a new batch, resolve the row.

    The fixed text is a JSON object (a JSON Lines record) or, for a record from a flat table, the JSON
    list of its rows as the quarantine row shows them. Still invalid: the row stays open with the new
    raw text and reasons (audit event ``quarantine.fix_failed``) and ``RecordError`` is raised.
    """
    authorize(store, actor, Permission.IMPORT, entity_type="quarantine", entity_id=quarantine_id)
    row = store.one("SELECT q.status, q.source_name, q.location, q.raw, q.reasons, b.format FROM quarantine q "
                    "LEFT JOIN import_batches b ON b.batch_id = q.batch_id WHERE q.quarantine_id = ?",
                    [quarantine_id])
    if row is None:
        raise NotFound(f"quarantine row {quarantine_id} does not exist")
    source_name, location = row["source_name"], row["location"]
    if row["status"] != "open":
        raise RegisterError(f"quarantine row {quarantine_id} is already {row['status']}: nothing to fix")
    if row["format"] in RAG_KINDS:  # its text is a RAGChecker query or a RAGAS row, not an interchange record
        raise RegisterError(f"quarantine row {quarantine_id} is {location} of {row['format']} results "
                            f"{source_name}: fix it in that file and import the file again (its stored records "
                            "count as unchanged; the fixed one resolves this row)")
    items = text_items(fixed_raw_text, location)
    if len(items) != 1:
        problem = FieldProblem("", f"the fixed text holds {len(items)} records; it must hold exactly one response")
        items = [Item(location, fixed_raw_text, None, [problem], None)]
    item = items[0]
    item.ref = quarantine_id
    response, problems = validate_item(item)
    if response is None:
        record_failed_fix(store, actor, quarantine_id, fixed_raw_text, reasons_of(problems), row["raw"],
                          row["reasons"])
        raise RecordError(problems, record=f"quarantine {quarantine_id} ({source_name}, {location})")
    profile = active_profile(store) if score else None
    report = ImportReport()
    sha256 = hashlib.sha256(fixed_raw_text.encode("utf-8", "surrogateescape")).hexdigest()
    batch = run_batch(store, actor, source_name=source_name, fmt="quarantine-fix", sha256=sha256, items=iter([item]),
                      notes=[f"fix of quarantine row {quarantine_id}"], chunk_size=1, profile=profile, report=report)
    # the fixed record into the search index (the console's background indexer's, when one runs)
    if hub.revisions_committed(store, actor) is None:
        report.search_index = DEFERRED
    if batch.resolved == 0:  # the row was resolved concurrently between the read and the write
        batch.notes.append(f"quarantine row {quarantine_id} was already resolved")
    return report
