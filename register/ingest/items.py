"""One record on its way through an import: what was read, where, and its validation.

Every reader (``register.ingest.readers``) turns a file into ``Item``s; the batch writer
(``register.ingest.batches``) validates each with ``validate_item`` and stores it, or quarantines it
with ``reasons_of`` its problems. ``QUARANTINE_KEY`` is the key the quarantine export
(``register.ingest.exporter``) writes on each line so that a fixed line names the row it resolves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hri_core import FieldProblem, RecordError, Response, parse_response

__all__ = ["QUARANTINE_KEY", "Item", "reasons_of", "response_id_of", "take_quarantine_ref", "validate_item"]

QUARANTINE_KEY = "_quarantine"  # written by the quarantine export; names the row a fixed line resolves
_CLAIM_LOC = re.compile(r"^claims\[(\d+)\]")


@dataclass(slots=True)
class Item:
    """A record as read from a file, before validation."""

    location: str
    raw: str  # verbatim text (JSONL line; JSON of the flat rows)
    record: Any  # the decoded record; None when it could not be decoded at all
    problems: list[FieldProblem]  # found before pydantic: decoding, pandera, file level
    response_id: str | None
    ref: int | None = None  # quarantine row this record is a fix for
    claim_rows: list[int] | None = None  # flat tables: the row number of each claim
    check_model: bool = True  # False when a file-level problem already says why


def response_id_of(record: Any) -> str | None:
    """The record's response id as text, when it has a usable one."""
    if not isinstance(record, dict):
        return None
    rid = record.get("response_id")
    if isinstance(rid, str) and rid.strip():
        return rid.strip()
    if isinstance(rid, int) and not isinstance(rid, bool):
        return str(rid)
    return None


def take_quarantine_ref(record: Any) -> tuple[Any, int | None]:
    """Strip the quarantine export's ``_quarantine`` key; return the record and the row it names."""
    if not isinstance(record, dict) or QUARANTINE_KEY not in record:
        return record, None
    record = dict(record)
    meta = record.pop(QUARANTINE_KEY)
    ref = meta.get("quarantine_id") if isinstance(meta, dict) else None
    return record, ref if isinstance(ref, int) and not isinstance(ref, bool) else None


def validate_item(item: Item) -> tuple[Response | None, list[FieldProblem]]:
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


def reasons_of(problems: list[FieldProblem]) -> list[dict]:
    """Problems as stored in ``quarantine.reasons``: ``[{"field", "message"}]``."""
    return [{"field": p.loc, "message": p.message} for p in problems]
