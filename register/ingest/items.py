"""One record on its way through an import: what was read, where, and its validation.

Every reader (``register.ingest.readers``) turns a file into ``Item``s; the batch writer
(``register.ingest.batches``) validates each with ``validate_item`` and stores it, or quarantines it
with ``reasons_of`` its problems. ``QUARANTINE_KEY`` is the key the quarantine export
(``register.ingest.exporter``) writes on each line so that a fixed line names the row it resolves.
Text fields are held to the limits of the settings (``text_limits``: ``HRI_MAX_ANSWER_CHARS``, ...); a
field over its limit is named with the setting that would raise it. A claim's ``feedback_at`` later than the
import time (beyond ``hri_core.feedback.FEEDBACK_CLOCK_SKEW``) is a problem of its record: counted as feedback
not validated yet, it would lower the answer's risk (``hri_core.feedback.future_feedback_problems``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hri_core import FieldProblem, RecordError, Response, parse_response
from hri_core.feedback import future_feedback_problems
from hri_core.models import TextLimits
from register.db.store import utc_now
from register.settings import env_name, settings

__all__ = ["QUARANTINE_KEY", "Item", "reasons_of", "response_id_of", "take_quarantine_ref", "text_limits",
           "validate_item"]

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
    extra: dict[str, Any] | None = None  # what a reader knows beyond the record (a RAGAS row's scores)
    decoded: bool = True  # False: a JSON Lines line not decoded yet (``readers.decode_line``; bulk checks first)


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


# the text fields whose limit is a setting: their locations, and the setting of each
_LIMITED_FIELD = re.compile(r"^(?:(answer|question)|claims\[\d+\]\.(text|span))$")
_LIMIT_SETTING = {"answer": "max_answer_chars", "question": "max_question_chars", "text": "max_claim_text_chars",
                  "span": "max_span_chars"}
_OVER_LIMIT = "characters long, over the limit of"


def text_limits() -> TextLimits:
    """The text limits in force (the settings' values; the identifier limit is hri_core's)."""
    current = settings()
    return TextLimits(answer=current.max_answer_chars, question=current.max_question_chars,
                      claim_text=current.max_claim_text_chars, span=current.max_span_chars)


def validate_item(item: Item, limits: TextLimits | None = None,
                  imported_at: datetime | None = None) -> tuple[Response | None, list[FieldProblem]]:
    """Every problem of a record: those found while reading, then pydantic's (not repeating a field), then any
    feedback time later than ``imported_at`` (default now) allows.

    ``limits``: the text limits (default: ``text_limits()``; the batch writer reads them once per chunk).
    """
    problems = list(item.problems)
    response = None
    if item.check_model and item.record is not None:
        try:
            response = parse_response(item.record, limits=limits or text_limits())
        except RecordError as error:
            known = {p.loc for p in problems}
            for problem in error.problems:
                if problem.loc not in known:
                    problems.append(_with_row(_with_setting(problem), item.claim_rows))
        except RecursionError:  # the readers bound nesting (hri_core.strict_json); this record must not stop the rest
            problems.append(FieldProblem("", "the record is nested too deeply to be validated"))
        else:
            problems += [_with_row(problem, item.claim_rows)
                         for problem in future_feedback_problems(response, imported_at or utc_now())]
    return (None, problems) if problems else (response, problems)


def _with_setting(problem: FieldProblem) -> FieldProblem:
    """A text over its limit names the setting that sets the limit."""
    match = _LIMITED_FIELD.match(problem.loc)
    if match and _OVER_LIMIT in problem.message:
        setting = _LIMIT_SETTING[match.group(1) or match.group(2)]
        return FieldProblem(problem.loc, f"{problem.message} ({env_name(setting)})")
    return problem


def _with_row(problem: FieldProblem, claim_rows: list[int] | None) -> FieldProblem:
    """In flat tables, say which row a claim's problem is on."""
    if claim_rows and (match := _CLAIM_LOC.match(problem.loc)) and int(match.group(1)) < len(claim_rows):
        return FieldProblem(problem.loc, f"row {claim_rows[int(match.group(1))]}: {problem.message}")
    return problem


def reasons_of(problems: list[FieldProblem]) -> list[dict]:
    """Problems as stored in ``quarantine.reasons``: ``[{"field", "message"}]``."""
    return [{"field": p.loc, "message": p.message} for p in problems]
