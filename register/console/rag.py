"""Read queries of the RAG metrics page: RAGChecker's metrics, RAGAS scores and FActScore's factual
precision, aggregated in DuckDB over the console's filtered set.

Called by ``ui.features.rag_metrics`` (cached). The inputs are the per-response values stored at import time
(``register.ingest.rag_inputs``, migration 011). A response shows the values of its latest revision that
has them (a revision made in the register, e.g. a label change, keeps its answer's RAGAS scores).

RAGChecker reports each metric as ``round(mean over queries * 100, 1)`` with numpy's mean and rounding
(``hri_core.ragmetrics.aggregate_metrics``); here the mean is ``fsum(value) / count(value)`` and the
rounding ``round_even(mean * 100 * 10, 0) / 10``, which is numpy's ``round(x, 1)`` = ``rint(x * 10) / 10``
step for step (DuckDB's ``round(x, 1)`` rounds half away from zero and its ``round_even(x, 1)`` rounds
the decimal text: both differ from numpy on ties such as 0.15). A test holds every metric equal to
``hri_core`` on RAGChecker's example and on hand-built and random sets.

Queries without retrieved context: RAGChecker's guard gives them 0 on every retriever and generator metric,
hallucination included (nothing to be faithful to), which is no reading of the answer. RAGChecker's own tables
(``summary["metrics"]``, ``metrics_by``, ``trend``) keep them exactly as RAGChecker does; the page's own readings
(its headline hallucination, critical and other questions, ``by_category``, ``hri_vs_hallucination``) leave them
out, and ``summary`` gives them apart: their count and their overall figures, with seed 003's hallucination for
them (every claim is unsupported when nothing was retrieved, so it is the share of incorrect claims).

Seed 003's critical information: a question is critical when one of its claims (or a RAGAS table's
``category`` column) is in ``hri_core.vocabulary.CRITICAL_INFORMATION_CATEGORIES``; hallucination on
critical questions is the same mean restricted to them.

Factual precision is FActScore's (Min et al. 2023, "FActScore: Fine-grained Atomic Evaluation of Factual
Precision in Long Form Text Generation", section 3.1): per answer, the share of its atomic claims that are
supported (here: stored labels exactly ``SUPPORTED``), then the mean over the answers that have claims (an
answer without claims is left out, as FActScore leaves out abstentions) -- not the claims pooled, which would
let a long answer outweigh short ones. It is not one of RAGChecker's metrics.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from hri_core.ragmetrics import METRIC_GROUPS, METRICS
from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES, Label
from register.console.queries.filters import RESPONSE_COLUMNS, Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Store

__all__ = ["GROUPS", "METRIC_GROUPS", "METRICS", "by_category", "hri_vs_hallucination", "metrics_by", "summary",
           "trend"]

# group key -> SQL expression over ``rs`` (allow-list: nothing else reaches GROUP BY)
GROUPS: dict[str, str] = {
    "batch": "'batch ' || rs.batch_id || ': ' || rs.source_name",
    "model": "coalesce(rs.model, '(no model)')",
    "use_case": "coalesce(rs.use_case, '(no use case)')",
}


def _percent(mean: str) -> str:
    """RAGChecker's ``numpy.round(mean * 100, 1)`` in SQL (see the module docstring)."""
    return f"round_even(({mean}) * 100 * 10, 0) / 10"


def _mean(value: str) -> str:
    return f"(fsum({value}) / nullif(count({value}), 0))"


def _rag_set(store: Store, f: Filters, p: Params) -> str:
    """WITH-clause items ending in ``rs``: the filtered current responses that have RAG data, one row per
    (response, framework) with the batch, its categories and whether it is critical."""
    # only the responses that have RAG data go into the scored-set join (the register may hold millions)
    return f"""
    rag_r AS MATERIALIZED (
        SELECT {RESPONSE_COLUMNS} FROM responses
        WHERE is_current AND response_id IN (SELECT response_id FROM rag_responses)),
    fr AS MATERIALIZED ({filtered_scores(store, f, p, responses='rag_r')}),
    latest AS (SELECT * FROM rag_responses
               QUALIFY row_number() OVER (PARTITION BY response_id, framework ORDER BY revision DESC) = 1),
    rs AS MATERIALIZED (
        SELECT fr.response_id, fr.revision, fr.response_key, fr.model, fr.use_case, fr.score, fr.band, fr.no_claims,
               coalesce(fr.created_at, fr.imported_at) AS answered_at, r.batch_id, b.source_name,
               x.framework, x.response_key AS rag_key, x.categories, x.critical,
               x.chunks, x.response_claims
        FROM fr JOIN latest x ON x.response_id = fr.response_id
        JOIN responses r ON r.response_key = fr.response_key
        JOIN import_batches b ON b.batch_id = r.batch_id)"""


def _values(framework: str | None = None) -> str:
    """``rs`` rows with their metric values (``framework`` a literal chosen here, never user text)."""
    where = f"WHERE rs.framework = '{framework}'" if framework in ("ragchecker", "ragas") else ""
    return ("SELECT rs.*, v.metric, v.value FROM rs JOIN rag_metric_values v "
            f"ON v.response_key = rs.rag_key AND v.framework = rs.framework {where}")


def _supported(p: Params) -> str:
    return f"c.labels = {p([Label.SUPPORTED.value])}::VARCHAR[]"


# a RAGChecker query with retrieved context (a RAGAS row has no chunk count: it is never "without context")
_WITH_CONTEXT = "coalesce(chunks, 1) > 0"
_NO_CONTEXT = "framework = 'ragchecker' AND chunks = 0"
NO_CONTEXT_METRICS = ("precision", "recall", "f1")  # the figures RAGChecker's guard leaves standing without context


def _answer_shares(p: Params, answers: str) -> str:
    """Per answer of ``answers`` (a relation with ``response_key``): its current claims, supported ones and
    FActScore's share (supported / claims); answers without claims have no row."""
    return f"""
        SELECT a.*, count(*) AS claims, count(*) FILTER (WHERE {_supported(p)}) AS supported,
               count(*) FILTER (WHERE {_supported(p)})::DOUBLE / count(*) AS share
        FROM ({answers}) a JOIN claims c ON c.response_key = a.response_key AND c.is_current
        GROUP BY ALL"""


def summary(store: Store, f: Filters) -> dict[str, Any]:
    """The page's headline: counts, RAGChecker's grouped totals over the filtered set, hallucination over the
    answers with retrieved context, on critical-category questions alone and on the others, the queries without
    retrieved context apart, and factual precision.

    Keys: ``ragchecker`` / ``ragas`` / ``critical`` (responses), ``metrics`` ({group: {metric: percent}},
    RAGChecker's shape and numbers, queries without context included as RAGChecker includes them; None when no
    response has checks), ``hallucination``, ``critical_hallucination`` and ``other_hallucination`` (percent over
    the answers with retrieved context; None when there is none), ``no_context`` (RAGChecker answers without
    retrieved context) and ``no_context_metrics`` (their precision, recall and f1 as RAGChecker computes them, and
    ``unsupported_incorrect``: seed 003's hallucination, the mean over those with claims of the share of incorrect
    claims; percent, None when there is none), ``claims`` and ``supported_claims`` (the RAG responses' current
    claims), ``factscore_answers`` (responses with claims) and ``factual_precision`` (FActScore in [0, 1]: the mean
    over those answers of each one's supported share; None without claims), ``ragas_means`` ({column: mean}).
    """
    p = Params()
    hallucination = p("hallucination")
    precision = p("precision")
    row = store.one(f"""
        WITH {_rag_set(store, f, p)},
        checked AS ({_values('ragchecker')}),
        answers AS ({_answer_shares(p, 'SELECT DISTINCT response_key FROM rs')})
        SELECT (SELECT count(DISTINCT response_key) FROM rs WHERE framework = 'ragchecker') AS ragchecker,
               (SELECT count(DISTINCT response_key) FROM rs WHERE framework = 'ragas') AS ragas,
               (SELECT count(DISTINCT response_key) FROM rs WHERE critical) AS critical,
               (SELECT {_percent(_mean('value'))} FROM checked WHERE metric = {hallucination} AND {_WITH_CONTEXT})
                   AS hallucination,
               (SELECT {_percent(_mean('value'))} FROM checked
                WHERE metric = {hallucination} AND critical AND {_WITH_CONTEXT}) AS critical_hallucination,
               (SELECT {_percent(_mean('value'))} FROM checked
                WHERE metric = {hallucination} AND NOT critical AND {_WITH_CONTEXT}) AS other_hallucination,
               (SELECT count(DISTINCT response_key) FROM rs WHERE {_NO_CONTEXT}) AS no_context,
               (SELECT map(list(metric), list(value)) FROM (
                    SELECT metric, {_percent(_mean('value'))} AS value FROM checked
                    WHERE {_NO_CONTEXT} AND metric IN {p.in_list(NO_CONTEXT_METRICS)} GROUP BY metric))
                   AS no_context_metrics,
               (SELECT {_percent(_mean('1 - value'))} FROM checked
                WHERE {_NO_CONTEXT} AND metric = {precision} AND response_claims > 0) AS no_context_incorrect,
               (SELECT sum(claims) FROM answers) AS claims,
               (SELECT sum(supported) FROM answers) AS supported_claims,
               (SELECT count(*) FROM answers) AS factscore_answers,
               (SELECT fsum(share) / nullif(count(*), 0) FROM answers) AS factual_precision,
               (SELECT map(list(metric), list(value)) FROM (
                    SELECT metric, {_percent(_mean('value'))} AS value FROM checked GROUP BY metric)) AS metrics,
               (SELECT map(list(metric), list(value)) FROM (
                    SELECT metric, {_mean('value')} AS value FROM ({_values('ragas')}) GROUP BY metric))
                   AS ragas_means
    """, p.values) or {}
    metrics = dict(row.get("metrics") or {})
    no_context = int(row.get("no_context") or 0)
    apart = dict(row.get("no_context_metrics") or {})
    return {
        "ragchecker": int(row.get("ragchecker") or 0), "ragas": int(row.get("ragas") or 0),
        "critical": int(row.get("critical") or 0),
        "metrics": ({group: {name: metrics.get(name) for name in names} for group, names in METRIC_GROUPS.items()}
                    if metrics else None),
        "hallucination": row.get("hallucination"),
        "critical_hallucination": row.get("critical_hallucination"),
        "other_hallucination": row.get("other_hallucination"),
        "no_context": no_context,
        "no_context_metrics": ({**{name: apart.get(name) for name in NO_CONTEXT_METRICS},
                                "unsupported_incorrect": row.get("no_context_incorrect")} if no_context else None),
        "claims": int(row.get("claims") or 0), "supported_claims": int(row.get("supported_claims") or 0),
        "factscore_answers": int(row.get("factscore_answers") or 0),
        "factual_precision": row.get("factual_precision"),
        "ragas_means": dict(sorted((row.get("ragas_means") or {}).items())),
    }


def metrics_by(store: Store, f: Filters, by: str) -> pd.DataFrame:
    """Every metric per group (``by`` in ``GROUPS``: batch, model, use case), long format.

    Columns: ``key``, ``framework`` (ragchecker, ragas, or ``factscore`` for factual precision), ``metric``,
    ``n`` (responses with the value; for factual precision, responses with claims), ``value`` (RAGChecker:
    percent as it reports it, queries without context included as it includes them; RAGAS: the mean score in
    [0, 1]; factscore: FActScore in [0, 1], the mean over answers of each one's supported share).
    """
    if by not in GROUPS:
        raise ValueError(f"cannot group by {by!r}; expected one of {', '.join(GROUPS)}")
    p = Params()
    key = GROUPS[by]
    return store.frame(f"""
        WITH {_rag_set(store, f, p)}
        SELECT {key} AS key, rs.framework, rs.metric, count(rs.value) AS n,
               CASE WHEN rs.framework = 'ragchecker' THEN {_percent(_mean('rs.value'))} ELSE {_mean('rs.value')} END
                   AS value
        FROM ({_values()}) rs GROUP BY 1, 2, 3
        UNION ALL
        SELECT {key} AS key, 'factscore', 'factual_precision', count(*), fsum(rs.share) / count(*)
        FROM ({_answer_shares(p, 'SELECT DISTINCT response_key, batch_id, source_name, model, use_case FROM rs')}) rs
        GROUP BY 1
        ORDER BY key, framework, metric
    """, p.values)


def trend(store: Store, f: Filters, metric: str, framework: str = "ragchecker") -> pd.DataFrame:
    """One metric per ISO week (the Monday, UTC, of the answer's time, else its import time) and model.

    Columns: ``week`` (a date), ``model``, ``n``, ``value`` (percent for RAGChecker, mean score for RAGAS).
    """
    if framework not in ("ragchecker", "ragas"):
        raise ValueError(f"unknown framework {framework!r}")
    p = Params()
    value = _percent(_mean("value")) if framework == "ragchecker" else _mean("value")
    frame = store.frame(f"""
        WITH {_rag_set(store, f, p)}
        SELECT date_trunc('week', timezone('UTC', answered_at))::DATE AS week,
               coalesce(model, '(no model)') AS model, count(value) AS n, {value} AS value
        FROM ({_values(framework)}) WHERE metric = {p(metric)}
        GROUP BY ALL ORDER BY week, model
    """, p.values)
    frame["week"] = pd.Series([w.date() if hasattr(w, "date") else w for w in frame["week"]], index=frame.index,
                              dtype=object)  # dates, as the overview's weeks
    return frame


def by_category(store: Store, f: Filters) -> pd.DataFrame:
    """Hallucination (RAGChecker, percent) per category of the questions, critical ones first.

    Columns: ``category``, ``critical``, ``n`` (responses), ``hallucination``. A question with claims in
    several categories counts in each; one without retrieved context in none (``summary`` counts it apart).
    """
    p = Params()
    return store.frame(f"""
        WITH {_rag_set(store, f, p)}
        SELECT category, list_contains({p(list(CRITICAL_INFORMATION_CATEGORIES))}::VARCHAR[], category) AS critical,
               count(value) AS n, {_percent(_mean('value'))} AS hallucination
        FROM (SELECT unnest(categories) AS category, value FROM ({_values('ragchecker')})
              WHERE metric = {p('hallucination')} AND {_WITH_CONTEXT})
        GROUP BY ALL ORDER BY critical DESC, category
    """, p.values)


def hri_vs_hallucination(store: Store, f: Filters, *, limit: int = 5000) -> pd.DataFrame:
    """Per response with RAGChecker checks, claims and retrieved context: its HRI score and its hallucination and
    faithfulness (percent), where the two can be compared. Highest score first, at most ``limit``.

    Columns: ``response_id``, ``model``, ``use_case``, ``score``, ``band``, ``critical``, ``hallucination``,
    ``faithfulness``.
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    p = Params()
    return store.frame(f"""
        WITH {_rag_set(store, f, p)}
        SELECT response_id, coalesce(model, '(no model)') AS model, coalesce(use_case, '(no use case)') AS use_case,
               any_value(score) AS score, any_value(band) AS band, any_value(critical) AS critical,
               100 * max(value) FILTER (WHERE metric = {p('hallucination')}) AS hallucination,
               100 * max(value) FILTER (WHERE metric = {p('faithfulness')}) AS faithfulness
        FROM ({_values('ragchecker')}) WHERE NOT no_claims AND {_WITH_CONTEXT}
        GROUP BY ALL ORDER BY score DESC, response_id LIMIT {p(int(limit))}
    """, p.values)
