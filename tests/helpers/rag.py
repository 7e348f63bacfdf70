"""RAG evaluation results built for tests: RAGChecker checked results and RAGAS result tables.

``checked_results`` draws RAGChecker's ``checking_outputs.json`` shape from a seeded generator (labels at
random, including the empty cases: no chunks, no response claims, no target claims, all Neutral), so
metrics can be compared with ``hri_core.ragmetrics`` on data no one chose by hand. ``ragas_table``
gives rows as RAGAS's ``EvaluationResult.to_pandas()`` holds them, written as CSV or Parquet.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

LABELS = ("Entailment", "Neutral", "Contradiction")
CATEGORIES = ("legal", "financial", "health", "general", "safety", None)


def _labels(rng: random.Random, n: int, weights: tuple[float, float, float]) -> list[str]:
    return rng.choices(LABELS, weights=weights, k=n)


def checked_query(rng: random.Random, query_id: str, *, chunks: int | None = None, claims: int | None = None,
                  gt_claims: int | None = None, category: str | None = None,
                  weights: tuple[float, float, float] = (0.55, 0.3, 0.15)) -> dict[str, Any]:
    """One checked query with ``chunks`` retrieved chunks, ``claims`` response claims and ``gt_claims`` target
    claims (each drawn when None) and random verdicts."""
    k = rng.randint(0, 4) if chunks is None else chunks
    r = rng.randint(0, 6) if claims is None else claims
    g = rng.randint(0, 5) if gt_claims is None else gt_claims
    item: dict[str, Any] = {
        "query_id": query_id, "query": f"Question {query_id}?", "gt_answer": f"Target answer {query_id}.",
        "response": f"Answer {query_id}.",
        "retrieved_context": [{"doc_id": f"d{query_id}-{j}", "text": f"Chunk {j} of {query_id}."} for j in range(k)],
        "response_claims": [[f"subject {query_id}", "has", f"fact {i}"] for i in range(r)],
        "gt_answer_claims": [[f"subject {query_id}", "has", f"true fact {j}"] for j in range(g)],
        "answer2response": _labels(rng, r, weights),
        "response2answer": _labels(rng, g, weights),
        "retrieved2response": [_labels(rng, k, weights) for _ in range(r)] if k else [],
        "retrieved2answer": [_labels(rng, k, weights) for _ in range(g)] if k else [],
    }
    if category is not None:
        item["category"] = category
    return item


def checked_results(seed: int, queries: int = 12, *, categories: bool = False) -> dict[str, Any]:
    """``{"results": [...]}`` of ``queries`` random checked queries (ids "0", "1", ...); with ``categories``
    each query names a category (some critical, some not, some none)."""
    rng = random.Random(seed)
    results = []
    for index in range(queries):
        category = rng.choice(CATEGORIES) if categories else None
        results.append(checked_query(rng, str(index), category=category))
    return {"results": results}


def edge_case_results() -> dict[str, Any]:
    """Hand-built empty cases: no retrieved context, no response claims, no target claims, all Neutral."""
    rng = random.Random(0)
    neutral = (0.0, 1.0, 0.0)
    return {"results": [
        checked_query(rng, "no-context", chunks=0, claims=3, gt_claims=2),
        checked_query(rng, "no-claims", chunks=2, claims=0, gt_claims=2),
        checked_query(rng, "no-target-claims", chunks=2, claims=3, gt_claims=0),
        checked_query(rng, "all-neutral", chunks=3, claims=4, gt_claims=3, weights=neutral),
        checked_query(rng, "ordinary", chunks=3, claims=4, gt_claims=3),
    ]}


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")  # pretty-printed, as RAGChecker writes it
    return path


RAGAS_METRICS = ("faithfulness", "context_precision", "context_recall", "answer_relevancy")


def ragas_table(seed: int, rows: int = 8) -> list[dict[str, Any]]:
    """RAGAS result rows: inputs, the four usual metric columns (one value missing, as RAGAS leaves a
    metric it could not compute), and the record columns model, use_case, created_at, category."""
    rng = random.Random(seed)
    out = []
    for index in range(rows):
        row: dict[str, Any] = {
            "user_input": f"RAGAS question {index}?",
            "retrieved_contexts": [f"context {index}.{j}" for j in range(rng.randint(1, 3))],
            "response": f"RAGAS answer {index}.", "reference": f"RAGAS reference {index}.",
        }
        for name in RAGAS_METRICS:
            row[name] = round(rng.random(), 4)
        row["model"] = ("model-a", "model-b")[index % 2]
        row["use_case"] = "support"
        row["created_at"] = f"2026-11-{2 + 7 * (index % 3):02d}T10:00:00Z"
        row["category"] = ("health", "general")[index % 2]
        out.append(row)
    out[1]["answer_relevancy"] = None  # RAGAS writes NaN where it could not compute a metric
    return out


def write_ragas(path: Path, rows: list[dict[str, Any]]) -> Path:
    """The rows as CSV (contexts as the Python list text pandas writes) or Parquet (a list column)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path
