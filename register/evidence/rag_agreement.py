"""The HRI against RAGChecker's metrics (HRI paper, section XVI: "compare HRI against existing RAG and factuality
metrics under controlled settings").

Over the current answers the console's filters select that were imported with RAGChecker's checks
(``register.ingest.rag_inputs``: the per-answer values RAGChecker's metrics are the means of; the latest revision
that has them, as the RAG metrics page reads them), with claims and with retrieved context (without context,
RAGChecker's guard gives 0 on every generator metric: no reading of the answer, ``register.console.rag``): Spearman's
rank correlation of the HRI score with the answer's hallucination, faithfulness and claim recall. An HRI that
ranks risk as RAGChecker does correlates positively with hallucination and negatively with faithfulness; claim
recall is the retriever's, which the HRI reads only through the claims' labels.

Spearman's rho is Pearson's ``corr()`` over average ranks (``register.evidence.ranks``), as
``scipy.stats.spearmanr`` computes it. Its interval is the percentile bootstrap: ``replicates`` resamples of the
answers with replacement, drawn by numpy's seeded generator (``bootstrap_indices``: the same seed, the same
interval), each ranked and correlated in the same DuckDB statement; a resample in which either side is constant has
no rho and is left out (``valid`` counts the others). The answers where the two disagree most are those whose rank
percentile by HRI and by hallucination lie furthest apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from register.console.queries.filters import RESPONSE_COLUMNS, Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Store
from register.errors import RegisterError
from register.evidence.ranks import average_rank, finite

__all__ = ["EXPECTED_SIGN", "MAX_RESAMPLED_ROWS", "RAG_METRICS", "RagAgreement", "bootstrap_indices",
           "rag_agreement"]

RAG_METRICS = ("hallucination", "faithfulness", "claim_recall")  # RAGChecker's names (hri_core.ragmetrics)
# the sign of rho an HRI that agrees with RAGChecker shows: more hallucination, more risk; more faithfulness or
# recall, less
EXPECTED_SIGN = {"hallucination": 1, "faithfulness": -1, "claim_recall": -1}
MAX_REPLICATES = 10_000
MAX_RESAMPLED_ROWS = 20_000_000  # answers x replicates ranked at once: beyond, ask for fewer replicates


@dataclass(frozen=True)
class RagAgreement:
    """Spearman's rho of the HRI with each metric, with its interval, and the answers that disagree most.

    ``correlations``: metric, answers, rho, low, high, valid (resamples with a rho), expected_sign;
    ``disagreements``: response_id, use_case, model, score, band, hallucination, faithfulness, claim_recall,
    hri_rank, hallucination_rank (rank percentiles in (0, 1]), gap (hri_rank - hallucination_rank), largest |gap|
    first; ``pairs``: every answer compared (response_id, score, the three metrics), for the chart and the CSV.
    """

    answers: int
    replicates: int
    seed: int
    confidence: float
    correlations: pd.DataFrame
    disagreements: pd.DataFrame
    pairs: pd.DataFrame

    def as_json(self) -> dict:
        """The figures as plain JSON values (the command line's ``--json``)."""
        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: (finite(v) if isinstance(v, float) else v) for k, v in row.items()}
                    for row in frame.astype(object).where(frame.notna(), None).to_dict("records")]
        return {"answers": self.answers, "replicates": self.replicates, "seed": self.seed,
                "confidence": self.confidence, "correlations": records(self.correlations),
                "disagreements": records(self.disagreements)}


def bootstrap_indices(n: int, replicates: int, seed: int) -> np.ndarray:
    """The resamples: ``replicates`` rows of ``n`` answer positions (0 .. n-1) drawn with replacement by numpy's
    generator seeded with ``seed``."""
    return np.random.default_rng(seed).integers(0, n, size=(replicates, n))


def rag_agreement(store: Store, f: Filters | None = None, *, replicates: int = 1000, seed: int = 0,
                  confidence: float = 0.95, limit: int = 20) -> RagAgreement:
    """Spearman's rho of the HRI score with RAGChecker's hallucination, faithfulness and claim recall over the
    answers ``f`` selects, with ``confidence`` percentile bootstrap intervals (``replicates`` resamples seeded by
    ``seed``), and the ``limit`` answers where the HRI and hallucination disagree most."""
    if not (isinstance(replicates, int) and 0 <= replicates <= MAX_REPLICATES):
        raise RegisterError(f"replicates: must be a whole number from 0 to {MAX_REPLICATES:,}, got {replicates!r}")
    if not (isinstance(confidence, float) and 0 < confidence < 1):
        raise RegisterError(f"confidence: must be a number between 0 and 1, got {confidence!r}")
    if not (isinstance(limit, int) and 0 <= limit <= 10_000):
        raise RegisterError(f"limit: must be a whole number from 0 to 10000, got {limit!r}")
    if not isinstance(seed, int):
        raise RegisterError(f"seed: must be a whole number, got {seed!r}")
    p = Params()
    with store.cursor() as cur:
        cur.execute("CREATE OR REPLACE TEMP TABLE _rag_pairs AS " + _pairs_select(store, f or Filters(), p), p.values)
        n = int(cur.scalar("SELECT count(*) FROM _rag_pairs"))
        if n * replicates > MAX_RESAMPLED_ROWS:
            raise RegisterError(f"{n:,} answers x {replicates:,} replicates is more than the "
                                f"{MAX_RESAMPLED_ROWS:,} rows one bootstrap ranks: ask for fewer replicates")
        cur.execute(f"CREATE OR REPLACE TEMP TABLE _rag_long AS {_LONG}", {"metrics": list(RAG_METRICS)})
        point = cur.frame(f"""
            SELECT metric, count(*)::BIGINT AS answers, corr(rx, ry) AS rho FROM (
                SELECT metric, {average_rank('x', 'metric')} AS rx, {average_rank('y', 'metric')} AS ry FROM _rag_long)
            GROUP BY metric""")
        intervals = _intervals(cur, n, replicates, seed, confidence)
        pairs = cur.frame("SELECT response_id, use_case, model, score, band, "
                          f"{', '.join(RAG_METRICS)} FROM _rag_pairs ORDER BY i")
        disagreements = cur.frame(f"""
            SELECT * FROM (
                SELECT response_id, use_case, model, score, band, {', '.join(RAG_METRICS)},
                       {average_rank('score')} / count(*) OVER () AS hri_rank,
                       {average_rank('hallucination')} / count(*) OVER () AS hallucination_rank
                FROM _rag_pairs WHERE hallucination IS NOT NULL)
            ORDER BY abs(hri_rank - hallucination_rank) DESC, response_id LIMIT $limit""", {"limit": limit})
        cur.execute("DROP TABLE _rag_long")
        cur.execute("DROP TABLE _rag_pairs")
    disagreements["gap"] = disagreements["hri_rank"] - disagreements["hallucination_rank"]
    correlations = pd.DataFrame({"metric": list(RAG_METRICS)}).merge(point, on="metric", how="left")
    correlations = correlations.merge(intervals, on="metric", how="left")
    correlations["answers"] = correlations["answers"].fillna(0).astype(int)
    correlations["valid"] = correlations["valid"].fillna(0).astype(int)
    correlations["rho"] = [finite(v) for v in correlations["rho"]]
    correlations["expected_sign"] = [EXPECTED_SIGN[m] for m in correlations["metric"]]
    return RagAgreement(answers=n, replicates=replicates, seed=seed, confidence=confidence,
                        correlations=correlations[["metric", "answers", "rho", "low", "high", "valid",
                                                   "expected_sign"]],
                        disagreements=disagreements, pairs=pairs)


def _pairs_select(store: Store, f: Filters, p: Params) -> str:
    """SELECT of the compared answers: i (0-based position, by response id), response_id, use_case, model, score,
    band and the three metrics (fractions; NULL when the import had none)."""
    values = ", ".join(f"max(v.value) FILTER (WHERE v.metric = {p(m)}) AS {m}" for m in RAG_METRICS)
    return f"""
        WITH rag_r AS MATERIALIZED (
            SELECT {RESPONSE_COLUMNS} FROM responses
            WHERE is_current AND response_id IN (SELECT response_id FROM rag_responses WHERE framework = 'ragchecker')),
        fr AS MATERIALIZED ({filtered_scores(store, f, p, responses='rag_r')}),
        latest AS (SELECT * FROM rag_responses WHERE framework = 'ragchecker'
                   QUALIFY row_number() OVER (PARTITION BY response_id ORDER BY revision DESC) = 1),
        vals AS (SELECT x.response_id, {values}
                 FROM latest x JOIN rag_metric_values v ON v.response_key = x.response_key AND v.framework = x.framework
                 WHERE coalesce(x.chunks, 1) > 0 GROUP BY x.response_id)
        SELECT (row_number() OVER (ORDER BY fr.response_id) - 1)::BIGINT AS i, fr.response_id, fr.use_case, fr.model,
               fr.score, fr.band, {', '.join(f'vals.{m}' for m in RAG_METRICS)}
        FROM fr JOIN vals ON vals.response_id = fr.response_id
        WHERE NOT fr.no_claims AND fr.scoring_failure IS NULL"""


# one row per (answer, metric) with a value: x the HRI score, y the metric
_LONG = ("SELECT i, metric, score AS x, CASE metric "
         + " ".join(f"WHEN '{m}' THEN {m}" for m in RAG_METRICS)
         + " END AS y FROM _rag_pairs, (SELECT unnest($metrics::VARCHAR[]) AS metric) WHERE y IS NOT NULL")


def _intervals(cur, n: int, replicates: int, seed: int, confidence: float) -> pd.DataFrame:
    """Per metric: the percentile bootstrap interval of rho (low, high) and the resamples that had one (valid)."""
    empty = pd.DataFrame({"metric": list(RAG_METRICS), "low": None, "high": None, "valid": 0})
    if n < 2 or replicates == 0:
        return empty
    drawn = bootstrap_indices(n, replicates, seed)
    boot = pd.DataFrame({"b": np.repeat(np.arange(replicates), n), "i": drawn.ravel()})
    tail = (1 - confidence) / 2
    with cur.relation("evidence_bootstrap", boot):
        return cur.frame(f"""
            SELECT metric, quantile_cont(rho, $low) AS low, quantile_cont(rho, $high) AS high,
                   count(*)::BIGINT AS valid
            FROM (SELECT b, metric, corr(rx, ry) AS rho FROM (
                      SELECT s.b, l.metric, {average_rank('l.x', 's.b, l.metric')} AS rx,
                             {average_rank('l.y', 's.b, l.metric')} AS ry
                      FROM evidence_bootstrap s JOIN _rag_long l ON l.i = s.i)
                  GROUP BY b, metric)
            WHERE NOT isnan(rho)
            GROUP BY metric""", {"low": tail, "high": 1 - tail})
