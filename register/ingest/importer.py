"""Import interchange files into the register: check, parse, validate, store or quarantine, score.

Called by the CLI (``python -m register import``), the demo seeder (``register.demo``) and the app's
pages (first-start seeding, upload, quarantine fixes). ``import_path`` takes one file or a folder
(every supported file in it, sorted by name, one import batch per file):

- ``.jsonl`` / ``.json``: JSON Lines, one response per line (DOMAIN.md section 4);
- ``.csv``: a flat claim table, one claim per row, response fields repeated (header = row 1);
- ``.parquet``: the same flat table, read in record batches (data rows numbered from 1).

Every file is checked before anything is written: its size (``DEFAULT_MAX_BYTES``, or
``HRI_IMPORT_MAX_MB``, or ``max_bytes=``) and its type, by extension and by a sniff of its first bytes
(a PNG renamed ``.jsonl`` is refused with ``ImportRejected``; so is a ``.parquet`` without the Parquet
magic). Text with a byte that is not UTF-8 is not refused: that line or row is quarantined. Then
the file is streamed: records are validated ``chunk_size`` at a time and each chunk is one
``Store.write`` transaction, so memory stays bounded by a chunk, not by the file.

Validation collects every failure, never only the first:

- per record, ``hri_core.parse_response`` (pydantic), exactly as the ``hri_core`` CLI does;
- per flat frame (CSV/Parquet chunk), a pandera schema checks column types and nulls before the rows
  are grouped into responses; its failures are mapped back to row numbers and become field problems
  (``claims[1].criticality: row 5: 'high' is not an integer >= 1``) of the record holding that row;
- per file, a flat table missing a required column quarantines every row with that reason.

A valid record is merged by ``register.ingest.records.insert_responses`` (new / new revision / unchanged);
an invalid one goes to the ``quarantine`` table with its location (``line 7``, ``rows 4,5``), its
response id when known, its raw text verbatim and its reasons ``[{field, message}]``. Nothing is
dropped: ``accepted + quarantined == records`` is asserted for every batch, against the stored counts.

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

import csv
import functools
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import pyarrow as pa

from hri_core import FieldProblem, RecordError, Response, parse_response
from hri_core.readers import CLAIM_FIELDS, group_flat_rows, iter_jsonl, missing_flat_columns
from hri_core.readers import _clean as _clean_cell  # one notion of "empty cell" for the CLI and the register

from register.scoring import scorer
from register.errors import ImportRejected, NotFound, RegisterError
from register.access.permissions import Permission, authorize
from register.scoring.profiles import active_profile
from register.ingest.records import insert_responses
from register.db.store import Actor, Change, Store, utc_now
from register.settings import default, settings

__all__ = ["DEFAULT_MAX_BYTES", "FORMATS", "BatchReport", "ImportReport", "ProgressFn", "QuarantinedRecord",
           "check_file", "import_path", "reimport_quarantined", "scan_file"]

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
DEFAULT_MAX_BYTES = int(default("import_max_mb") * 1024 * 1024)  # HRI_IMPORT_MAX_MB overrides it
MAX_BYTES_ENV = "HRI_IMPORT_MAX_MB"
REPORT_LIMIT = 100  # quarantined records listed in a report (all of them are in the table)
QUARANTINE_KEY = "_quarantine"  # written by the quarantine export; names the row a fixed line resolves
SNIFF_BYTES = 8192

ProgressFn = Callable[[int, "int | None", str], None]

_BINARY_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"), (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)"),
    (b"\x1f\x8b", "a gzip archive"), (b"PAR1", "a Parquet file"), (b"SQLite format 3\x00", "an SQLite database"),
    (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"),
)
_ROWS_LOCATION = re.compile(r"^rows? ([\d,]+)$")
_CLAIM_LOC = re.compile(r"^claims\[(\d+)\]")


# --- reports --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QuarantinedRecord:
    """One record that went to quarantine: where it was, its response id if known, and why."""

    source_name: str
    location: str
    response_id: str | None
    problems: list[dict]  # [{"field": ..., "message": ...}], as stored in quarantine.reasons


@dataclass
class BatchReport:
    """What one file (one import batch) did."""

    batch_id: int
    source_name: str
    format: str
    records: int = 0
    accepted: int = 0  # new_responses + new_revisions + unchanged
    new_responses: int = 0
    new_revisions: int = 0
    unchanged: int = 0
    quarantined: int = 0
    resolved: int = 0  # open quarantine rows that this batch's valid records resolved
    notes: list[str] = field(default_factory=list)
    score_run_id: int | None = None
    scored: int = 0

    @property
    def balanced(self) -> bool:
        return self.accepted + self.quarantined == self.records


_COUNTS = ("records", "accepted", "new_responses", "new_revisions", "unchanged", "quarantined", "resolved")


@dataclass
class ImportReport:
    """The result of ``import_path``: one ``BatchReport`` per file, totals, the first quarantined records."""

    batches: list[BatchReport] = field(default_factory=list)
    quarantined_records: list[QuarantinedRecord] = field(default_factory=list)  # the first REPORT_LIMIT
    notes: list[str] = field(default_factory=list)  # about the import as a whole (skipped files)

    def _total(self, name: str) -> int:
        return sum(getattr(b, name) for b in self.batches)

    @property
    def batch_ids(self) -> list[int]:
        return [b.batch_id for b in self.batches]

    @property
    def records(self) -> int:
        return self._total("records")

    @property
    def accepted(self) -> int:
        return self._total("accepted")

    @property
    def new_responses(self) -> int:
        return self._total("new_responses")

    @property
    def new_revisions(self) -> int:
        return self._total("new_revisions")

    @property
    def unchanged(self) -> int:
        return self._total("unchanged")

    @property
    def quarantined(self) -> int:
        return self._total("quarantined")

    @property
    def resolved(self) -> int:
        return self._total("resolved")

    @property
    def balanced(self) -> bool:
        """The invariant every import keeps: accepted + quarantined == records in the input."""
        return all(b.balanced for b in self.batches)

    def extend(self, other: "ImportReport") -> None:
        """Fold another report in (the CLI imports several paths into one report)."""
        self.batches.extend(other.batches)
        self.notes.extend(other.notes)
        room = REPORT_LIMIT - len(self.quarantined_records)
        self.quarantined_records.extend(other.quarantined_records[:max(0, room)])

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"batch_ids": self.batch_ids}
        out.update({name: self._total(name) for name in _COUNTS})
        out["balanced"] = self.balanced
        out["batches"] = [asdict(b) for b in self.batches]
        out["quarantined_records"] = [asdict(q) for q in self.quarantined_records]
        out["notes"] = list(self.notes)
        return out


# --- one record on its way through ---------------------------------------------------------------


@dataclass(slots=True)
class _Item:
    """A record as read from a file, before validation."""

    location: str
    raw: str  # verbatim text (JSONL line; JSON of the flat rows)
    record: Any  # the decoded record; None when it could not be decoded at all
    problems: list[FieldProblem]  # found before pydantic: decoding, pandera, file level
    response_id: str | None
    ref: int | None = None  # quarantine row this record is a fix for
    claim_rows: list[int] | None = None  # flat tables: the row number of each claim
    check_model: bool = True  # False when a file-level problem already says why


def _response_id(record: Any) -> str | None:
    if not isinstance(record, dict):
        return None
    rid = record.get("response_id")
    if isinstance(rid, str) and rid.strip():
        return rid.strip()
    if isinstance(rid, int) and not isinstance(rid, bool):
        return str(rid)
    return None


def _take_quarantine_ref(record: Any) -> tuple[Any, int | None]:
    """Strip the quarantine export's ``_quarantine`` key; return the record and the row it names."""
    if not isinstance(record, dict) or QUARANTINE_KEY not in record:
        return record, None
    record = dict(record)
    meta = record.pop(QUARANTINE_KEY)
    ref = meta.get("quarantine_id") if isinstance(meta, dict) else None
    return record, ref if isinstance(ref, int) and not isinstance(ref, bool) else None


def _validate(item: _Item) -> tuple[Response | None, list[FieldProblem]]:
    """Every problem of a record: those found while reading, then pydantic's (not repeating a field)."""
    problems = list(item.problems)
    response = None
    if item.check_model and item.record is not None:
        try:
            response = parse_response(item.record)
        except RecordError as error:
            known = {p.loc for p in problems}
            for problem in error.problems:
                if problem.loc not in known:
                    problems.append(_with_row(problem, item.claim_rows))
    return (None, problems) if problems else (response, problems)


def _with_row(problem: FieldProblem, claim_rows: list[int] | None) -> FieldProblem:
    """In flat tables, say which row a claim's problem is on."""
    match = _CLAIM_LOC.match(problem.loc) if claim_rows else None
    if match and int(match.group(1)) < len(claim_rows):
        return FieldProblem(problem.loc, f"row {claim_rows[int(match.group(1))]}: {problem.message}")
    return problem


def _reasons(problems: list[FieldProblem]) -> list[dict]:
    return [{"field": p.loc, "message": p.message} for p in problems]


# --- file checks ---------------------------------------------------------------------------------


def _limit_bytes(max_bytes: int | None) -> int:
    if max_bytes is not None:
        return max_bytes
    return int(settings().import_max_mb * 1024 * 1024)  # a bad HRI_IMPORT_MAX_MB: InvalidSetting names it


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB"


def check_file(path: Path, *, max_bytes: int | None = None) -> str:
    """Refuse a file that must not be imported at all; return its format (``jsonl``, ``csv``, ``parquet``).

    Raises ``ImportRejected`` naming the file: unsupported extension, over the size limit, binary
    content in a text format, or a ``.parquet`` that is not Parquet. An empty file is accepted (it
    imports as zero records and the report says so).
    """
    path = Path(path)
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ImportRejected(f"{path.name}: unsupported file type {path.suffix or '(none)'!r}; "
                             f"expected one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise ImportRejected(f"{path.name}: no such file")
    limit = _limit_bytes(max_bytes)
    size = path.stat().st_size
    if size > limit:
        raise ImportRejected(f"{path.name} is {_mb(size)}, over the import limit of {_mb(limit)} "
                             f"(set {MAX_BYTES_ENV} to change the limit)")
    if size == 0:
        return fmt
    with path.open("rb") as handle:
        head = handle.read(SNIFF_BYTES)
        handle.seek(max(0, size - 4))
        tail = handle.read(4)
    kind = next((name for magic, name in _BINARY_MAGIC if head.startswith(magic)), None)
    if kind is None and head[8:12] == b"DUCK":
        kind = "a DuckDB database"
    if fmt == "parquet":
        if not (head.startswith(b"PAR1") and tail == b"PAR1"):
            raise ImportRejected(f"{path.name} is not a Parquet file" + (f": it looks like {kind}" if kind else ""))
        _open_parquet(path)  # a readable footer, or refuse now rather than after the batch started
        return fmt
    hint = " (rename it .parquet)" if kind == "a Parquet file" else ""
    if kind:
        raise ImportRejected(f"{path.name} is not a {fmt.upper()} text file: it looks like {kind}{hint}")
    if b"\x00" in head:
        raise ImportRejected(f"{path.name} is not a {fmt.upper()} text file: it holds binary data (NUL bytes)")
    # Text that is not UTF-8 is not refused here: the line or row holding a bad byte is quarantined
    # ("not valid UTF-8 text"), wherever it is in the file, and every other record still imports.
    return fmt


def _open_parquet(path: Path):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        raise ImportRejected(f"{path.name} is not a readable Parquet file: {error}") from error


def _files_to_import(path: Path) -> tuple[list[Path], list[str]]:
    """The files of an import: the file itself, or a folder's supported files sorted by name."""
    if not path.exists():
        raise ImportRejected(f"{path}: no such file or folder")
    if not path.is_dir():
        return [path], []
    files, skipped = [], []
    for entry in sorted(path.iterdir()):
        if not entry.is_file() or entry.name.startswith("."):
            continue
        (files if entry.suffix.lower() in FORMATS else skipped).append(entry)
    if not files:
        raise ImportRejected(f"{path}: the folder holds no {', '.join(FORMATS)} files")
    notes = [f"skipped {p.name}: not a supported file type" for p in skipped]
    return files, notes


def scan_file(path: Path, fmt: str) -> tuple[str, int | None]:
    """SHA-256 of the file and, for JSON Lines, its number of records (non-blank lines) for progress."""
    digest = hashlib.sha256()
    count = 0
    with path.open("rb") as handle:
        if fmt == "jsonl":
            for line in handle:
                digest.update(line)
                if line.strip():
                    count += 1
            return digest.hexdigest(), count
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest(), None


# --- readers: file -> items ----------------------------------------------------------------------


def _jsonl_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[_Item]:
    """JSON Lines, decoded line by line so that one bad byte quarantines one line, not the file."""
    undecodable: set[int] = set()

    def lines(handle) -> Iterator[str]:
        for number, data in enumerate(handle, start=1):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                undecodable.add(number)
                text = data.decode("utf-8", errors="replace")
            yield text.removeprefix("\ufeff") if number == 1 else text

    first = True
    with path.open("rb") as handle:
        for number, text, record in iter_jsonl(lines(handle)):
            if first and text.lstrip().startswith("["):
                notes.append("the file looks like one JSON array; the importer reads JSON Lines "
                             "(one JSON object per line)")
            first = False
            location = f"line {number}"
            if number in undecodable:
                yield _Item(location, text, None, [FieldProblem("", "the line is not valid UTF-8 text")], None)
            elif isinstance(record, RecordError):
                yield _Item(location, text, None, list(record.problems), None)
            else:
                record, ref = _take_quarantine_ref(record)
                yield _Item(location, text, record, [], _response_id(record), ref)


def _csv_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[_Item]:
    """Flat CSV: rows streamed with the csv module; header is row 1, blank lines are not rows."""
    csv.field_size_limit(max(csv.field_size_limit(), 1 << 28))  # long answers are fine; the file limit bounds it
    with path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        reader = csv.reader(handle)

        def records() -> Iterator[list[str]]:
            try:
                yield from reader
            except csv.Error as error:  # the rest of the file cannot be split into rows
                raise ImportRejected(f"{path.name}: line {reader.line_num}: not readable as CSV ({error}); "
                                     "the rows before it were imported") from error

        lines = records()
        header = next(lines, None)
        while header is not None and not any(h.strip() for h in header):
            header = next(lines, None)
        if header is None:
            return
        columns = [h.strip() for h in header]

        def rows() -> Iterator[tuple[int, dict, list]]:
            number = 1
            for values in lines:
                if not values:
                    continue
                number += 1
                extra = []
                try:
                    "".join(values).encode("utf-8")
                except UnicodeEncodeError:
                    values = [v.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for v in values]
                    extra.append(("", "the row is not valid UTF-8 text"))
                if len(values) > len(columns):
                    extra.append(("", f"the row has {len(values)} fields but the header has {len(columns)}"))
                yield number, {c: v if v.strip() else None for c, v in zip(columns, values)}, extra

        yield from _flat_items(rows(), columns, chunk_size, notes)


def _parquet_items(path: Path, chunk_size: int, notes: list[str]) -> Iterator[_Item]:
    """Flat Parquet: streamed in record batches; data rows are numbered from 1."""
    parquet = _open_parquet(path)
    columns = [name.strip() for name in parquet.schema_arrow.names]

    def rows() -> Iterator[tuple[int, dict, list]]:
        number = 0
        for batch in parquet.iter_batches(batch_size=max(1024, min(chunk_size, 65536))):
            for row in _blank_to_null(batch, columns).to_pylist():
                number += 1
                yield number, row, []

    yield from _flat_items(rows(), columns, chunk_size, notes)


def _blank_to_null(batch: pa.RecordBatch, columns: list[str]) -> pa.RecordBatch:
    """Blank strings and NaN are missing values (as ``_clean_cell`` says), computed by Arrow per column."""
    import pyarrow.compute as pc

    arrays = []
    for array in batch.columns:
        if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
            array = pc.if_else(pc.equal(pc.utf8_trim_whitespace(array), ""), pa.scalar(None, array.type), array)
        elif pa.types.is_floating(array.type):
            array = pc.if_else(pc.is_nan(array), pa.scalar(None, array.type), array)
        arrays.append(array)
    return pa.RecordBatch.from_arrays(arrays, names=columns)


def _clean_row(row: dict) -> dict:
    return {str(k).strip(): _clean_cell(v) for k, v in row.items() if k is not None}


def _flat_items(rows: Iterator[tuple[int, dict, list]], columns: list[str], chunk_size: int,
                notes: list[str]) -> Iterator[_Item]:
    """Rows of a flat table -> response items, validated per window of about ``chunk_size`` responses.

    A window closes only where the response id changes, so a response whose rows are together is
    never split. Rows of one response scattered within a window are grouped (as ``group_flat_rows``
    does); a response id that comes back after its window was closed is quarantined, because taking
    it as a new revision would silently drop the claims imported before.
    """
    file_problems = [FieldProblem(c, "required column is missing from the file") for c in missing_flat_columns(columns)]
    file_problems += [FieldProblem(c, "the column appears more than once in the header")
                      for c in sorted({c for c in columns if columns.count(c) > 1})]
    if file_problems:
        notes.append("file-level problem, every row is quarantined: " + "; ".join(map(str, file_problems)))
        for number, row, extra in rows:
            problems = file_problems + [FieldProblem(c, f"row {number}: {m}") for c, m in extra]
            yield _Item(f"row {number}", json.dumps([row], default=str), None, problems,
                        _response_id(row), check_model=False)
        return
    closed: set[str] = set()
    for window in _windows(rows, chunk_size):
        yield from _window_items(window, columns, closed, chunk_size)


def _windows(rows: Iterable[tuple[int, dict, list]], size: int) -> Iterator[list[tuple[int, dict, list]]]:
    window: list[tuple[int, dict, list]] = []
    ids: set[str | None] = set()
    for entry in rows:
        rid = entry[1].get("response_id")
        key = None if rid is None else str(rid).strip()
        if len(ids) >= size and key not in ids:
            yield window
            window, ids = [], set()
        window.append(entry)
        ids.add(key)
    if window:
        yield window


def _window_items(window: list[tuple[int, dict, list]], columns: list[str], closed: set[str],
                  chunk_size: int) -> Iterator[_Item]:
    row_problems = _frame_problems(window, columns)
    claim_index: dict[int, int] = {}
    counters: dict[str, int] = {}
    for number, row, _ in window:
        rid = row.get("response_id")
        if rid is not None and any(row.get(name) is not None for name in CLAIM_FIELDS):
            key = str(rid).strip()
            claim_index[number] = counters.get(key, 0)
            counters[key] = claim_index[number] + 1
    seen: set[str] = set()
    for numbers, raw, record in group_flat_rows((n, row) for n, row, _ in window):
        location = ("row " if len(numbers) == 1 else "rows ") + ",".join(map(str, numbers))
        problems: list[FieldProblem] = []
        for n in numbers:
            for column, message in row_problems.get(n, ()):
                loc = f"claims[{claim_index[n]}].{column}" if column in CLAIM_FIELDS and n in claim_index else column
                problems.append(FieldProblem(loc, f"row {n}: {message}"))
        if isinstance(record, RecordError):  # a row without a response id
            known = {p.loc for p in problems}
            problems += [p for p in record.problems if p.loc not in known]
            yield _Item(location, raw, None, problems, None)
            continue
        rid = record["response_id"]
        seen.add(rid)
        if rid in closed:
            problems.insert(0, FieldProblem("response_id", (
                f"rows of response {rid!r} also appear more than {chunk_size} responses earlier in the file, "
                "where they were already imported; keep each response's rows together (sort by response_id)")))
        yield _Item(location, raw, record, problems, rid, claim_rows=[n for n in numbers if n in claim_index])
    closed.update(seen)


# --- pandera: column types and nulls of a flat frame --------------------------------------------

_BOOL_TEXT = ("0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes")  # what pydantic reads


def _integer_at_least(minimum: int):
    def check(series):
        import pandas as pd

        numbers = pd.to_numeric(series, errors="coerce")
        return numbers.notna() & (numbers % 1 == 0) & (numbers >= minimum)
    return check


def _timestamp(series):
    import pandas as pd

    parsed = pd.to_datetime(series.map(lambda v: v if isinstance(v, str) else str(v)), errors="coerce",
                            utc=True, format="ISO8601")
    return parsed.notna() | pd.to_numeric(series, errors="coerce").notna()  # pydantic also reads unix times


def _boolean(series):
    return series.map(lambda v: str(v).strip().lower()).isin(_BOOL_TEXT)


@functools.cache
def _flat_schema():
    """Column types and nulls of a flat claim table; lenient where pydantic is (never stricter)."""
    import pandera.pandas as pda

    def column(check=None, *, nullable=True, required=False):
        return pda.Column(checks=check, nullable=nullable, required=required)

    return pda.DataFrameSchema({
        "response_id": column(nullable=False, required=True),
        "labels": column(required=True),
        "criticality": column(pda.Check(_integer_at_least(1), error="an integer >= 1")),
        "feedback_count": column(pda.Check(_integer_at_least(0), error="an integer >= 0")),
        "created_at": column(pda.Check(_timestamp, error="a date and time (ISO 8601)")),
        "feedback_at": column(pda.Check(_timestamp, error="a date and time (ISO 8601)")),
        "feedback_resolved": column(pda.Check(_boolean, error="true or false")),
    }, strict=False)


_SCHEMA_COLUMNS = ("response_id", "labels", "criticality", "feedback_count", "created_at", "feedback_at",
                   "feedback_resolved")


def _frame_problems(window: list[tuple[int, dict, list]], columns: list[str]) -> dict[int, list[tuple[str, str]]]:
    """Run the pandera schema over a window's frame; (column, message) per failing row number."""
    import pandas as pd
    import pandera.pandas as pda

    out: dict[int, list[tuple[str, str]]] = {}
    for number, _, extra in window:
        if extra:
            out.setdefault(number, []).extend(extra)
    names = [c for c in _SCHEMA_COLUMNS if c in columns]
    frame = pd.DataFrame({c: [row.get(c) for _, row, _ in window] for c in names},
                         index=[n for n, _, _ in window], dtype=object)
    try:
        _flat_schema().validate(frame, lazy=True)
    except pda.errors.SchemaErrors as error:
        cases = error.failure_cases
        for column, check, value, index in cases[["column", "check", "failure_case", "index"]].itertuples(index=False):
            if index is None or pd.isna(index):
                continue  # frame-level failures (missing columns) are handled as file-level problems
            message = "a value is required" if check == "not_nullable" else f"{value!r} is not {check}"
            out.setdefault(int(index), []).append((column, message))
    return out


_READERS = {"jsonl": _jsonl_items, "csv": _csv_items, "parquet": _parquet_items}


# --- writing ------------------------------------------------------------------------------------


def _start_batch(store: Store, actor: Actor, source_name: str, fmt: str, sha256: str | None) -> BatchReport:
    def fn(cur) -> Change:
        batch_id = cur.execute("SELECT nextval('seq_batch')").fetchone()[0]
        cur.execute("INSERT INTO import_batches (batch_id, source_name, source_sha256, format, started_at, "
                    "actor_name) VALUES (?, ?, ?, ?, ?, ?)",
                    [batch_id, source_name, sha256, fmt, utc_now(), actor.name])
        return Change("import_batch", str(batch_id), None,
                      {"source_name": source_name, "format": fmt, "source_sha256": sha256}, result=batch_id)

    return BatchReport(store.write(actor, "import.start", fn), source_name, fmt)


def _write_chunk(store: Store, actor: Actor, batch: BatchReport, chunk: list[_Item], report: ImportReport) -> None:
    """Validate a chunk and store it in one transaction: merge, resolve, quarantine, batch counts."""
    parts: list[list[tuple[Response, str]]] = []  # k-th occurrence of each response id -> parts[k]
    occurrences: dict[str, int] = {}
    accepted = {"response_id": [], "location": [], "ref": []}
    rejected = {"location": [], "response_id": [], "raw": [], "reasons": [], "resolved": []}
    pending: list[tuple[int, _Item, list[FieldProblem]]] = []
    last_valid: dict[str, int] = {}
    for position, item in enumerate(chunk):
        response, problems = _validate(item)
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
        for key, value in (("response_id", rid), ("location", item.location), ("ref", item.ref)):
            accepted[key].append(value)
    for position, item, problems in pending:
        reasons = _reasons(problems)
        # a later valid occurrence of the same response in this chunk fixes it already
        fixed = item.response_id is not None and last_valid.get(item.response_id, -1) > position
        for key, value in (("location", item.location), ("response_id", item.response_id), ("raw", item.raw),
                           ("reasons", json.dumps(reasons)), ("resolved", fixed)):
            rejected[key].append(value)
        if len(report.quarantined_records) < REPORT_LIMIT:
            report.quarantined_records.append(
                QuarantinedRecord(batch.source_name, item.location, item.response_id, reasons))
    accepted_table = pa.table(accepted, schema=pa.schema([("response_id", pa.string()), ("location", pa.string()),
                                                          ("ref", pa.int64())]))
    rejected_table = pa.table(rejected, schema=pa.schema([("location", pa.string()), ("response_id", pa.string()),
                                                          ("raw", pa.string()), ("reasons", pa.string()),
                                                          ("resolved", pa.bool_())]))

    def fn(cur) -> Change:
        now = utc_now()
        new = revised = unchanged = 0
        for part in parts:
            merged = insert_responses(cur, batch.batch_id, now, part)
            new, revised, unchanged = (new + merged.new_responses, revised + merged.new_revisions,
                                       unchanged + merged.unchanged)
        params = {"batch": batch.batch_id, "source": batch.source_name, "at": now}
        resolved = 0
        if accepted_table.num_rows:
            cur.register("_import_accepted", accepted_table)
            try:
                resolved = cur.execute("""
                    UPDATE quarantine SET status = 'resolved', resolved_at = $at, resolved_batch_id = $batch
                    WHERE status = 'open' AND (
                        response_id IN (SELECT response_id FROM _import_accepted)
                        OR quarantine_id IN (SELECT ref FROM _import_accepted WHERE ref IS NOT NULL)
                        OR (response_id IS NULL AND source_name = $source
                            AND location IN (SELECT location FROM _import_accepted)))
                """, params).fetchone()[0]
            finally:
                cur.unregister("_import_accepted")
        if rejected_table.num_rows:
            cur.register("_import_rejected", rejected_table)
            try:
                cur.execute("""
                    INSERT INTO quarantine (quarantine_id, batch_id, source_name, location, response_id, raw, reasons,
                                            created_at, status, resolved_at, resolved_batch_id)
                    SELECT nextval('seq_quarantine'), $batch, $source, s.location, s.response_id, s.raw,
                           s.reasons::JSON, $at, CASE WHEN s.resolved THEN 'resolved' ELSE 'open' END,
                           CASE WHEN s.resolved THEN $at END, CASE WHEN s.resolved THEN $batch END
                    FROM _import_rejected s
                    WHERE NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.status = 'open' AND q.source_name = $source
                                      AND q.location = s.location AND q.raw = s.raw)
                """, params)
            finally:
                cur.unregister("_import_rejected")
        counts = {"records": len(chunk), "accepted": accepted_table.num_rows, "new_responses": new,
                  "new_revisions": revised, "unchanged": unchanged, "quarantined": rejected_table.num_rows,
                  "resolved": resolved}
        cur.execute("""
            UPDATE import_batches SET records_total = records_total + $records, accepted = accepted + $accepted,
                new_responses = new_responses + $new_responses, new_revisions = new_revisions + $new_revisions,
                unchanged = unchanged + $unchanged, quarantined = quarantined + $quarantined
            WHERE batch_id = $batch
        """, {"batch": batch.batch_id, **{k: v for k, v in counts.items() if k != "resolved"}})
        return Change("import_batch", str(batch.batch_id), None, counts, result=counts)

    counts = store.write(actor, "import.chunk", fn)
    for name, value in counts.items():
        setattr(batch, name, getattr(batch, name) + value)


def _finish_batch(store: Store, actor: Actor, batch: BatchReport, sha256: str | None) -> None:
    """Check the invariant against the stored counts and close the batch with its audit event."""
    if batch.records == 0:
        batch.notes.append("empty file: 0 records")
    if not batch.balanced:
        raise RegisterError(f"import of {batch.source_name}: {batch.accepted} accepted + {batch.quarantined} "
                            f"quarantined != {batch.records} records (batch {batch.batch_id} left unfinished)")
    expected = (batch.records, batch.accepted, batch.new_responses, batch.new_revisions, batch.unchanged,
                batch.quarantined)

    def fn(cur) -> Change:
        stored = cur.execute("SELECT records_total, accepted, new_responses, new_revisions, unchanged, quarantined "
                             "FROM import_batches WHERE batch_id = ?", [batch.batch_id]).fetchone()
        if tuple(stored) != expected:
            raise RegisterError(f"import batch {batch.batch_id}: stored counts {tuple(stored)} differ from the "
                                f"import's own {expected}")
        cur.execute("UPDATE import_batches SET finished_at = ? WHERE batch_id = ?", [utc_now(), batch.batch_id])
        after = {name: getattr(batch, name) for name in _COUNTS}
        after.update(source_name=batch.source_name, format=batch.format, source_sha256=sha256, notes=batch.notes)
        return Change("import_batch", str(batch.batch_id), None, after)

    store.write(actor, "import.batch", fn)


def _chunks(items: Iterator[_Item], size: int) -> Iterator[list[_Item]]:
    while chunk := list(islice(items, size)):
        yield chunk


def _run_batch(store: Store, actor: Actor, *, source_name: str, fmt: str, sha256: str | None,
               items: Iterator[_Item], notes: list[str], chunk_size: int, profile, report: ImportReport,
               on_chunk: Callable[[BatchReport, int], None] | None = None) -> BatchReport:
    batch = _start_batch(store, actor, source_name, fmt, sha256)
    batch.notes = notes
    for chunk in _chunks(items, chunk_size):
        _write_chunk(store, actor, batch, chunk, report)
        if on_chunk:
            on_chunk(batch, len(chunk))
    _finish_batch(store, actor, batch, sha256)
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


# --- public API ---------------------------------------------------------------------------------


def import_path(store: Store, actor: Actor, path: str | Path, *, progress: ProgressFn | None = None,
                chunk_size: int = 5000, score: bool = True, max_bytes: int | None = None) -> ImportReport:
    """Import a file or every supported file of a folder (one batch per file); score what changed.

    ``progress(done_records, total_or_None, message)`` is called after every chunk; ``total`` is known
    for JSON Lines (its non-blank lines) and None otherwise. With ``score=True`` each batch that
    added responses or revisions is rescored under the active profile. Raises ``ImportRejected`` (before
    anything is written) when a file is refused, ``NotFound`` when there is no active profile to score with.
    """
    authorize(store, actor, Permission.IMPORT, entity_type="import", entity_id=str(path))
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    path = Path(path)
    files, skipped = _files_to_import(path)
    formats = [check_file(f, max_bytes=max_bytes) for f in files]  # refuse before writing anything
    profile = active_profile(store) if score else None
    scans = [scan_file(f, fmt) for f, fmt in zip(files, formats)]
    totals = [total for _, total in scans]
    grand_total = None if any(t is None for t in totals) else sum(totals)
    report = ImportReport(notes=skipped)
    done = 0

    def on_chunk(batch: BatchReport, size: int) -> None:
        nonlocal done
        done += size
        if progress:
            progress(done, grand_total, f"{batch.source_name}: {batch.records:,} records, {batch.accepted:,} accepted, "
                                        f"{batch.quarantined:,} quarantined")

    for file, fmt, (sha256, _) in zip(files, formats, scans):
        notes: list[str] = []
        items = _READERS[fmt](file, chunk_size, notes)
        batch = _run_batch(store, actor, source_name=file.name, fmt=fmt, sha256=sha256, items=items, notes=notes,
                           chunk_size=chunk_size, profile=profile, report=report, on_chunk=on_chunk)
        if progress:
            progress(done, grand_total, f"{file.name}: done, {batch.records:,} records"
                                        + (f", {batch.scored:,} scored" if batch.score_run_id else ""))
    return report


def _text_items(text: str, location: str) -> list[_Item]:
    """A fixed record typed by a user: one JSON object, or the JSON list of flat rows a quarantine row holds."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return [_Item(location, text, None, [FieldProblem("", f"malformed JSON at line {error.lineno} column "
                                                             f"{error.colno}: {error.msg}")], None)]
    if isinstance(data, list) and data and all(isinstance(row, dict) for row in data):
        match = _ROWS_LOCATION.match(location)
        numbers = [int(n) for n in match.group(1).split(",")] if match else []
        if len(numbers) != len(data):
            numbers = list(range(1, len(data) + 1))
        rows = [_clean_row(row) for row in data]
        columns = list(dict.fromkeys(key for row in rows for key in row))
        items = list(_flat_items(iter([(n, row, []) for n, row in zip(numbers, rows)]), columns, len(rows) + 1, []))
        for item in items:
            item.raw = text
        return items
    record, _ = _take_quarantine_ref(data)
    return [_Item(location, text, record, [], _response_id(record))]


def reimport_quarantined(store: Store, actor: Actor, quarantine_id: int, fixed_raw_text: str, *,
                         score: bool = True) -> ImportReport:
    """Fix one quarantined record in place: validate the fixed text, import it in a new batch, resolve the row.

    The fixed text is a JSON object (a JSON Lines record) or, for a record from a flat table, the JSON
    list of its rows as the quarantine row shows them. Still invalid: the row stays open with the new
    raw text and reasons (audit event ``quarantine.fix_failed``) and ``RecordError`` is raised.
    """
    authorize(store, actor, Permission.IMPORT, entity_type="quarantine", entity_id=quarantine_id)
    row = store.query_one("SELECT status, source_name, location, raw, reasons FROM quarantine WHERE quarantine_id = ?",
                          [quarantine_id])
    if row is None:
        raise NotFound(f"quarantine row {quarantine_id} does not exist")
    status, source_name, location, old_raw, old_reasons = row
    if status != "open":
        raise RegisterError(f"quarantine row {quarantine_id} is already resolved")
    items = _text_items(fixed_raw_text, location)
    if len(items) != 1:
        problem = FieldProblem("", f"the fixed text holds {len(items)} records; it must hold exactly one response")
        items = [_Item(location, fixed_raw_text, None, [problem], None)]
    item = items[0]
    item.ref = quarantine_id
    response, problems = _validate(item)
    if response is None:
        reasons = _reasons(problems)

        def fn(cur) -> Change:
            cur.execute("UPDATE quarantine SET raw = ?, reasons = ?::JSON WHERE quarantine_id = ? AND status = 'open'",
                        [fixed_raw_text, json.dumps(reasons), quarantine_id])
            return Change("quarantine", str(quarantine_id),
                          {"raw": old_raw, "reasons": json.loads(old_reasons) if isinstance(old_reasons, str)
                           else old_reasons}, {"raw": fixed_raw_text, "reasons": reasons})

        store.write(actor, "quarantine.fix_failed", fn)
        raise RecordError(problems, record=f"quarantine {quarantine_id} ({source_name}, {location})")
    profile = active_profile(store) if score else None
    report = ImportReport()
    sha256 = hashlib.sha256(fixed_raw_text.encode("utf-8", "surrogateescape")).hexdigest()
    batch = _run_batch(store, actor, source_name=source_name, fmt="quarantine-fix", sha256=sha256, items=iter([item]),
                       notes=[f"fix of quarantine row {quarantine_id}"], chunk_size=1, profile=profile, report=report)
    if batch.resolved == 0:  # the row was resolved concurrently between the read and the write
        batch.notes.append(f"quarantine row {quarantine_id} was already resolved")
    return report
