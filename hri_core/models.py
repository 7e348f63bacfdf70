"""Response and claim records: the interchange format of the console (JSON Lines, one response a line).

``parse_response`` turns one decoded JSON object into a validated ``Response`` or raises a
``RecordError`` naming every offending field. Both the CLI and the register's importer call it, so a
record is valid or invalid in exactly the same way everywhere.

Optional fields for checking answers against the register and for RAG metrics (DOMAIN.md section 4):
per response ``retrieved_context`` (chunks ``{"id", "text", "source_id"?}``), ``gt_answer`` (the
target answer), ``stakes`` (low | medium | high | critical, any case), ``query_ambiguous`` and
``gt_claims`` (the target's claims with their entailment checks); per claim ``category`` (one of
``vocabulary.CATEGORIES``), ``is_core``, ``contradicted_by`` (context | world: only on a CONTRADICTED
claim) and ``entailment`` (the claim's RAGChecker-style checks against the target and each chunk).
They are *extensions*: a record without them parses, scores and serialises exactly as before (an
absent extension is left out of ``model_dump``, so the canonical JSON of an old record -- and the
register's content hash of it -- does not change).

Bounds, so that no accepted record can break what comes after it (storage in 32-bit columns, the SQL
scorer's sums, a browser showing the text): ``criticality`` is an integer 1..``MAX_CRITICALITY``,
``feedback_count`` 0..``MAX_FEEDBACK_COUNT``; every text field has a length limit (``TextLimits``; the
register reads its values from its settings); ``created_at`` and ``feedback_at`` are ISO 8601 text (or a
typed date/time from a Parquet column), never a number -- pydantic would read ``253402300800`` as
milliseconds since 1970 -- and must stay within the years 1..9999 once converted to UTC.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidatorFunctionWrapHandler,
    create_model,
    field_validator,
    model_serializer,
    model_validator,
)

from .errors import FieldProblem, RecordError
from .strict_json import decode_json
from .vocabulary import CATEGORIES, CONTRADICTED_BY, ENTAILMENT_LABELS, STAKES, Dimension, Label, label_set_problem

Stakes = Literal["low", "medium", "high", "critical"]
Category = Literal["legal", "financial", "safety", "health", "security", "eligibility", "discrimination/bias",
                   "contractual", "compliance", "general"]
ContradictedBy = Literal["context", "world"]
EntailmentLabel = Literal["Entailment", "Neutral", "Contradiction"]

# Optional fields added after the first release of the format: absent ones are left out of dumps.
CLAIM_EXTENSIONS: tuple[str, ...] = ("category", "is_core", "contradicted_by", "entailment")
RESPONSE_EXTENSIONS: tuple[str, ...] = ("retrieved_context", "gt_answer", "query_ambiguous", "gt_claims")

# seed 003 writes "discrimination / bias"; flat tables often cannot hold a slash comfortably
CATEGORY_ALIASES = {"discrimination / bias": "discrimination/bias", "discrimination_bias": "discrimination/bias",
                    "discrimination-bias": "discrimination/bias"}


def _vocabulary_token(value: Any, vocabulary: tuple[str, ...], what: str) -> Any:
    """Lower-case, stripped member of ``vocabulary``; a blank string is "not given" (None)."""
    if not isinstance(value, str):
        return value
    token = " ".join(value.split()).lower()
    if not token:
        return None
    token = CATEGORY_ALIASES.get(token, token) if what == "category" else token
    if token not in vocabulary:
        raise ValueError(f"unknown {what} {value!r}; expected one of {', '.join(vocabulary)}")
    return token


def _entailment_token(value: Any) -> Any:
    """RAGChecker's labels in any case ("entailment" -> "Entailment")."""
    if isinstance(value, str):
        token = value.strip().capitalize()
        if token not in ENTAILMENT_LABELS:
            raise ValueError(f"unknown entailment label {value!r}; expected one of {', '.join(ENTAILMENT_LABELS)}")
        return token
    return value


def _entailment_list(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_entailment_token(v) for v in value]
    return value


def _without_absent(data: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """Drop extension fields that were not given, so old records serialise exactly as before."""
    for name in names:
        if name in data and data[name] is None:
            del data[name]
    return data


def _normalise_token(value: Any) -> Any:
    """Accept labels and dimensions in any case and with surrounding spaces ("contradicted ")."""
    return value.strip().upper() if isinstance(value, str) else value


MAX_CRITICALITY = 1_000  # v_i: 1 default, 2 medium, >= 3 high (DOMAIN.md); 1,000 leaves room for any scale
MAX_FEEDBACK_COUNT = 1_000_000  # times a claim was flagged by validated negative feedback


@dataclass(frozen=True)
class TextLimits:
    """Longest text, in characters, each field may hold (a huge answer froze the browser tab showing it).

    ``identifier`` bounds the short fields: response_id, use_case, model, stakes, claim_id, source_id.
    The register passes the values of its settings (``HRI_MAX_ANSWER_CHARS``, ...).
    """

    answer: int = 200_000
    question: int = 20_000
    claim_text: int = 20_000
    span: int = 20_000
    identifier: int = 1_000


DEFAULT_LIMITS = TextLimits()
# for records read back from storage: they met the limits in force when they came in, whatever those were
NO_TEXT_LIMITS = TextLimits(answer=2 ** 40, question=2 ** 40, claim_text=2 ** 40, span=2 ** 40, identifier=2 ** 40)
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


def ensure_utc(moment: datetime) -> datetime:
    """Naive timestamps are read as UTC; aware ones are converted to UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


class ContextChunk(BaseModel):
    """One retrieved chunk: what the answer could rest on. ``source_id`` links it to the source register."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, max_length=DEFAULT_LIMITS.identifier,
                    validation_alias=AliasChoices("id", "doc_id"))  # doc_id: RAGChecker's name
    text: str = Field(max_length=DEFAULT_LIMITS.answer)
    source_id: str | None = Field(None, max_length=DEFAULT_LIMITS.identifier)

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        # RAGChecker and spreadsheets write chunk ids as numbers
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value.strip() if isinstance(value, str) else value

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_absent(handler(self), ("source_id",))


# one entailment verdict, and one per retrieved chunk, read leniently (RAGChecker's spellings, any case)
_Entailment = Annotated[EntailmentLabel | None, BeforeValidator(_entailment_token)]
_Entailments = Annotated[tuple[EntailmentLabel, ...] | None, BeforeValidator(_entailment_list)]


class ClaimEntailment(BaseModel):
    """A response claim's entailment checks, as RAGChecker records them (kept so its metrics can be
    recomputed from imported records): ``target`` is the target answer's verdict on the claim
    (``answer2response[i]``), ``context`` each retrieved chunk's verdict, in chunk order
    (``retrieved2response[i]``). None means the check was not run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: _Entailment = None
    context: _Entailments = None


class TargetClaim(BaseModel):
    """One claim of the target (ground-truth) answer with its checks: ``response`` is whether the
    response entails it (``response2answer[j]``), ``context`` each chunk's verdict (``retrieved2answer[j]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | None = None
    response: _Entailment = None
    context: _Entailments = None


def _utc_time(value: Any, handler: ValidatorFunctionWrapHandler) -> datetime | None:
    """A time field: ISO 8601 text or a typed date/time, in UTC (one validator call per present value).

    A number (or numeric text) is refused, never read as epoch time; a date alone (a Parquet date
    column) is midnight UTC; a time that falls outside the years 1..9999 once in UTC is refused.
    """
    if isinstance(value, (bool, int, float, Decimal)) or (isinstance(value, str) and _NUMBER_TEXT.fullmatch(value)):
        raise ValueError(f"must be a date and time as ISO 8601 text (e.g. 2026-11-01T09:30:00Z), not the number "
                         f"{value!r}")
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day, tzinfo=UTC)
    moment = handler(value)
    if moment is None:
        return None
    try:
        return ensure_utc(moment)
    except (OverflowError, ValueError):
        raise ValueError(f"{moment.isoformat()} is out of range: in UTC it falls outside the years 1 to 9999") from None


class Claim(BaseModel):
    """One atomic, independently checkable statement of a response, with its verdict."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    # text lengths are bounded by the defaults here and by other limits in ``models_for`` (checked in
    # pydantic's core: no Python call per field)
    claim_id: str | None = Field(None, max_length=DEFAULT_LIMITS.identifier)
    text: str | None = Field(None, max_length=DEFAULT_LIMITS.claim_text)
    labels: tuple[Label, ...] = Field(min_length=1)
    dimensions: tuple[Dimension, ...] | None = None
    criticality: int = Field(default=1, ge=1, le=MAX_CRITICALITY)
    source_id: str | None = Field(None, max_length=DEFAULT_LIMITS.identifier)
    span: str | None = Field(None, max_length=DEFAULT_LIMITS.span)
    feedback_at: datetime | None = None
    feedback_count: int | None = Field(default=None, ge=0, le=MAX_FEEDBACK_COUNT)
    feedback_resolved: bool | None = None
    # extensions (module docstring); left out of dumps when None
    category: Category | None = None
    is_core: bool | None = None
    contradicted_by: ContradictedBy | None = None
    entailment: ClaimEntailment | None = None

    @field_validator("category", mode="before")
    @classmethod
    def _category(cls, value: Any) -> Any:
        return _vocabulary_token(value, CATEGORIES, "category")

    @field_validator("contradicted_by", mode="before")
    @classmethod
    def _contradicted_by(cls, value: Any) -> Any:
        return _vocabulary_token(value, CONTRADICTED_BY, "contradicted_by")

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

    @field_validator("labels")
    @classmethod
    def _distinct_labels(cls, value: tuple[Label, ...]) -> tuple[Label, ...]:
        # A label repeated on one claim is counted once: contributions take the max per dimension.
        value = tuple(dict.fromkeys(value))
        # Labels that contradict each other (SUPPORTED with another label...) are refused, never repaired:
        # the one list of allowed combinations is the vocabulary's (``LABEL_CONFLICTS``).
        problem = label_set_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("dimensions")
    @classmethod
    def _distinct_dimensions(cls, value: tuple[Dimension, ...] | None) -> tuple[Dimension, ...] | None:
        if value is None:
            return None
        if not value:
            raise ValueError("must name at least one dimension, or be left out to use the profile defaults")
        return tuple(dict.fromkeys(value))

    @field_validator("feedback_at", mode="wrap")
    @classmethod
    def _utc(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> datetime | None:
        return _utc_time(value, handler)

    @model_validator(mode="after")
    def _contradiction_source(self) -> Claim:
        if self.contradicted_by is not None and Label.CONTRADICTED not in self.labels:
            raise ValueError(f"contradicted_by: only a CONTRADICTED claim has a contradiction source "
                             f"(labels: {', '.join(label.value for label in self.labels)})")
        return self

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_absent(handler(self), CLAIM_EXTENSIONS)


class Response(BaseModel):
    """One AI answer to one request, decomposed into claims."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    response_id: str = Field(min_length=1, max_length=DEFAULT_LIMITS.identifier)
    use_case: str | None = Field(None, max_length=DEFAULT_LIMITS.identifier)
    model: str | None = Field(None, max_length=DEFAULT_LIMITS.identifier)
    created_at: datetime | None = None
    question: str | None = Field(None, max_length=DEFAULT_LIMITS.question)
    answer: str | None = Field(None, max_length=DEFAULT_LIMITS.answer)
    stakes: Stakes | None = None
    claims: tuple[Claim, ...]
    # extensions (module docstring); left out of dumps when None
    retrieved_context: tuple[ContextChunk, ...] | None = None
    gt_answer: str | None = Field(None, max_length=DEFAULT_LIMITS.answer)
    query_ambiguous: bool | None = None
    gt_claims: tuple[TargetClaim, ...] | None = None

    @field_validator("response_id", mode="before")
    @classmethod
    def _strip_id(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("stakes", mode="before")
    @classmethod
    def _stakes(cls, value: Any) -> Any:
        return _vocabulary_token(value, STAKES, "stakes")

    @field_validator("retrieved_context", mode="before")
    @classmethod
    def _context_cell(cls, value: Any) -> Any:
        # a flat table (CSV) carries the chunk list as JSON text in one cell (a JSON Lines record may too):
        # decoded as strictly and within the same limits as a JSON Lines line
        if isinstance(value, str):
            if not value.strip():
                return None
            decoded, problems = decode_json(value)
            if problems:
                raise ValueError("must be a JSON list of chunks; its JSON text cannot be read: "
                                 + "; ".join(f"at {p.loc}: {p.message}" if p.loc else p.message for p in problems))
            return decoded
        return value

    @field_validator("created_at", mode="wrap")
    @classmethod
    def _utc(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> datetime | None:
        return _utc_time(value, handler)

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

    @model_validator(mode="after")
    def _context_consistency(self) -> Response:
        """Chunk ids are unique; every entailment row has one verdict per retrieved chunk."""
        problems: list[str] = []
        chunks = self.retrieved_context
        first: dict[str, int] = {}
        for index, chunk in enumerate(chunks or ()):
            if chunk.id in first:
                problems.append(f"retrieved_context[{index}].id: duplicate chunk id {chunk.id!r} "
                                f"(already used by retrieved_context[{first[chunk.id]}])")
            first.setdefault(chunk.id, index)
        rows = [(f"claims[{i}].entailment.context", c.entailment.context)
                for i, c in enumerate(self.claims) if c.entailment is not None]
        rows += [(f"gt_claims[{j}].context", t.context) for j, t in enumerate(self.gt_claims or ())]
        for loc, row in rows:
            if row is None:
                continue
            if chunks is None:
                problems.append(f"{loc}: has one verdict per retrieved chunk, but retrieved_context is missing")
            elif len(row) != len(chunks):
                problems.append(f"{loc}: has {len(row)} verdicts, expected {len(chunks)} (one per retrieved chunk)")
        if problems:
            raise ValueError(" | ".join(problems))
        return self

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return _without_absent(handler(self), RESPONSE_EXTENSIONS)


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
        if item["type"] == "less_than_equal" and loc.endswith(("criticality", "feedback_count")):
            what = "criticality" if loc.endswith("criticality") else "feedback count"
            given = item["input"]
            given = f"{given:,}" if isinstance(given, int) else repr(given)
            problems.append(FieldProblem(loc, f"must be at most {item['ctx']['le']:,} (the documented maximum "
                                              f"{what}), got {given}"))
            continue
        if item["type"] == "string_too_long":
            problems.append(FieldProblem(loc, f"is {len(item['input']):,} characters long, over the limit of "
                                              f"{item['ctx']['max_length']:,}"))
            continue
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


def id_problem(value: Any) -> str | None:
    """Why ``value`` cannot be an id (a response's, a claim's, a source's), or None when it can.

    An id is text or an integer (a typed column's whole number, read as its digits). A float is refused even
    when whole (``1.0``, ``1e+300``, NaN): it is a measurement, rounded and printed differently by each tool,
    so two files would not name the same record the same way.
    """
    if value is None or isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return None
    if isinstance(value, float):
        shown = "NaN" if value != value else repr(value)
        return (f"must be text or an integer, got the floating-point number {shown}; write the id as text (an "
                "integer column is fine)")
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return f"must be text or an integer, got {json_kind(value)} {shown}"


def parse_response(data: Any, *, record: str | None = None, limits: TextLimits | None = None) -> Response:
    """Validate one decoded record; raise ``RecordError`` listing every problem found.

    ``limits`` bounds the text fields (default ``DEFAULT_LIMITS``, which ``Response`` itself holds).
    """
    if not isinstance(data, dict):
        raise RecordError([FieldProblem("", f"expected a JSON object (one response), got {json_kind(data)}")],
                          record=record)
    model = Response if limits is None or limits == DEFAULT_LIMITS else models_for(limits)
    try:
        return model.model_validate(data)
    except ValidationError as error:
        rid = data.get("response_id")
        where = record or (f"response_id={rid}" if isinstance(rid, str) and rid else None)
        raise RecordError(problems_from_validation(error), record=where) from error


@functools.cache
def models_for(limits: TextLimits) -> type[Response]:
    """``Response`` (with its ``Claim``) bounded by other text limits: subclasses built once per limits."""
    def text(limit: int) -> Any:
        return (str | None, Field(None, max_length=limit))

    claim = create_model("Claim", __base__=Claim, claim_id=text(limits.identifier), text=text(limits.claim_text),
                         source_id=text(limits.identifier), span=text(limits.span))
    return create_model("Response", __base__=Response,
                        response_id=(str, Field(min_length=1, max_length=limits.identifier)),
                        use_case=text(limits.identifier), model=text(limits.identifier),
                        stakes=text(limits.identifier), question=text(limits.question),
                        answer=text(limits.answer), claims=(tuple[claim, ...], ...))
