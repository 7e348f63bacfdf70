"""Rows of the source, claims and use-case registers as they come in: normalised, then validated whole.

Called by the register writes (``register.governance.registers``), the file import
(``register.governance.transfer``) and the evidence rules (``register.governance.evidence``). Cells
arrive from data editors, CSV and Excel files in many shapes (NaN, blank text, dates as text, lists
as ``a; b``); ``normalise_source`` / ``normalise_claim`` / ``normalise_use_case`` give each column one
Python type, and
``validate`` runs a pandera schema over all rows at once, collecting every failure with its row
number (nothing is written when any is found).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

import pandas as pd

from hri_core.fingerprint import sha256_hex
from hri_core.models import CATEGORY_ALIASES
from hri_core.vocabulary import CATEGORIES
from register.access.permissions import ROLES
from register.errors import Problem
from register.governance.vocabulary import (
    APPROVED,
    CLAIM_TYPES,
    MUTABLE_SOURCE_TYPES,
    REQUESTER_ROLE_PATTERN,
    SOURCE_BASES,
    SOURCE_TYPES,
    STATUSES,
    USE_CASE_STATUSES,
    WEAKEST_TIER,
)

__all__ = ["CLAIM_COLUMNS", "SOURCE_COLUMNS", "USE_CASE_COLUMNS", "claim_key_for", "is_blank", "list_value",
           "locator_list", "normalise_claim", "normalise_source", "normalise_use_case", "same_person", "text_value",
           "validate"]

SOURCE_COLUMNS = ("source_id", "title", "ref", "source_type", "authority_tier", "publisher", "access_date",
                  "valid_until", "superseded_by", "archive_url", "content_hash", "restricted_to", "notes")
CLAIM_COLUMNS = ("claim_key", "statement", "claim_type", "source_ids", "verification_status", "reviewer",
                 "reviewed_on", "notes", "no_peer_reviewed_source", "source_basis", "source_locators")
LOCATOR_SEPARATOR = "|"  # a locator may quote text with ; or , in it: a file separates them by | only
MAX_LOCATOR = 500
USE_CASE_COLUMNS = ("use_case_id", "owner", "purpose", "status", "allowed_categories", "allowed_topics",
                    "requester_roles", "approved_by", "evidence_link", "evidence_hash", "review_by", "notes")

_INVALID = "\x00"  # prefix of a value that could not be read as its type (validation reports it)


# --- value normalisation ---------------------------------------------------------------------------


def is_blank(value: Any) -> bool:
    """None, NaN, NaT and whitespace-only text are all "no value"."""
    if value is None:
        return True
    if isinstance(value, float) and value != value:
        return True
    if value is pd.NaT:
        return True
    if isinstance(value, str) and not value.strip():
        return True
    try:
        return bool(pd.isna(value)) if not isinstance(value, (list, tuple)) else False
    except (TypeError, ValueError):
        return False


def text_value(value: Any) -> str | None:
    """Stripped text, or None when blank."""
    return None if is_blank(value) else str(value).strip()


def _date(value: Any) -> date | None | str:
    """A date, None when blank, or the original text when it is not a date (validation reports it)."""
    if is_blank(value):
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return pd.Timestamp(str(value).strip()).date()
    except (ValueError, TypeError):
        return f"{_INVALID}{value}"


def list_value(value: Any, separators: str = ";,") -> list[str]:
    """A list of stripped texts from a list, an array or text separated by any of ``separators`` (``a; b`` /
    ``a, b``)."""
    if is_blank(value):
        return []
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = list(value.tolist() if hasattr(value, "tolist") else value)
    else:
        items = re.split(f"[{re.escape(separators)}]", str(value))
    return [str(i).strip() for i in items if not is_blank(i) and str(i).strip()]


_YES, _NO = ("true", "yes", "y", "1", "x"), ("false", "no", "n", "0")


def _yes_no(value: Any) -> bool | None | str:
    """True / False from a checkbox or ``yes`` / ``no`` text, None when blank, else the text (validation reports it)."""
    if is_blank(value):
        return None
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    text = str(value).strip().lower()
    if text in _YES:
        return True
    if text in _NO:
        return False
    return _INVALID + str(value)


def _tier(value: Any) -> int | None | str:
    if is_blank(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return f"{_INVALID}{value}"
    return int(number) if number.is_integer() else f"{_INVALID}{value}"


def claim_key_for(statement: str) -> str:
    """The stable key of a claim imported without one: derived from its normalised statement."""
    norm = " ".join(statement.lower().split())
    return "clm-" + sha256_hex(norm)[:12]


def _source_key_for(ref: str) -> str:
    return "src-" + sha256_hex(" ".join(ref.lower().split()))[:10]


def normalise_source(values: dict) -> dict:
    """A source row with every ``SOURCE_COLUMNS`` column in its type; a missing id derives from the reference."""
    out: dict[str, Any] = {
        "source_id": text_value(values.get("source_id")),
        "title": text_value(values.get("title")),
        "ref": text_value(values.get("ref")),
        "source_type": text_value(values.get("source_type")),
        "authority_tier": _tier(values.get("authority_tier")),
        "publisher": text_value(values.get("publisher")),
        "access_date": _date(values.get("access_date")),
        "valid_until": _date(values.get("valid_until")),
        "superseded_by": text_value(values.get("superseded_by")),
        "archive_url": text_value(values.get("archive_url")),
        "content_hash": text_value(values.get("content_hash")),
        "restricted_to": list_value(values.get("restricted_to")),
        "notes": text_value(values.get("notes")),
    }
    if out["source_id"] is None and (out["ref"] or out["title"]):
        out["source_id"] = _source_key_for(out["ref"] or out["title"])
    return out


def normalise_claim(values: dict) -> dict:
    """A claim row with every ``CLAIM_COLUMNS`` column in its type; a missing key derives from the statement."""
    out: dict[str, Any] = {
        "claim_key": text_value(values.get("claim_key")),
        "statement": text_value(values.get("statement")),
        "claim_type": text_value(values.get("claim_type")),
        "source_ids": list_value(values.get("source_ids")),
        "verification_status": text_value(values.get("verification_status")),
        "reviewer": text_value(values.get("reviewer")),
        "reviewed_on": _date(values.get("reviewed_on")),
        "notes": text_value(values.get("notes")),
        # Table VIII: a preprint counts "when no peer-reviewed source exists": who records the claim says so
        "no_peer_reviewed_source": _yes_no(values.get("no_peer_reviewed_source")),
        # Table IX item 1: primary or acceptable secondary; and where in each linked source (page, section, quote)
        "source_basis": (text_value(values.get("source_basis")) or "").lower() or None,
        "source_locators": locator_list(values.get("source_locators")),
    }
    if out["claim_key"] is None and out["statement"]:
        out["claim_key"] = claim_key_for(out["statement"])
    return out


def locator_list(value: Any) -> list[str]:
    """Locators by link position from a list or text separated by ``|`` ("p. 4 | sec. 3.2 | "quote""); an empty
    one ('') keeps its link's place; trailing empty ones are dropped."""
    if is_blank(value):
        return []
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        items = [("" if is_blank(i) else str(i)) for i in (value.tolist() if hasattr(value, "tolist") else value)]
    else:
        items = str(value).split(LOCATOR_SEPARATOR)
    items = [i.strip() for i in items]
    while items and not items[-1]:
        items.pop()
    return items


def _category(text: str) -> str:
    """A claim category as ``hri_core`` spells it (lower case, "discrimination / bias" -> "discrimination/bias");
    anything else is kept for validation to report."""
    token = " ".join(text.split()).lower()
    return CATEGORY_ALIASES.get(token, token)


def normalise_use_case(values: dict) -> dict:
    """A use-case row with every ``USE_CASE_COLUMNS`` column in its type: lists from ``a; b`` text (topics are
    separated by ``;`` only: a topic may hold a comma), repeated items once, the status and categories in lower
    case."""
    status = text_value(values.get("status"))
    return {
        "use_case_id": text_value(values.get("use_case_id")),
        "owner": text_value(values.get("owner")),
        "purpose": text_value(values.get("purpose")),
        "status": status.lower() if status else None,
        "allowed_categories": list(dict.fromkeys(_category(c) for c in list_value(values.get("allowed_categories")))),
        "allowed_topics": list(dict.fromkeys(list_value(values.get("allowed_topics"), separators=";"))),
        "requester_roles": list(dict.fromkeys(list_value(values.get("requester_roles")))),
        "approved_by": text_value(values.get("approved_by")),
        "evidence_link": text_value(values.get("evidence_link")),
        "evidence_hash": text_value(values.get("evidence_hash")),
        "review_by": _date(values.get("review_by")),
        "notes": text_value(values.get("notes")),
    }


def same_person(first: str | None, second: str | None) -> bool:
    """Whether two names recorded in a register name one person (case and surrounding spaces aside)."""
    return first is not None and second is not None and first.strip().casefold() == second.strip().casefold()


# --- validation (pandera, every failure collected) ---------------------------------------------------


def _is_valid_date(series: pd.Series) -> pd.Series:
    return series.map(lambda v: v is None or isinstance(v, date))


def _schema(kind: str):
    import pandera.pandas as pda  # on use: pandera is slow to import and only a save needs it

    def col(checks=None, nullable=True):
        return pda.Column(object, checks=checks, nullable=nullable, coerce=False)

    def vocab(values):
        return pda.Check(lambda s: s.isin(values), element_wise=False, error="one of: " + ", ".join(values))

    date_check = pda.Check(_is_valid_date, error="a date (YYYY-MM-DD)")
    if kind == "usecases":
        return pda.DataFrameSchema({
            "use_case_id": col(nullable=False),
            "owner": col(nullable=False),
            "purpose": col(nullable=False),
            "status": col(vocab(USE_CASE_STATUSES), nullable=False),
            "review_by": col(date_check),
        }, strict=False)
    if kind == "sources":
        return pda.DataFrameSchema({
            "source_id": col(nullable=False),
            "title": col(nullable=False),
            "source_type": col(vocab(SOURCE_TYPES), nullable=False),
            "authority_tier": col(pda.Check(
                lambda s: s.map(lambda v: v is None or (isinstance(v, int) and 1 <= v <= WEAKEST_TIER)),
                error=f"an integer from 1 (strongest) to {WEAKEST_TIER}")),
            "access_date": col(date_check),
            "valid_until": col(date_check),
            "restricted_to": col(pda.Check(lambda s: s.map(lambda v: all(r in ROLES for r in v)),
                                           error="roles from: " + ", ".join(ROLES))),
        }, strict=False)
    return pda.DataFrameSchema({
        "claim_key": col(nullable=False),
        "statement": col(nullable=False),
        "claim_type": col(vocab(CLAIM_TYPES), nullable=False),
        "verification_status": col(vocab(STATUSES), nullable=False),
        "reviewed_on": col(date_check),
        "no_peer_reviewed_source": col(pda.Check(lambda s: s.map(lambda v: v is None or isinstance(v, bool)),
                                                 error="yes or no")),
        "source_basis": col(vocab(SOURCE_BASES)),
    }, strict=False)


# the longest text a use-case field holds: names and hashes are short, a purpose or a note a paragraph
_USE_CASE_LIMITS = {"use_case_id": 200, "owner": 200, "approved_by": 200, "evidence_hash": 200, "purpose": 2000,
                    "evidence_link": 2000, "notes": 2000}
_MAX_TOPIC = 200


def _use_case_problems(n: int, row: dict) -> list[Problem]:
    """What pandera's column checks cannot say about one use case: the lists' items, four eyes, what an
    approved use case must name, the evidence link's scheme, the texts' lengths."""
    problems = [Problem(n, column, f"at most {limit} characters") for column, limit in _USE_CASE_LIMITS.items()
                if isinstance(row.get(column), str) and len(row[column]) > limit]
    problems += [Problem(n, "allowed_categories", f"{c[:60]!r} is not a claim category; one of: "
                         + ", ".join(CATEGORIES)) for c in row["allowed_categories"] if c not in CATEGORIES]
    problems += [Problem(n, "allowed_topics", f"a topic has at most {_MAX_TOPIC} characters")
                 for t in row["allowed_topics"] if len(t) > _MAX_TOPIC][:1]
    problems += [Problem(n, "requester_roles", f"{r[:60]!r} is not a requester role: a name of at most 80 characters "
                         "starting with a letter or digit")
                 for r in row["requester_roles"] if not re.fullmatch(REQUESTER_ROLE_PATTERN, r)]
    link = row.get("evidence_link")
    if isinstance(link, str) and not link.lower().startswith(("https://", "http://")):
        problems.append(Problem(n, "evidence_link", f"{link[:60]!r} is not a web link (http:// or https://)"))
    if same_person(row.get("owner"), row.get("approved_by")):
        problems.append(Problem(n, "approved_by", f"{row['approved_by']!r} is the use case's owner: a second "
                                "person approves it (four eyes)"))
    if row.get("status") == APPROVED:
        if row.get("approved_by") is None:
            problems.append(Problem(n, "approved_by", "an approved use case names who approved it (not its owner)"))
        if row.get("review_by") is None:
            problems.append(Problem(n, "review_by", "an approved use case has a review-by date"))
    return problems


def validate(kind: str, rows: list[tuple[int, dict]]) -> list[Problem]:
    """Every failure of every normalised row (``kind``: sources, claims or usecases), by row number."""
    import pandera.pandas as pda  # on use: pandera is slow to import and only a save needs it

    if not rows:
        return []
    frame = pd.DataFrame([values for _, values in rows], index=[n for n, _ in rows], dtype=object)
    frame = frame.astype(object).where(frame.notna(), None)
    problems: list[Problem] = []
    try:
        _schema(kind).validate(frame, lazy=True)
    except pda.errors.SchemaErrors as error:
        cases = error.failure_cases
        for column, check, value, index in cases[["column", "check", "failure_case", "index"]].itertuples(index=False):
            if isinstance(value, str) and value.startswith(_INVALID):
                value = value[1:]
            if check == "not_nullable":
                message = "a value is required"
            elif column is None or (isinstance(column, str) and column == kind) or column == "DataFrameSchema":
                column, message = None, str(check)
            else:
                message = f"{value!r} is not {check}"
            row = None if index is None or pd.isna(index) else int(index)
            problems.append(Problem(row, column, message))
    if kind == "sources":  # cross-field rule: mutable sources need the date they were read
        problems += [Problem(n, "access_date", "required for web and other mutable sources")
                     for n, v in rows if v.get("source_type") in MUTABLE_SOURCE_TYPES and v.get("access_date") is None]
    if kind == "usecases":
        problems += [p for n, v in rows for p in _use_case_problems(n, v)]
    if kind == "claims":  # each locator belongs to the link at its position
        problems += [Problem(n, "source_locators", f"{len(v['source_locators'])} locators for "
                             f"{len(v['source_ids'])} linked source(s): one per link, in the links' order")
                     for n, v in rows if len(v.get("source_locators") or []) > len(v.get("source_ids") or [])]
        problems += [Problem(n, "source_locators", f"a locator has at most {MAX_LOCATOR} characters")
                     for n, v in rows if any(len(x) > MAX_LOCATOR for x in v.get("source_locators") or [])]
    unique: dict[tuple, Problem] = {}
    for p in problems:
        unique.setdefault((p.row, p.column, p.message), p)
    return sorted(unique.values(), key=lambda p: (p.row or 0, p.column or ""))
