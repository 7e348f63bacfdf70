"""Response and claim records: the interchange format of the console (JSON Lines, one response a line).

``parse_response`` turns one decoded JSON object into a validated ``Response`` or raises a
``RecordError`` naming every offending field. Both the CLI and the register's importer call it, so a
record is valid or invalid in exactly the same way everywhere.

Bounds, so that no accepted record can break what comes after it (storage in 32-bit columns, the SQL
scorer's sums, a browser showing the text): ``criticality`` is an integer 1..``MAX_CRITICALITY``,
``feedback_count`` 0..``MAX_FEEDBACK_COUNT``; every text field has a length limit (``TextLimits``; the
register reads its values from its settings); ``created_at`` and ``feedback_at`` are ISO 8601 text (or a
typed date/time from a Parquet column), never a number -- pydantic would read ``253402300800`` as
milliseconds since 1970 -- and must stay within the years 1..9999 once converted to UTC.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from .errors import FieldProblem, RecordError
from .vocabulary import Dimension, Label


def _normalise_token(value: Any) -> Any:
    """Accept labels and dimensions in any case and with surrounding spaces ("contradicted ")."""
    return value.strip().upper() if isinstance(value, str) else value


MAX_CRITICALITY = 1_000  # v_i: 1 default, 2 medium, >= 3 high (DOMAIN.md); 1,000 leaves room for any scale
MAX_FEEDBACK_COUNT = 1_000_000  # times a claim was flagged by validated negative feedback


@dataclass(frozen=True)
class TextLimits:
    """Longest text, in characters, each field may hold (a 10 MB answer froze the browser tab showing it).

    ``identifier`` bounds the short fields: response_id, use_case, model, stakes, claim_id, source_id.
    The register passes the values of its settings (``HRI_MAX_ANSWER_CHARS``, ...).
    """

    answer: int = 200_000
    question: int = 20_000
    claim_text: int = 20_000
    span: int = 20_000
    identifier: int = 1_000


DEFAULT_LIMITS = TextLimits()
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def ensure_utc(moment: datetime) -> datetime:
    """Naive timestamps are read as UTC; aware ones are converted to UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _iso_time_only(value: Any) -> Any:
    """ISO 8601 text or a typed date/time; a number (or numeric text) is refused, never read as epoch time."""
    if isinstance(value, (bool, int, float, Decimal)) or (isinstance(value, str) and _NUMBER_TEXT.fullmatch(value)):
        raise ValueError(f"must be a date and time as ISO 8601 text (e.g. 2026-11-01T09:30:00Z), not the number "
                         f"{value!r}")
    if isinstance(value, date) and not isinstance(value, datetime):  # a Parquet date column: midnight UTC
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value


def _in_utc(value: datetime | None) -> datetime | None:
    """The time in UTC, or a ValueError when UTC falls outside the years 1..9999 (e.g. 0001-01-01T00:00+01:00)."""
    if value is None:
        return None
    try:
        return ensure_utc(value)
    except (OverflowError, ValueError):
        raise ValueError(f"{value.isoformat()} is out of range: in UTC it falls outside the years 1 to 9999") from None


def _limit(info: ValidationInfo) -> TextLimits:
    limits = info.context.get("limits") if isinstance(info.context, dict) else None
    return limits if isinstance(limits, TextLimits) else DEFAULT_LIMITS


def _check_length(value: str | None, limit: int) -> str | None:
    if value is not None and len(value) > limit:
        raise ValueError(f"is {len(value):,} characters long, over the limit of {limit:,}")
    return value


def _check_at_most(value: int | None, maximum: int, what: str) -> int | None:
    if value is not None and value > maximum:
        raise ValueError(f"must be at most {maximum:,} (the documented maximum {what}), got {value:,}")
    return value


class Claim(BaseModel):
    """One atomic, independently checkable statement of a response, with its verdict."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    claim_id: str | None = None
    text: str | None = None
    labels: tuple[Label, ...] = Field(min_length=1)
    dimensions: tuple[Dimension, ...] | None = None
    criticality: int = Field(default=1, ge=1)
    source_id: str | None = None
    span: str | None = None
    feedback_at: datetime | None = None
    feedback_count: int | None = Field(default=None, ge=0)
    feedback_resolved: bool | None = None

    @field_validator("labels", "dimensions", mode="before")
    @classmethod
    def _tokens(cls, value: Any) -> Any:
        if isinstance(value, str):  # "CONTRADICTED" or "F,C" from flat tables
            value = [part for part in value.replace(";", ",").split(",") if part.strip()]
        if isinstance(value, (list, tuple)):
            return [_normalise_token(v) for v in value]
        return value

    @field_validator("criticality", "feedback_count", mode="before")
    @classmethod
    def _no_bools(cls, value: Any) -> Any:
        # pydantic reads True as 1; a boolean criticality is a data error, not "default".
        if isinstance(value, bool):
            raise ValueError(f"must be an integer, got {value!r}")
        return value

    @field_validator("criticality")
    @classmethod
    def _criticality_bound(cls, value: int) -> int:
        _check_at_most(value, MAX_CRITICALITY, "criticality")
        return value

    @field_validator("feedback_count")
    @classmethod
    def _feedback_count_bound(cls, value: int | None) -> int | None:
        return _check_at_most(value, MAX_FEEDBACK_COUNT, "feedback count")

    @field_validator("text", "span", "claim_id", "source_id")
    @classmethod
    def _length(cls, value: str | None, info: ValidationInfo) -> str | None:
        limits = _limit(info)
        limit = {"text": limits.claim_text, "span": limits.span}.get(info.field_name or "", limits.identifier)
        return _check_length(value, limit)

    @field_validator("labels")
    @classmethod
    def _distinct_labels(cls, value: tuple[Label, ...]) -> tuple[Label, ...]:
        # A label repeated on one claim is counted once: contributions take the max per dimension.
        return tuple(dict.fromkeys(value))

    @field_validator("dimensions")
    @classmethod
    def _distinct_dimensions(cls, value: tuple[Dimension, ...] | None) -> tuple[Dimension, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one dimension, or be left out to use the profile defaults")
        return tuple(dict.fromkeys(value))

    @field_validator("feedback_at", mode="before")
    @classmethod
    def _iso(cls, value: Any) -> Any:
        return _iso_time_only(value)

    @field_validator("feedback_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _in_utc(value)


class Response(BaseModel):
    """One AI answer to one request, decomposed into claims."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    response_id: str = Field(min_length=1)
    use_case: str | None = None
    model: str | None = None
    created_at: datetime | None = None
    question: str | None = None
    answer: str | None = None
    stakes: str | None = None
    claims: tuple[Claim, ...]

    @field_validator("response_id", mode="before")
    @classmethod
    def _strip_id(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("created_at", mode="before")
    @classmethod
    def _iso(cls, value: Any) -> Any:
        return _iso_time_only(value)

    @field_validator("created_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _in_utc(value)

    @field_validator("response_id", "use_case", "model", "question", "answer", "stakes")
    @classmethod
    def _length(cls, value: str | None, info: ValidationInfo) -> str | None:
        limits = _limit(info)
        limit = {"answer": limits.answer, "question": limits.question}.get(info.field_name or "", limits.identifier)
        return _check_length(value, limit)

    @model_validator(mode="after")
    def _claim_ids(self) -> Response:
        """Give every claim an id (``<response_id>-<n>``) and refuse duplicates within a response."""
        seen: dict[str, int] = {}
        claims = []
        for index, claim in enumerate(self.claims):
            claim_id = claim.claim_id or f"{self.response_id}-{index + 1}"
            if claim_id in seen:
                raise ValueError(
                    f"claims[{index}].claim_id: duplicate claim id {claim_id!r} "
                    f"(already used by claims[{seen[claim_id]}])"
                )
            seen[claim_id] = index
            claims.append(claim if claim.claim_id else claim.model_copy(update={"claim_id": claim_id}))
        object.__setattr__(self, "claims", tuple(claims))
        return self


_FIELD_PATH = re.compile(r"[A-Za-z_]\w*(?:\[\d+\]|\.[A-Za-z_]\w*)*")


def _loc(parts: tuple[str | int, ...]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def problems_from_validation(error: ValidationError) -> list[FieldProblem]:
    """Translate pydantic's errors into field problems with dotted paths (``claims[2].criticality``).

    Model-level validators report ``"<loc>: <message>"`` parts joined by `` | ``; each part becomes
    its own problem with its own location.
    """
    problems = []
    for item in error.errors():
        loc = _loc(tuple(p for p in item["loc"] if p != "[key]"))
        message = item["msg"]
        if item["type"] == "enum":
            expected = item["ctx"]["expected"]
            problems.append(FieldProblem(loc, f"unknown value {item.get('input')!r}; expected one of {expected}"))
            continue
        if message.startswith("Value error, "):
            message = message[len("Value error, "):]
        for part in message.split(" | "):
            part_loc = loc
            head, sep, tail = part.partition(": ")
            if sep and not loc:
                part_loc, part = head, tail
            elif sep and item["type"] == "value_error" and _FIELD_PATH.fullmatch(head):
                # a nested model's own validator names its field ("max_criticality: ...")
                part_loc, part = f"{loc}.{head}", tail
            problems.append(FieldProblem(part_loc, part))
    # "labels: at least 1 item" after its only item was refused repeats the item's own error
    return [p for p in problems
            if not (p.message.startswith("Tuple should have at least")
                    and any(q.loc.startswith(p.loc + "[") for q in problems))]


def json_kind(value: Any) -> str:
    """What a decoded JSON value is, in JSON's words ("null", "an array", ...), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object" if isinstance(value, dict) else type(value).__name__


def parse_response(data: Any, *, record: str | None = None, limits: TextLimits | None = None) -> Response:
    """Validate one decoded record; raise ``RecordError`` listing every problem found.

    ``limits`` bounds the text fields (default ``DEFAULT_LIMITS``).
    """
    if not isinstance(data, dict):
        raise RecordError([FieldProblem("", f"expected a JSON object (one response), got {json_kind(data)}")],
                          record=record)
    try:
        return Response.model_validate(data, context={"limits": limits or DEFAULT_LIMITS})
    except ValidationError as error:
        rid = data.get("response_id")
        where = record or (f"response_id={rid}" if isinstance(rid, str) and rid else None)
        raise RecordError(problems_from_validation(error), record=where) from error
