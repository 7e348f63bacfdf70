"""RAGChecker and RAGAS results as interchange records (pure: the register reads the files).

RAGChecker (its ``checking_outputs.json``: per query ``query_id``, ``query``, ``gt_answer``,
``response``, ``retrieved_context`` [{doc_id, text}], ``response_claims``, ``gt_answer_claims`` and the
checks ``answer2response``, ``response2answer``, ``retrieved2response``, ``retrieved2answer``) becomes
one ``Response`` per query: question, answer, target answer (``gt_answer``), the chunks as
``retrieved_context``, one claim per response claim (a triplet ``[subject, relation, object]`` is
joined with spaces, a string claim kept as is), and the target's claims as ``gt_claims``. A query
object may carry its own ``category`` (seed 003's critical-information categories): it goes on every
claim of that query unless the caller gives one for all. Every raw
label is kept -- ``claims[i].entailment`` (answer2response[i], retrieved2response[i]) and
``gt_claims[j]`` (response2answer[j], retrieved2answer[j]) -- so ``ragmetrics.metrics_from_responses``
recomputes RAGChecker's metrics exactly from the imported records.

The HRI label of response claim i, from its checks (a missing check reads as Neutral, as RAGChecker's
``to_bool`` does)::

    grounded = some chunk entails it          context_contra = some chunk contradicts it
    target   = answer2response[i]

    grounded, target Contradiction            -> CONTRADICTED, contradicted_by world   (F)
    grounded, otherwise                       -> SUPPORTED
    not grounded, context_contra,
        target Entailment                     -> CONTRADICTED, contradicted_by context, dimensions [C]
        otherwise                             -> CONTRADICTED, contradicted_by context (F and C)
    not grounded, no contradiction,
        target Entailment                     -> SUPPORTED (self-knowledge; ``self_knowledge_label``)
        target Contradiction                  -> CONTRADICTED, contradicted_by world   (F)
        target Neutral                        -> UNSUPPORTED                           (U)

Why: HRI labels a claim "against evidence" (paper section V) and the target answer of an evaluation
set is evidence (seed 003: test cases come "with a ground-truth target answer and supporting quotes").
So a claim the context backs is SUPPORTED unless the target says it is false (a faithful falsehood:
F, not C, since the context agrees with it); a claim the context contradicts deviates from the context
(C) and, unless the target backs it, is also factually wrong (F: Table III's "(F), and (C) if
contradicted by context"); a claim neither grounded nor contradicted is seed 003's *self-knowledge*
when the target entails it ("A self-knowledge claim (unfaithful but correct) can still be useful") --
SUPPORTED by default, or ``self_knowledge_label=Label.UNSUPPORTED`` for the stricter reading "only the
retrieved context counts as evidence" -- and otherwise hallucinated: CONTRADICTED when the target
contradicts it, UNSUPPORTED when nothing speaks to it. Under this mapping, seed 003's hallucination
(neither grounded nor correct) is exactly the claims that no chunk entails and that count in F or U
(every UNSUPPORTED or CONTRADICTED one except the context-only deviation, whose dimensions are [C]).

RAGAS result tables (``EvaluationResult.to_pandas()`` written as CSV or Parquet; rows given here as
mappings): ``user_input`` -> question, ``response`` -> answer, ``reference`` -> target answer,
``retrieved_contexts`` (a list, or its JSON or Python text) -> chunks "1", "2", ...; the legacy names
``question``, ``answer``, ``ground_truth``, ``contexts`` are read too. RAGAS scores answers, not
claims, so each record has no claims (the register flags it "no claims"); the metric columns
(``faithfulness``, ``context_precision``, ``context_recall``, ``answer_relevancy``, ...: by default every
column that is not an input or record column) form a metrics table, one row per response, each
value a number in [0, 1] or missing (blank / NaN). A row with a bad cell is reported by row and
column and kept out of both the records and the metrics.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .errors import FieldProblem, ParseFailure, RecordError
from .models import Response, id_problem, parse_response
from .ragmetrics import RAGCheckError, _results_list, parse_checked_query
from .readers import decode_object
from .strict_json import decode_json
from .vocabulary import Label

__all__ = [
    "RAGAS_INPUT_COLUMNS", "RECORD_COLUMNS", "Conversion", "ConvertedRecord", "RagasConversion", "RagasScores",
    "claim_label", "iter_converted", "ragas_rows", "ragchecker_query_texts", "ragchecker_results", "triplet_text",
]

ENTAILMENT, NEUTRAL, CONTRADICTION = "Entailment", "Neutral", "Contradiction"

# interchange fields a caller may set on every imported record
RECORD_COLUMNS: tuple[str, ...] = ("use_case", "model", "created_at", "stakes", "query_ambiguous")


@dataclass(frozen=True)
class ConvertedRecord:
    """One converted item: its number (query position or table row), the input as sent (JSON), the
    interchange record (a dict, what the importer stores) and the validated ``Response``."""

    number: int
    raw: str
    record: dict[str, Any]
    response: Response


@dataclass
class Conversion:
    """Everything a file gave: the converted records and, kept verbatim with their reasons, the failures."""

    records: list[ConvertedRecord] = field(default_factory=list)
    failures: list[ParseFailure] = field(default_factory=list)

    @property
    def responses(self) -> list[Response]:
        return [item.response for item in self.records]

    def _accept(self, number: int, raw: str, record: dict[str, Any], where: str) -> ConvertedRecord | None:
        try:
            response = parse_response(record, record=where)
        except RecordError as error:
            self.failures.append(ParseFailure(number, raw, error, response_id=record.get("response_id")))
            return None
        item = ConvertedRecord(number, raw, record, response)
        self.records.append(item)
        return item


# --- RAGChecker ------------------------------------------------------------------------------------------


def triplet_text(claim: Any) -> str:
    """A RAGChecker claim as text: a ``[subject, relation, object]`` triplet joined by spaces, or the
    string itself. Raises ``ValueError`` for anything else."""
    if isinstance(claim, str):
        return claim.strip()
    if isinstance(claim, (list, tuple)) and claim and all(isinstance(part, str) for part in claim):
        return " ".join(part.strip() for part in claim if part.strip())
    raise ValueError(f"a claim must be a string or a list of strings (a triplet), got {claim!r}")


def claim_label(target: str | None, context: Sequence[str] | None,
                self_knowledge_label: Label = Label.SUPPORTED) -> dict[str, Any]:
    """The HRI label fields (``labels``, and ``contradicted_by`` / ``dimensions`` when they apply) of a
    response claim from its target verdict and its chunk verdicts (the table in the module docstring)."""
    grounded = ENTAILMENT in (context or ())
    contradicted_by_context = CONTRADICTION in (context or ())
    target = target or NEUTRAL
    if grounded:
        if target == CONTRADICTION:
            return {"labels": [Label.CONTRADICTED.value], "contradicted_by": "world"}
        return {"labels": [Label.SUPPORTED.value]}
    if contradicted_by_context:
        out: dict[str, Any] = {"labels": [Label.CONTRADICTED.value], "contradicted_by": "context"}
        if target == ENTAILMENT:  # the context is wrong, the claim is right: a deviation, not a falsehood
            out["dimensions"] = ["C"]
        return out
    if target == ENTAILMENT:
        return {"labels": [self_knowledge_label.value]}
    if target == CONTRADICTION:
        return {"labels": [Label.CONTRADICTED.value], "contradicted_by": "world"}
    return {"labels": [Label.UNSUPPORTED.value]}


def _list_or_none(item: Mapping[str, Any], key: str) -> list[Any] | None:
    value = item.get(key)
    return value if isinstance(value, list) else None


def _row(matrix: list[Any] | None, index: int) -> list[Any] | None:
    """Row ``index`` of a check matrix: None when the check is missing, [] for the empty matrix of a
    query without chunks (RAGChecker writes ``[]`` there)."""
    if matrix is None:
        return None
    return matrix[index] if matrix else []


def _chunk(chunk: Any) -> Any:
    """RAGChecker's ``{"doc_id", "text"}`` as an interchange chunk ``{"id", "text"}`` (other keys kept)."""
    if not isinstance(chunk, dict) or "doc_id" not in chunk or "id" in chunk:
        return chunk
    out = {"id": chunk["doc_id"], **chunk}
    del out["doc_id"]
    return out


def _ragchecker_record(item: dict[str, Any], index: int, *, id_prefix: str, fields: Mapping[str, Any],
                       criticality: int | None, category: str | None, self_knowledge_label: Label) -> dict[str, Any]:
    """One query as an interchange record; ``RecordError`` names the query and every bad field."""
    where = f"results[{index}]"
    try:
        checked = parse_checked_query(item, index)  # shapes and labels, exactly as ragmetrics reads them
    except RAGCheckError as error:
        raise RecordError(error.problems, record=error.record) from error
    problems: list[FieldProblem] = []
    query_id = item.get("query_id")
    if query_id is not None and id_problem(query_id) is not None:  # a float would name the response "1.0"
        problems.append(FieldProblem("query_id", str(id_problem(query_id))))
    elif query_id is None or not str(query_id).strip():
        problems.append(FieldProblem("query_id", "required: it names the imported response"))
    else:
        where = f"results[{index}] (query_id={query_id})"
    chunks = item.get("retrieved_context")
    if not isinstance(chunks, list):
        problems.append(FieldProblem("retrieved_context", "required: the chunks the claims were checked against"))
    texts = _list_or_none(item, "response_claims")
    gt_texts = _list_or_none(item, "gt_answer_claims")
    for name, values in (("response_claims", texts), ("gt_answer_claims", gt_texts)):
        for position, value in enumerate(values or ()):
            try:
                triplet_text(value)
            except ValueError as error:
                problems.append(FieldProblem(f"{name}[{position}]", str(error)))
    if problems:
        raise RecordError(problems, record=where)

    targets = _list_or_none(item, "answer2response")
    rows = _list_or_none(item, "retrieved2response")
    in_response = _list_or_none(item, "response2answer")
    gt_rows = _list_or_none(item, "retrieved2answer")
    n_claims, n_gt = checked.response_claims, checked.gt_claims
    if category is None and item.get("category") is not None:  # a query may name its own category
        category = item["category"]

    claims = []
    for i in range(n_claims):
        target = targets[i] if targets is not None else None
        row = _row(rows, i)
        claim: dict[str, Any] = {"text": triplet_text(texts[i]) if texts is not None else None,
                                 **claim_label(target, row, self_knowledge_label),
                                 "entailment": {"target": target, "context": row}}
        if criticality is not None:
            claim["criticality"] = criticality
        if category is not None:
            claim["category"] = category
        claims.append(claim)
    gt_claims = [{"text": triplet_text(gt_texts[j]) if gt_texts is not None else None,
                  "response": in_response[j] if in_response is not None else None,
                  "context": _row(gt_rows, j)}
                 for j in range(n_gt)]
    record: dict[str, Any] = {
        "response_id": f"{id_prefix}{str(query_id).strip()}",
        "question": item.get("query"), "answer": item.get("response"), "gt_answer": item.get("gt_answer"),
        "retrieved_context": [_chunk(chunk) for chunk in chunks or ()],
        "claims": claims, "gt_claims": gt_claims,
    }
    record.update({key: value for key, value in fields.items() if value is not None})
    return record


def ragchecker_results(data: Any, *, id_prefix: str = "", use_case: str | None = None, model: str | None = None,
                       stakes: str | None = None, created_at: datetime | str | None = None,
                       criticality: int | None = None, category: str | None = None,
                       self_knowledge_label: Label = Label.SUPPORTED) -> Conversion:
    """Convert RAGChecker's checked results (parsed JSON: ``{"results": [...]}``, a list, or one query).

    Response ids are ``id_prefix + query_id``; ``use_case``, ``model``, ``stakes``, ``created_at`` go on
    every record, ``criticality`` and ``category`` on every claim. A query that cannot be converted
    (bad labels or shapes, no ``query_id`` or ``retrieved_context``, a duplicate ``query_id``, a field
    the interchange format refuses) becomes a failure naming it and the field, with its JSON kept.
    Raises ``RAGCheckError`` only when the top level is not RAGChecker's results at all.
    """
    queries = [(json.dumps(item, ensure_ascii=False, default=str), item) for item in _results_list(data)]
    return _ragchecker_queries(queries, id_prefix=id_prefix, use_case=use_case, model=model, stakes=stakes,
                               created_at=created_at, criticality=criticality, category=category,
                               self_knowledge_label=self_knowledge_label)


def ragchecker_query_texts(texts: Sequence[str], *, id_prefix: str = "", use_case: str | None = None,
                           model: str | None = None, stakes: str | None = None,
                           created_at: datetime | str | None = None, criticality: int | None = None,
                           category: str | None = None, self_knowledge_label: Label = Label.SUPPORTED) -> Conversion:
    """``ragchecker_results`` over the queries' own JSON texts (``strict_json.json_list_items`` cuts a file's
    ``results`` list into them): each is decoded alone, strictly and within the limits, exactly as a JSON Lines
    line is (``readers.decode_object``), so a query holding a lone surrogate, a duplicate key, NaN, a number too
    long or nesting too deep fails alone, naming its field, and keeps its text verbatim."""
    queries: list[tuple[str, Any]] = []
    for index, text in enumerate(texts):
        item, problems = decode_object(text, "one query")
        queries.append((text, RecordError(problems, record=f"results[{index}]") if problems else item))
    return _ragchecker_queries(queries, id_prefix=id_prefix, use_case=use_case, model=model, stakes=stakes,
                               created_at=created_at, criticality=criticality, category=category,
                               self_knowledge_label=self_knowledge_label)


def _ragchecker_queries(queries: Sequence[tuple[str, Any]], *, id_prefix: str, use_case: str | None,
                        model: str | None, stakes: str | None, created_at: datetime | str | None,
                        criticality: int | None, category: str | None, self_knowledge_label: Label) -> Conversion:
    """The conversion of (raw text, query object or the ``RecordError`` that decoding it raised) in order."""
    if self_knowledge_label not in (Label.SUPPORTED, Label.UNSUPPORTED, Label.PARTIAL):
        raise ValueError("self_knowledge_label must be SUPPORTED, UNSUPPORTED or PARTIAL")
    fields = {"use_case": use_case, "model": model, "stakes": stakes,
              "created_at": created_at.isoformat() if isinstance(created_at, datetime) else created_at}
    out = Conversion()
    seen: dict[str, int] = {}
    for index, (raw, item) in enumerate(queries):
        number = index + 1
        if isinstance(item, RecordError):
            out.failures.append(ParseFailure(number, raw, item))
            continue
        if not isinstance(item, dict):
            not_object = RecordError([FieldProblem("", f"must be an object, got {type(item).__name__}")],
                                     record=f"results[{index}]")
            out.failures.append(ParseFailure(number, raw, not_object))
            continue
        try:
            record = _ragchecker_record(item, index, id_prefix=id_prefix, fields=fields, criticality=criticality,
                                        category=category, self_knowledge_label=self_knowledge_label)
        except RecordError as error:
            out.failures.append(ParseFailure(number, raw, error))
            continue
        rid = record["response_id"]
        where = f"results[{index}] (query_id={item.get('query_id')})"
        if rid in seen:
            duplicate = RecordError([FieldProblem("query_id", f"duplicate query id: response {rid!r} already "
                                                              f"comes from results[{seen[rid]}]")], record=where)
            out.failures.append(ParseFailure(number, raw, duplicate, response_id=rid))
            continue
        if out._accept(number, raw, record, where) is not None:
            seen[rid] = index
    return out


# --- RAGAS ---------------------------------------------------------------------------------------------

# RAGAS's sample columns (``SingleTurnSample``) and what each becomes; legacy (v0.1) names map onto them.
RAGAS_INPUT_COLUMNS: tuple[str, ...] = ("user_input", "retrieved_contexts", "reference_contexts", "response",
                                        "multi_responses", "reference", "rubrics")
_LEGACY = {"question": "user_input", "contexts": "retrieved_contexts", "answer": "response",
           "ground_truth": "reference", "ground_truths": "reference_contexts"}
# ``category`` is what the question is about (a critical-information category of seed 003), not a score
_NOT_METRICS = frozenset(RAGAS_INPUT_COLUMNS) | frozenset(_LEGACY) | {"response_id", "category", *RECORD_COLUMNS}


@dataclass(frozen=True)
class RagasScores:
    """The RAGAS metric values of one response (None: RAGAS could not compute it)."""

    response_id: str
    row: int
    values: dict[str, float | None]


@dataclass
class RagasConversion(Conversion):
    """A RAGAS table: response records, their scores, and the metric columns read."""

    metric_columns: tuple[str, ...] = ()
    scores: list[RagasScores] = field(default_factory=list)

    def means(self) -> dict[str, float | None]:
        """Mean of each metric over the rows that have it (None when no row has it)."""
        out: dict[str, float | None] = {}
        for name in self.metric_columns:
            values = [s.values[name] for s in self.scores if s.values.get(name) is not None]
            out[name] = math.fsum(v for v in values if v is not None) / len(values) if values else None
        return out


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, str) and not value.strip())


# A Python string literal as ``repr`` writes one (pandas writes a list cell as "['a', 'b']"); possessive, so that
# matching is linear. Only text of this shape reaches ``ast.literal_eval``, one string at a time: a cell can neither
# nest nor make the parser recurse (a run of 100,000 "-" would).
_PY_STRING = r"""[uU]?(?:'[^'\\\n]*+(?:\\.[^'\\\n]*+)*+'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+")"""
_PY_STRING_LIST = re.compile(rf"\[\s*+(?:{_PY_STRING}\s*+(?:,\s*+{_PY_STRING}\s*+)*+(?:,\s*+)?)?\]")
_PY_STRINGS = re.compile(_PY_STRING)


def _python_strings(text: str) -> list[str] | None:
    """The strings of a Python list literal of strings, or None when the text is not one."""
    if not _PY_STRING_LIST.fullmatch(text):
        return None
    try:
        strings = [ast.literal_eval(match.group()) for match in _PY_STRINGS.finditer(text)]
    except (ValueError, SyntaxError):
        return None
    for string in strings:
        try:
            string.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("holds a lone surrogate, which is not Unicode text") from None
    return strings


def _contexts(value: Any) -> list[str]:
    """A ``retrieved_contexts`` cell: a list (or array) of strings, or its JSON / Python-literal text.

    JSON text is decoded as strictly and within the same limits as a JSON Lines line (``decode_json``);
    Python-literal text only when it is a flat list of string literals (``_python_strings``)."""
    if _blank(value):
        return []
    if hasattr(value, "tolist") and not isinstance(value, str):  # a numpy array from Parquet
        value = value.tolist()
    if isinstance(value, str):
        text = value.strip()
        value, problems = decode_json(text)
        if problems:
            strings = _python_strings(text) if text.startswith("[") else None
            if strings is None:
                reasons = "; ".join(f"at {p.loc}: {p.message}" if p.loc else p.message for p in problems)
                raise ValueError(f"not a list of strings (expected a JSON list or a Python list literal): {reasons}")
            value = strings
    if isinstance(value, (list, tuple)) and all(isinstance(chunk, str) for chunk in value):
        return list(value)
    raise ValueError(f"not a list of strings, got {type(value).__name__}")


def _metric(value: Any) -> float | None:
    if _blank(value):
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError as error:
            raise ValueError(f"not a number: {value!r}") from error
    try:
        number = float(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"not a number: {value!r}") from error
    if math.isnan(number):
        return None
    if not 0.0 <= number <= 1.0:  # also refuses infinities and percentages (0-100)
        raise ValueError(f"must be a score in [0, 1], got {number!r}")
    return number


def _jsonable(row: Mapping[str, Any]) -> str:
    """The row as JSON text: NaN (a missing value in a data frame) becomes null, arrays become lists."""
    def clean(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return None
        if hasattr(value, "tolist") and not isinstance(value, str):
            return value.tolist()
        return value
    return json.dumps({str(k): clean(v) for k, v in row.items()}, ensure_ascii=False, default=str)


def _text(value: Any) -> str | None:
    return None if _blank(value) else str(value)


def ragas_rows(rows: Iterable[Mapping[str, Any]], *, first_row: int = 2, id_prefix: str = "ragas-",
               metric_columns: Sequence[str] | None = None, use_case: str | None = None, model: str | None = None,
               stakes: str | None = None) -> RagasConversion:
    """Convert RAGAS result rows (mappings, as a CSV or Parquet reader gives them) into response records
    and a metrics table.

    Rows are numbered from ``first_row`` (2 for a CSV whose header is row 1). A response id comes from a
    ``response_id`` column when the row has one, else ``id_prefix + row number``. ``metric_columns``
    (default: every column that is not a RAGAS input, ``response_id`` or record column) are read as
    scores in [0, 1]. A bad cell -- a context list that is not a list of strings, a metric that is not a
    number in [0, 1], a record field the interchange format refuses -- makes its row a failure naming
    the row and the column.
    """
    out = RagasConversion()
    materialised = [(first_row + offset, dict(row)) for offset, row in enumerate(rows)]
    columns: dict[str, None] = {}
    for _, row in materialised:
        columns.update(dict.fromkeys(str(k).strip() for k in row))
    names = tuple(metric_columns) if metric_columns is not None else tuple(c for c in columns if c not in _NOT_METRICS)
    out.metric_columns = names
    seen: dict[str, int] = {}
    for number, row in materialised:
        stripped = {str(k).strip(): v for k, v in row.items()}
        cells = {_LEGACY.get(k, k): v for k, v in stripped.items()}
        raw = _jsonable(row)
        problems: list[FieldProblem] = []
        try:
            contexts = _contexts(cells.get("retrieved_contexts"))
        except ValueError as error:
            problems.append(FieldProblem("retrieved_contexts", str(error)))
            contexts = []
        values: dict[str, float | None] = {}
        for name in names:
            try:
                values[name] = _metric(stripped.get(name))
            except ValueError as error:
                problems.append(FieldProblem(name, str(error)))
        given_id, bad_id = cells.get("response_id"), None
        if not _blank(given_id):
            bad_id = id_problem(given_id)
        if bad_id is not None:  # no id of its own: not the generated one either (the row names none to resolve)
            problems.append(FieldProblem("response_id", bad_id))
        rid = (_text(given_id) or f"{id_prefix}{number}").strip()
        if rid in seen:
            problems.append(FieldProblem("response_id", f"duplicate response id {rid!r} (row {seen[rid]})"))
        if problems:
            out.failures.append(ParseFailure(number, raw, RecordError(problems, record=f"row {number}"),
                                             response_id=None if bad_id else rid))
            continue
        record: dict[str, Any] = {
            "response_id": rid, "question": _text(cells.get("user_input")), "answer": _text(cells.get("response")),
            "gt_answer": _text(cells.get("reference")),
            "retrieved_context": [{"id": str(k), "text": text} for k, text in enumerate(contexts, start=1)],
            "claims": [],
        }
        for name in RECORD_COLUMNS:
            if not _blank(cells.get(name)):
                record[name] = cells[name]
        given = (("use_case", use_case), ("model", model), ("stakes", stakes))
        record.update({key: value for key, value in given if value is not None})
        if out._accept(number, raw, record, f"row {number}") is not None:
            seen[rid] = number
            out.scores.append(RagasScores(rid, number, values))
    return out


def iter_converted(conversion: Conversion) -> Iterator[tuple[int, str, dict[str, Any] | RecordError]]:
    """The conversion in the readers' shape ``(number, raw, record | error)``, in input order, so the
    register's importer can take it like any other file."""
    items: list[tuple[int, str, dict[str, Any] | RecordError]] = [(r.number, r.raw, r.record)
                                                                 for r in conversion.records]
    items += [(f.line, f.raw, f.error) for f in conversion.failures if isinstance(f.error, RecordError)]
    return iter(sorted(items, key=lambda item: item[0]))
