"""Decode interchange files into raw response records, keeping every failure with its line.

Pure functions over already-open text (no file system access of their own): the CLI and the
register's importer both call them. Each function yields ``(line, raw_text, record_or_failure)``
so a caller can validate the record and, on failure, keep the raw text verbatim for quarantine.

Flat claim tables (CSV, or Parquet read by the register) have one row per claim with the response
fields repeated; rows are grouped by ``response_id`` in order of first appearance. A row whose claim
columns are all empty stands for a response with no claims.

JSON is read strictly and within limits (``hri_core.strict_json.decode_json``), so that no line changes
meaning on its way in and none can crash the reader: a key repeated in one object, a lone surrogate,
``NaN`` / ``Infinity``, nesting deeper than ``MAX_JSON_DEPTH`` and numbers longer than ``MAX_NUMBER_DIGITS``
each make that line invalid, with the field named where there is one.

An id in a flat table is text or an integer (a typed column's whole numbers, read as their digits); any
other value (a float such as ``1.0`` or ``1e+300``, a boolean, a date) makes its row invalid, naming the column.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from typing import Any

from .errors import FieldProblem, RecordError
from .models import id_problem, json_kind
from .strict_json import decode_json

__all__ = ["CLAIM_FIELDS", "FLAT_COLUMNS", "FLAT_REQUIRED_COLUMNS", "RESPONSE_FIELDS", "decode_json", "decode_object",
           "group_flat_rows", "iter_csv", "iter_jsonl", "missing_flat_columns", "unclosed_quote_line"]

RESPONSE_FIELDS = ("response_id", "use_case", "model", "created_at", "question", "answer", "stakes",
                   "gt_answer", "query_ambiguous", "retrieved_context")  # retrieved_context: JSON text
CLAIM_FIELDS = ("claim_id", "text", "labels", "dimensions", "criticality", "source_id", "span",
                "feedback_at", "feedback_count", "feedback_resolved", "category", "is_core", "contradicted_by")
FLAT_REQUIRED_COLUMNS = ("response_id", "labels")
FLAT_COLUMNS = RESPONSE_FIELDS + CLAIM_FIELDS


def decode_object(text: str, what: str = "") -> tuple[dict[str, Any] | None, list[FieldProblem]]:
    """``decode_json`` for a line that must hold one JSON object (``what`` it stands for, e.g. "one response")."""
    value, problems = decode_json(text)
    if not problems and not isinstance(value, dict):
        problems = [FieldProblem("", f"expected a JSON object{f' ({what})' if what else ''}, got {json_kind(value)}")]
    return (None, problems) if problems else (value, [])


def iter_jsonl(lines: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any] | RecordError]]:
    """One JSON object per non-blank line; a line that is not one (strictly, ``decode_json``) yields a RecordError."""
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r\n")
        if not text.strip():
            continue
        value, problems = decode_object(text, "one response")
        if value is None:
            yield number, text, RecordError(problems, record=f"line {number}")
        else:
            yield number, text, value


def _clean(value: Any) -> Any:
    """Empty cells are missing values; NaN from dataframes too."""
    if value is None:
        return None
    if isinstance(value, float) and value != value:  # NaN
        return None
    if isinstance(value, str) and not value.strip():
        return None
    return value


_CLAIM_IDS = ("claim_id", "source_id")


def _id_text(value: Any) -> Any:
    """An id from a typed column: an integer as its digits (``id_problem`` says what else is refused)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def missing_flat_columns(columns: Iterable[str]) -> list[str]:
    """Required flat-table columns absent from a header."""
    present = {c.strip() for c in columns}
    return [c for c in FLAT_REQUIRED_COLUMNS if c not in present]


def group_flat_rows(
    rows: Iterable[tuple[int, dict[str, Any]]],
) -> Iterator[tuple[list[int], str, dict[str, Any] | RecordError]]:
    """Group flat rows (row number, mapping) into response records.

    Yields ``(row_numbers, raw_json, record)``; ``raw_json`` is the JSON of the rows themselves so that
    a quarantined response keeps exactly what the user sent. Rows are buffered per response id, so a
    file whose rows of one response are scattered still groups correctly.
    """
    groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    orphans: list[tuple[int, dict[str, Any], str]] = []
    for number, row in rows:
        row = {k.strip(): _clean(v) for k, v in row.items() if k is not None}
        rid = row.get("response_id")
        problem = "Field required" if rid is None else id_problem(rid)
        if problem is not None:  # no response to group it with: its own record, invalid
            orphans.append((number, row, problem))
            continue
        groups.setdefault(str(rid).strip(), []).append((number, row))
    for number, row, problem in orphans:
        yield [number], json.dumps(row, default=str), RecordError([FieldProblem("response_id", problem)],
                                                                  record=f"row {number}")
    for rid, members in groups.items():
        first = members[0][1]
        record: dict[str, Any] = {"response_id": rid}
        for name in RESPONSE_FIELDS[1:]:
            if first.get(name) is not None:
                record[name] = first[name]
        claims = []
        for _, row in members:
            claim = {name: _id_text(row[name]) if name in _CLAIM_IDS else row[name]
                     for name in CLAIM_FIELDS if row.get(name) is not None}
            if claim:
                claims.append(claim)
        record["claims"] = claims
        raw = json.dumps([row for _, row in members], default=str)
        yield [n for n, _ in members], raw, record


def unclosed_quote_line(lines: Iterable[str]) -> int | None:
    """The line where a quoted field opens that the file never closes, or None.

    ``csv`` reads such a field to the end of the file without complaint, swallowing every row after it
    into one value; its strict mode notices ("unexpected end of data"). Strict mode also refuses a quote
    in the middle of a field, which the lenient reader keeps as text: those errors are skipped (the
    reader resumes on the next line). A whole extra pass, so callers run it only when the file holds an
    odd number of quote characters, as every file with an unclosed quote does.
    """
    reader = csv.reader(lines, strict=True)
    while True:
        start = reader.line_num + 1
        try:
            next(reader)
        except StopIteration:
            return None
        except csv.Error as error:
            if "unexpected end of data" in str(error):
                return start


def iter_csv(lines: Iterable[str]) -> Iterator[tuple[list[int], str, dict[str, Any] | RecordError]]:
    """Flat CSV claim table -> response records. Row numbers count the header as row 1."""
    csv.field_size_limit(2 ** 31 - 1)  # a long answer is a record problem (its length limit), not a crash
    reader = csv.DictReader(lines)
    if reader.fieldnames is None:  # an empty file: no header, no rows, nothing to report
        return
    header = reader.fieldnames
    missing = missing_flat_columns(header)
    if missing:
        rows = list(reader)
        error = RecordError([FieldProblem(c, "required column is missing from the file") for c in missing],
                            record="header")
        if not rows:
            yield [1], ",".join(header), error
        for offset, row in enumerate(rows, start=2):
            yield [offset], json.dumps(row, default=str), RecordError(error.problems, record=f"row {offset}")
        return
    yield from group_flat_rows((n, row) for n, row in enumerate(reader, start=2))
