"""RAG hallucination metrics from claim-level entailment labels, computed exactly as RAGChecker does.

DOMAIN.md section 6 and seed 003 ("RAG Hallucination (Critical Information)"): hallucination is "the
fraction of model response claims that are neither supported (entailed) by the retrieved references
nor correct (entailed) with respect to the target"; faithfulness counts claims supported by the
references "regardless of correctness", and noise sensitivity counts claims "that are incorrect but
are supported by noisy references". RAGChecker is the reference implementation: given its per-query
labels (its ``checking_outputs.json``), ``python -m hri_core ragmetrics`` reproduces its ``metrics``
object exactly. The labelling itself (claim extraction, entailment checking) is not done here.

Per query, with R response claims, G ground-truth (gt) answer claims and K retrieved chunks, labels
"Entailment" / "Neutral" / "Contradiction" and ``to_bool``: Entailment -> True, the others -> False::

    c_i   = answer2response[i]          response claim i entailed by the gt answer (correct)
    a_j   = response2answer[j]          gt claim j entailed by the response
    f_ik  = retrieved2response[i][k]    response claim i entailed by chunk k
    e_jk  = retrieved2answer[j][k]      gt claim j entailed by chunk k
    rel_k = max_j e_jk                  chunk k is relevant
    F_i   = max_k f_ik                  claim i is faithful to the context
    RF_i  = max_k (rel_k and f_ik)      ... to a relevant chunk
    IF_i  = max_k (not rel_k and f_ik) and not RF_i   ... only to irrelevant chunks
    CR_j  = max_k e_jk                  gt claim j is recalled by the retriever

    overall    precision = mean_i c_i        recall = mean_j a_j
               f1 = 2 P R / (P + R), per query (0 unless P > 0 and R > 0)
    retriever  claim_recall = mean_j CR_j    context_precision = mean_k rel_k
    generator  context_utilization = sum_j (CR_j and a_j) / sum_j CR_j
               noise_sensitivity_in_relevant   = mean_i (RF_i and not c_i)
               noise_sensitivity_in_irrelevant = mean_i (IF_i and not c_i)
               hallucination  = mean_i (not F_i and not c_i)
               self_knowledge = mean_i (not F_i and c_i)
               faithfulness   = mean_i F_i

Totals, as RAGChecker reports them: per metric ``round(numpy.mean(per-query values) * 100, 1)``
(numpy's rounding of a float64, which is what RAGChecker's ``round`` does), grouped as
``{"overall": {...}, "retriever": {...}, "generator": {...}}``. f1 is the mean of the per-query f1,
not the f1 of the mean precision and recall.

Empty cases follow RAGChecker's guards (a metric whose inputs are empty is 0, never NaN):
precision 0 when R = 0; recall 0 when G = 0; claim_recall, context_precision and
context_utilization 0 unless G > 0 and K > 0 (context_utilization also 0 when no gt claim is
recalled); hallucination, self_knowledge and faithfulness 0 unless R > 0 and K > 0; both noise
sensitivities 0 unless R > 0, K > 0 and G > 0. So a query without retrieved context scores 0 on
every retriever and generator metric, hallucination included. One deliberate difference: RAGChecker
(newer releases) gives claim_recall NaN when G > 0 and K = 0; here it is 0 (no chunk recalls any
claim), which keeps the totals numbers.

Identities per query (R, K, G > 0; the noise guard needs G > 0 too): hallucination +
self_knowledge + faithfulness = 1, and hallucination + noise_sensitivity_in_relevant +
noise_sensitivity_in_irrelevant = 1 - precision.

A check that is missing from a query (key absent or null; RAGChecker would run its checker for it)
counts as not done: every metric that needs it is 0 for that query, and ``CheckedQuery.missing`` names
it so that callers can warn. A query with none of the four checks is an error (it was never checked).
Per-query ``metrics`` already in the input are ignored: everything is recomputed from the labels. For
critical-information sets, pass only the critical queries to ``aggregate_metrics`` to get hallucination
restricted to them.

Imported records (``hri_core.rag_import``) keep every label: ``checked_query_from_response`` rebuilds a
query from a ``Response`` (claims' ``entailment``, ``gt_claims``, ``retrieved_context``) and
``metrics_from_responses`` gives the same totals as ``ragchecker_metrics`` on the file they came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .errors import FieldProblem, HRIError
from .models import Response
from .vocabulary import ENTAILMENT_LABELS

__all__ = [
    "CHECKS",
    "LABELS",
    "METRIC_GROUPS",
    "METRICS",
    "CheckedQuery",
    "RAGCheckError",
    "aggregate_metrics",
    "checked_query_from_response",
    "has_rag_checks",
    "metrics_from_responses",
    "parse_checked_query",
    "parse_checked_results",
    "query_metrics",
    "ragchecker_metrics",
    "to_bool",
]

LABELS: tuple[str, ...] = ENTAILMENT_LABELS  # RAGChecker's verdicts
CHECKS: tuple[str, ...] = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")

# Group and metric names and order exactly as in RAGChecker's ``metrics`` object.
METRIC_GROUPS: dict[str, tuple[str, ...]] = {
    "overall": ("precision", "recall", "f1"),
    "retriever": ("claim_recall", "context_precision"),
    "generator": ("context_utilization", "noise_sensitivity_in_relevant", "noise_sensitivity_in_irrelevant",
                  "hallucination", "self_knowledge", "faithfulness"),
}
METRICS: tuple[str, ...] = tuple(name for names in METRIC_GROUPS.values() for name in names)

# The checks each metric reads (RAGChecker's requirements): a metric is 0 when one is missing.
REQUIREMENTS: dict[str, frozenset[str]] = {
    "precision": frozenset({"answer2response"}),
    "recall": frozenset({"response2answer"}),
    "f1": frozenset({"answer2response", "response2answer"}),
    "claim_recall": frozenset({"retrieved2answer"}),
    "context_precision": frozenset({"retrieved2answer"}),
    "context_utilization": frozenset({"retrieved2answer", "response2answer"}),
    "noise_sensitivity_in_relevant": frozenset({"retrieved2response", "answer2response", "retrieved2answer"}),
    "noise_sensitivity_in_irrelevant": frozenset({"retrieved2response", "answer2response", "retrieved2answer"}),
    "hallucination": frozenset({"retrieved2response", "answer2response"}),
    "self_knowledge": frozenset({"retrieved2response", "answer2response"}),
    "faithfulness": frozenset({"retrieved2response"}),
}


class RAGCheckError(HRIError):
    """RAGChecker results that cannot be scored: unknown labels, matrices of the wrong shape, ..."""

    title = "Invalid RAGChecker results"


def to_bool(label: str) -> bool:
    """RAGChecker's reading of a label: only "Entailment" counts as supported."""
    return label == "Entailment"


@dataclass(frozen=True)
class CheckedQuery:
    """One query's checks: label vectors (R, G) and matrices (R x K, G x K), validated for shape.

    ``chunks`` is K, ``response_claims`` R and ``gt_claims`` G. ``missing`` names the checks the input
    did not have (they are empty here and count as not done).
    """

    query_id: str
    chunks: int
    response_claims: int
    gt_claims: int
    answer2response: tuple[str, ...]
    response2answer: tuple[str, ...]
    retrieved2response: tuple[tuple[str, ...], ...]
    retrieved2answer: tuple[tuple[str, ...], ...]
    missing: tuple[str, ...] = ()


def _vector(labels: Sequence[str], length: int) -> NDArray[np.bool_]:
    if not labels:
        return np.zeros(length, dtype=bool)
    return np.array([to_bool(label) for label in labels], dtype=bool)


def _matrix(rows: Sequence[Sequence[str]], length: int, columns: int) -> NDArray[np.bool_]:
    if not rows or not columns:
        return np.zeros((length, columns), dtype=bool)
    return np.array([[to_bool(label) for label in row] for row in rows], dtype=bool)


def _mean(flags: NDArray[np.bool_]) -> float:
    return float(np.mean(flags))


def query_metrics(query: CheckedQuery) -> dict[str, float]:
    """The eleven metrics of one query as fractions in [0, 1] (formulas and empty cases: module docstring)."""
    r, g, k = query.response_claims, query.gt_claims, query.chunks
    missing = set(query.missing)
    # a missing check reads as all-False here; every metric that needs it is set to 0 below
    correct = _vector(query.answer2response, r)  # c_i
    recalled_by_response = _vector(query.response2answer, g)  # a_j
    faithful_to = _matrix(query.retrieved2response, r, k)  # f_ik
    gt_in = _matrix(query.retrieved2answer, g, k)  # e_jk

    out: dict[str, float] = dict.fromkeys(METRICS, 0.0)
    out["precision"] = _mean(correct) if r else 0.0
    out["recall"] = _mean(recalled_by_response) if g else 0.0
    p, rec = out["precision"], out["recall"]
    out["f1"] = 2 * p * rec / (p + rec) if p > 0 and rec > 0 else 0.0
    if g and k:
        claim_recalled = gt_in.max(axis=1)  # CR_j
        relevant = gt_in.max(axis=0)  # rel_k
        out["claim_recall"] = _mean(claim_recalled)
        out["context_precision"] = _mean(relevant)
        recalled = int(claim_recalled.sum())
        if recalled:
            out["context_utilization"] = int((claim_recalled & recalled_by_response).sum()) / recalled
        if r:
            relevant_faithful = (relevant[None, :] & faithful_to).max(axis=1)  # RF_i
            irrelevant_faithful = (~relevant[None, :] & faithful_to).max(axis=1) & ~relevant_faithful  # IF_i
            out["noise_sensitivity_in_relevant"] = _mean(relevant_faithful & ~correct)
            out["noise_sensitivity_in_irrelevant"] = _mean(irrelevant_faithful & ~correct)
    if r and k:
        faithful = faithful_to.max(axis=1)  # F_i
        out["hallucination"] = _mean(~faithful & ~correct)
        out["self_knowledge"] = _mean(~faithful & correct)
        out["faithfulness"] = _mean(faithful)
    for name in METRICS:
        if REQUIREMENTS[name] & missing:
            out[name] = 0.0
    return out


def aggregate_metrics(per_query: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """RAGChecker's totals: per metric ``round(mean over queries * 100, 1)``, grouped overall / retriever /
    generator. Raises ``RAGCheckError`` for no queries (a mean of nothing is not a number)."""
    if not per_query:
        raise RAGCheckError([FieldProblem("results", "no queries: there is nothing to average")])
    totals: dict[str, dict[str, float]] = {}
    for group, names in METRIC_GROUPS.items():
        # numpy's mean (pairwise summation) and numpy's rounding, as RAGChecker: 1.15 -> 1.2, not 1.1
        totals[group] = {name: float(np.round(np.mean([m[name] for m in per_query]) * 100, 1)) for name in names}
    return totals


# --- reading RAGChecker's results JSON ---------------------------------------------------------------


def _results_list(data: Any) -> list[Any]:
    """The per-query objects: ``{"results": [...]}`` as RAGChecker writes it, a bare list, or one query."""
    if isinstance(data, dict) and "results" in data:
        results = data["results"]
        if not isinstance(results, list):
            raise RAGCheckError([FieldProblem("results", f"must be a list, got {type(results).__name__}")])
        return results
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and any(check in data for check in CHECKS):
        return [data]
    raise RAGCheckError([FieldProblem("results", 'expected {"results": [...]} (RAGChecker\'s output), '
                                                 "a list of queries, or one query object")])


class _QueryReader:
    """Validates one query object, collecting every problem as ``FieldProblem``s."""

    def __init__(self, item: dict[str, Any], index: int) -> None:
        self.item = item
        raw_id = item.get("query_id")
        known = isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool)
        self.query_id = str(raw_id) if known else f"results[{index}]"
        self.where = f"results[{index}] (query_id={raw_id})" if known else f"results[{index}]"
        self.problems: list[FieldProblem] = []

    def labels(self, field: str, value: Any, length: int | None) -> tuple[str, ...]:
        if not isinstance(value, list):
            self.problems.append(FieldProblem(field, f"must be a list of labels, got {type(value).__name__}"))
            return ()
        if length is not None and len(value) != length:
            self.problems.append(FieldProblem(field, f"has {len(value)} labels, expected {length}"))
        for position, label in enumerate(value):
            if label not in LABELS:
                self.problems.append(FieldProblem(f"{field}[{position}]", f"unknown label {label!r} "
                                                                          f"(expected {', '.join(LABELS)})"))
        return tuple(str(label) for label in value)

    def count(self, field: str) -> int | None:
        """Length of an optional list field (claims, chunks); None when absent or null."""
        value = self.item.get(field)
        if value is None:
            return None
        if not isinstance(value, list):
            self.problems.append(FieldProblem(field, f"must be a list, got {type(value).__name__}"))
            return None
        return len(value)

    def matrix(self, field: str, value: Any, rows: int | None, columns: int | None) -> tuple[tuple[str, ...], ...]:
        if not isinstance(value, list):
            self.problems.append(FieldProblem(field, f"must be a list of label lists, got {type(value).__name__}"))
            return ()
        if columns == 0 and value == []:
            return ()  # no chunks: an empty matrix is as good as rows of nothing
        if rows is not None and len(value) != rows:
            self.problems.append(FieldProblem(field, f"has {len(value)} rows, expected {rows} (one per claim)"))
        out = []
        for position, row in enumerate(value):
            out.append(self.labels(f"{field}[{position}]", row, columns))
        return tuple(out)


def _parse_query(item: dict[str, Any], reader: _QueryReader) -> CheckedQuery:
    missing = tuple(check for check in CHECKS if item.get(check) is None)
    chunks = reader.count("retrieved_context")
    if chunks is None:  # no context listed: the matrices' rows say how many chunks were checked
        widths = {len(row) for check in ("retrieved2response", "retrieved2answer")
                  for row in (item.get(check) or []) if isinstance(row, list)}
        if len(widths) > 1:
            reader.problems.append(FieldProblem("retrieved_context", "missing, and the rows of retrieved2response / "
                                                                     "retrieved2answer differ in length"))
        chunks = max(widths, default=0)
    claims = {}
    for side, claims_field, vector_field, matrix_field in (
            ("response", "response_claims", "answer2response", "retrieved2response"),
            ("gt", "gt_answer_claims", "response2answer", "retrieved2answer")):
        count = reader.count(claims_field)
        for field in (vector_field, matrix_field):  # without the claims, the first check present says how many
            if count is None and isinstance(item.get(field), list) and not (field == matrix_field and chunks == 0):
                count = len(item[field])
        claims[side] = count or 0

    def vector(check: str, length: int) -> tuple[str, ...]:
        return () if check in missing else reader.labels(check, item[check], length)

    def matrix(check: str, rows: int) -> tuple[tuple[str, ...], ...]:
        return () if check in missing else reader.matrix(check, item[check], rows, chunks)

    return CheckedQuery(
        query_id=reader.query_id,
        chunks=chunks,
        response_claims=claims["response"],
        gt_claims=claims["gt"],
        answer2response=vector("answer2response", claims["response"]),
        response2answer=vector("response2answer", claims["gt"]),
        retrieved2response=matrix("retrieved2response", claims["response"]),
        retrieved2answer=matrix("retrieved2answer", claims["gt"]),
        missing=missing,
    )


def parse_checked_results(data: Any) -> list[CheckedQuery]:
    """Validate RAGChecker results (already parsed from JSON) into ``CheckedQuery`` objects.

    Accepts ``{"results": [...]}`` (RAGChecker's ``checking_outputs.json``), a bare list of query
    objects, or one query object. Every label must be one of ``LABELS``; ``answer2response`` has one
    label per response claim, ``response2answer`` one per gt claim, ``retrieved2response`` /
    ``retrieved2answer`` one row per response / gt claim with one label per retrieved chunk (claims
    counted from ``response_claims`` / ``gt_answer_claims``, chunks from ``retrieved_context``, when
    present). Raises ``RAGCheckError`` naming every bad field of every bad query: ``loc`` is
    ``"results[i] (query_id=...): field"``.
    """
    queries: list[CheckedQuery] = []
    problems: list[FieldProblem] = []
    for index, item in enumerate(_results_list(data)):
        if not isinstance(item, dict):
            problems.append(FieldProblem(f"results[{index}]", f"must be an object, got {type(item).__name__}"))
            continue
        try:
            queries.append(parse_checked_query(item, index))
        except RAGCheckError as error:
            problems.extend(FieldProblem(f"{error.record}: {p.loc}", p.message) for p in error.problems)
    if problems:
        raise RAGCheckError(problems)
    return queries


def parse_checked_query(item: dict[str, Any], index: int = 0) -> CheckedQuery:
    """Validate one query object of RAGChecker's results (the ``index``-th); ``RAGCheckError`` lists every
    bad field, with ``record`` = ``"results[i] (query_id=...)"`` and field paths relative to the query."""
    reader = _QueryReader(item, index)
    query = _parse_query(item, reader)
    if len(query.missing) == len(CHECKS):
        reader.problems.append(FieldProblem(", ".join(CHECKS), "none of the checks is present: not a checked "
                                                               "result (RAGChecker's checker has not run)"))
    if reader.problems:
        raise RAGCheckError(reader.problems, record=reader.where)
    return query


def ragchecker_metrics(data: Any) -> dict[str, dict[str, float]]:
    """Parse RAGChecker results and return its grouped totals (what ``python -m hri_core ragmetrics`` prints)."""
    return aggregate_metrics([query_metrics(q) for q in parse_checked_results(data)])


# --- the same metrics from imported interchange records -------------------------------------------------


def has_rag_checks(response: Response) -> bool:
    """Whether a response carries entailment checks (``gt_claims`` or any claim's ``entailment``)."""
    return response.gt_claims is not None or any(claim.entailment is not None for claim in response.claims)


def checked_query_from_response(response: Response) -> CheckedQuery:
    """The ``CheckedQuery`` of an imported response (``hri_core.rag_import``), label for label.

    R = its claims, with ``entailment.target`` as answer2response and ``entailment.context`` as
    retrieved2response; G = ``gt_claims``, with ``response`` as response2answer and ``context`` as
    retrieved2answer; K = ``retrieved_context``. A check is missing (as in RAGChecker's input) when
    any of its entries is None. Raises ``RAGCheckError`` for a response without checks.
    """
    if not has_rag_checks(response):
        raise RAGCheckError([FieldProblem("claims[].entailment, gt_claims", "no entailment checks: the response "
                                                                            "was not imported from checked results")],
                            record=f"response_id={response.response_id}")
    entailments = [claim.entailment for claim in response.claims]
    targets = [e.target if e is not None else None for e in entailments]
    rows = [e.context if e is not None else None for e in entailments]
    gt = response.gt_claims or ()
    gt_labels = [t.response for t in gt]
    gt_rows = [t.context for t in gt]
    checks: dict[str, Any] = {"answer2response": targets, "retrieved2response": rows,
                              "response2answer": gt_labels, "retrieved2answer": gt_rows}
    missing = tuple(check for check in CHECKS if any(entry is None for entry in checks[check]))
    return CheckedQuery(
        query_id=response.response_id,
        chunks=len(response.retrieved_context or ()),
        response_claims=len(response.claims),
        gt_claims=len(gt),
        answer2response=() if "answer2response" in missing else tuple(str(t) for t in targets),
        response2answer=() if "response2answer" in missing else tuple(str(t) for t in gt_labels),
        retrieved2response=() if "retrieved2response" in missing else tuple(tuple(r or ()) for r in rows),
        retrieved2answer=() if "retrieved2answer" in missing else tuple(tuple(r or ()) for r in gt_rows),
        missing=missing,
    )


def metrics_from_responses(responses: Sequence[Response]) -> dict[str, dict[str, float]]:
    """RAGChecker's grouped totals computed from imported responses: equal to ``ragchecker_metrics`` on the
    results they were imported from. Raises ``RAGCheckError`` naming every response without checks."""
    problems: list[FieldProblem] = []
    per_query = []
    for response in responses:
        try:
            per_query.append(query_metrics(checked_query_from_response(response)))
        except RAGCheckError as error:
            problems.extend(FieldProblem(f"{error.record}: {p.loc}", p.message) for p in error.problems)
    if problems:
        raise RAGCheckError(problems)
    return aggregate_metrics(per_query)
