"""RAG metric inputs stored with each imported response (tables of migration 011).

Called by ``register.ingest.batches`` inside the transaction that stores a chunk, for every import (a
RAGChecker or RAGAS file, and any interchange record that carries entailment checks), so the values
always belong to the revision they were computed from:

- a response with RAGChecker's checks (claims' ``entailment``, ``gt_claims``): the eleven per-query
  values of ``hri_core.ragmetrics.query_metrics`` (fractions in [0, 1]), framework ``ragchecker``;
- a row of a RAGAS result table (``register.ingest.rag_files`` hands its scores over in ``Item.extra``):
  each metric column as given, framework ``ragas``.

The RAG metrics page (``register.console.rag``) averages these in SQL. Per response, ``rag_responses``
also keeps R, G, K, the checks the input lacked, and what the question is about (its claims'
categories, plus a RAGAS ``category`` column) with ``critical`` when any of them is one of seed 003's
critical-information categories.

A revision gets its rows once: an unchanged re-import finds them there and writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hri_core import Response
from hri_core.ragmetrics import checked_query_from_response, has_rag_checks, query_metrics
from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES
from register.db.store import Transaction

__all__ = ["RAGAS_EXTRA", "store_rag_inputs"]

RAGAS_EXTRA = "ragas"  # Item.extra key: {"metrics": {name: value | None}, "category": str | None}

_RESPONSE_SCHEMA = pa.schema([("response_id", pa.string()), ("framework", pa.string()),
                              ("response_claims", pa.int32()), ("gt_claims", pa.int32()), ("chunks", pa.int32()),
                              ("missing_checks", pa.list_(pa.string())), ("categories", pa.list_(pa.string())),
                              ("critical", pa.bool_())])
_VALUE_SCHEMA = pa.schema([("response_id", pa.string()), ("framework", pa.string()), ("metric", pa.string()),
                           ("value", pa.float64())])


def _categories(response: Response, extra_category: Any) -> list[str]:
    found: set[str] = {claim.category for claim in response.claims if claim.category is not None}
    if isinstance(extra_category, str) and extra_category.strip():
        found.add(" ".join(extra_category.split()).lower())
    return sorted(found)


def _rows(stored: Sequence[tuple[Response, Mapping[str, Any] | None]]) -> tuple[dict[str, list], dict[str, list]]:
    responses: dict[str, list] = {name: [] for name in _RESPONSE_SCHEMA.names}
    values: dict[str, list] = {name: [] for name in _VALUE_SCHEMA.names}

    def add(response: Response, framework: str, counts: tuple[int | None, int | None, int | None],
            missing: list[str] | None, categories: list[str], metrics: Mapping[str, float | None]) -> None:
        row = (response.response_id, framework, *counts, missing, categories,
               any(c in CRITICAL_INFORMATION_CATEGORIES for c in categories))
        for name, value in zip(_RESPONSE_SCHEMA.names, row, strict=True):
            responses[name].append(value)
        for metric, score in metrics.items():
            for name, cell in zip(_VALUE_SCHEMA.names, (response.response_id, framework, metric, score), strict=True):
                values[name].append(cell)

    for response, extra in stored:
        ragas = (extra or {}).get(RAGAS_EXTRA)
        categories = _categories(response, ragas.get("category") if ragas else None)
        if has_rag_checks(response):
            query = checked_query_from_response(response)
            add(response, "ragchecker", (query.response_claims, query.gt_claims, query.chunks),
                list(query.missing), categories, query_metrics(query))
        if ragas:
            add(response, "ragas", (None, None, None), None, categories, ragas["metrics"])
    return responses, values


def store_rag_inputs(tx: Transaction, stored: Sequence[tuple[Response, Mapping[str, Any] | None]]) -> int:
    """Store the RAG metric inputs of the chunk's current revisions (one entry per response id: the last
    valid occurrence, which is the stored current revision) inside the caller's write transaction.

    Returns how many (response, framework) rows were added; responses without RAG data add none.
    """
    responses, values = _rows(stored)
    if not responses["response_id"]:
        return 0
    staged_r = pa.table(responses, schema=_RESPONSE_SCHEMA)
    staged_v = pa.table(values, schema=_VALUE_SCHEMA)
    with tx.relation("_rag_staged_r", staged_r), tx.relation("_rag_staged_v", staged_v):
        # values first: "not there yet" is judged by rag_responses, which the second statement fills
        tx.execute("""
            INSERT INTO rag_metric_values (response_key, framework, metric, value)
            SELECT r.response_key, v.framework, v.metric, v.value
            FROM _rag_staged_v v JOIN responses r ON r.response_id = v.response_id AND r.is_current
            WHERE NOT EXISTS (SELECT 1 FROM rag_responses x
                              WHERE x.response_key = r.response_key AND x.framework = v.framework)
        """)
        return int(tx.execute("""
            INSERT INTO rag_responses (response_key, response_id, revision, framework, response_claims, gt_claims,
                                       chunks, missing_checks, categories, critical)
            SELECT r.response_key, r.response_id, r.revision, s.framework, s.response_claims, s.gt_claims, s.chunks,
                   s.missing_checks, s.categories, s.critical
            FROM _rag_staged_r s JOIN responses r ON r.response_id = s.response_id AND r.is_current
            WHERE NOT EXISTS (SELECT 1 FROM rag_responses x
                              WHERE x.response_key = r.response_key AND x.framework = s.framework)
        """) or 0)
