"""The HRI against RAGChecker's metrics: Spearman's rho exact against scipy.stats.spearmanr, its seeded bootstrap
interval exact against the same resamples ranked by scipy, and the answers that disagree most."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from register import SYSTEM
from register.console.queries.filters import Filters
from register.errors import RegisterError
from register.evidence.rag_agreement import RAG_METRICS, bootstrap_indices, rag_agreement
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions
from tests.helpers.rag import checked_results, write_json


def _import(store, tmp_path, seed: int, queries: int, **options) -> None:
    path = write_json(tmp_path / f"checked-{seed}.json", checked_results(seed, queries=queries, categories=True))
    import_path(store, SYSTEM, path, rag=RagOptions(**options))


def _pairs(store) -> np.ndarray:
    """score and the three metrics of the compared answers, by response id (the function's own order)."""
    metrics = ", ".join(f"max(v.value) FILTER (WHERE v.metric = '{m}')" for m in RAG_METRICS)
    return np.array(store.query(f"""
        SELECT s.score, {metrics} FROM current_scores s
        JOIN rag_responses x ON x.response_id = s.response_id AND x.framework = 'ragchecker'
        JOIN rag_metric_values v ON v.response_key = x.response_key AND v.framework = 'ragchecker'
        WHERE NOT s.no_claims AND s.scoring_failure IS NULL AND x.chunks > 0
        GROUP BY s.response_id, s.score ORDER BY s.response_id"""), dtype=float)


@pytest.fixture
def checked(store, tmp_path):
    _import(store, tmp_path, 7, 60, use_case="support", model="m1")
    _import(store, tmp_path, 8, 40, use_case="legal", model="m2")
    return store


def test_rho_is_scipy_spearmanr(checked):
    result = rag_agreement(checked, replicates=0)
    pairs = _pairs(checked)
    assert result.answers == len(pairs) > 30
    for k, metric in enumerate(RAG_METRICS):
        row = result.correlations.set_index("metric").loc[metric]
        expected = stats.spearmanr(pairs[:, 0], pairs[:, k + 1]).statistic
        assert row["answers"] == len(pairs)
        assert row["rho"] == pytest.approx(expected, abs=1e-12)


def test_bootstrap_interval_is_the_percentiles_of_the_same_resamples_by_scipy(checked):
    replicates, seed = 200, 11
    result = rag_agreement(checked, replicates=replicates, seed=seed)
    pairs = _pairs(checked)
    drawn = bootstrap_indices(len(pairs), replicates, seed)
    for k, metric in enumerate(RAG_METRICS):
        rhos = []
        for rows in drawn:
            x, y = pairs[rows, 0], pairs[rows, k + 1]
            if np.ptp(x) > 0 and np.ptp(y) > 0:
                rhos.append(stats.spearmanr(x, y).statistic)
        row = result.correlations.set_index("metric").loc[metric]
        assert row["valid"] == len(rhos)
        assert row["low"] == pytest.approx(np.percentile(rhos, 2.5), abs=1e-12)
        assert row["high"] == pytest.approx(np.percentile(rhos, 97.5), abs=1e-12)
        assert row["low"] <= row["rho"] <= row["high"] or row["valid"] < replicates
    again = rag_agreement(checked, replicates=replicates, seed=seed)  # seeded: the same interval (to the last
    # bits of a sum DuckDB adds up in parallel)
    assert np.allclose(again.correlations[["low", "high"]].to_numpy(dtype=float),
                       result.correlations[["low", "high"]].to_numpy(dtype=float), atol=1e-12)


def test_disagreements_are_the_furthest_rank_percentiles(checked):
    result = rag_agreement(checked, replicates=0, limit=5)
    pairs = _pairs(checked)
    n = len(pairs)
    hri = stats.rankdata(pairs[:, 0]) / n
    hall = stats.rankdata(pairs[:, 1]) / n
    gaps = np.sort(np.abs(hri - hall))[::-1][:5]
    assert np.allclose(np.abs(result.disagreements["gap"].to_numpy(dtype=float)), gaps, atol=1e-12)
    assert len(result.disagreements) == 5 and result.disagreements["response_id"].is_unique


def test_filters_select_one_model(checked):
    result = rag_agreement(checked, Filters(models=("m2",)), replicates=0)
    everyone = rag_agreement(checked, replicates=0)
    assert 0 < result.answers < everyone.answers
    assert set(result.pairs["model"]) == {"m2"}


def test_without_ragchecker_results_nothing_is_compared(store):
    result = rag_agreement(store, replicates=50)
    assert result.answers == 0 and result.correlations["rho"].isna().all() and result.disagreements.empty
    assert list(result.correlations["metric"]) == list(RAG_METRICS)


def test_bad_arguments_are_refused(store):
    with pytest.raises(RegisterError, match="replicates"):
        rag_agreement(store, replicates=-1)
    with pytest.raises(RegisterError, match="confidence"):
        rag_agreement(store, confidence=1.0)
