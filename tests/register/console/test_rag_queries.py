"""The RAG metrics page's SQL aggregates against hri_core: every RAGChecker metric, per group, on critical
questions alone, factual precision, and the per-response scatter values."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from hri_core.rag_import import ragchecker_results
from hri_core.ragmetrics import METRIC_GROUPS, METRICS, aggregate_metrics, query_metrics, ragchecker_metrics
from hri_core.vocabulary import CRITICAL_INFORMATION_CATEGORIES
from register import SYSTEM, Store
from register.console import rag
from register.console.queries.filters import Filters
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions
from register.scoring.profiles import ensure_default_profile
from tests.helpers.paths import peer_data
from tests.helpers.rag import checked_query, checked_results, edge_case_results, write_json


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "rag.duckdb")
    ensure_default_profile(s, SYSTEM)
    yield s
    s.close()


def _import(store, tmp_path, data, name="checked", **options):
    path = write_json(tmp_path / f"{name}.json", data)
    report = import_path(store, SYSTEM, path, rag=RagOptions(**options))
    assert report.quarantined == 0
    return report


def _flat(grouped: dict) -> dict[str, float]:
    return {name: value for group in grouped.values() for name, value in group.items()}


@pytest.mark.parametrize("metric", METRICS)
def test_each_metric_in_sql_equals_hri_core_on_the_ragchecker_example(store, tmp_path, metric):
    data = json.loads(peer_data("ragchecker", "checking_outputs.json").read_text(encoding="utf-8"))
    _import(store, tmp_path, data)
    assert _flat(rag.summary(store, Filters())["metrics"])[metric] == _flat(ragchecker_metrics(data))[metric]


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_every_metric_in_sql_equals_hri_core_on_random_checked_results(store, tmp_path, seed):
    data = checked_results(seed, queries=random.Random(seed).randint(1, 40))
    _import(store, tmp_path, data)
    assert rag.summary(store, Filters())["metrics"] == ragchecker_metrics(data)


def test_empty_cases_no_context_no_claims_all_neutral(store, tmp_path):
    data = edge_case_results()
    _import(store, tmp_path, data)
    assert rag.summary(store, Filters())["metrics"] == ragchecker_metrics(data)
    points = rag.hri_vs_hallucination(store, Filters()).set_index("response_id")
    # the query without context: RAGChecker's guard makes its hallucination 0 (nothing to be faithful to), which
    # is no reading of the answer: it is not a point (the page shows such queries apart)
    assert "checked:no-context" not in points.index
    # all Neutral with context: every claim neither grounded nor correct
    assert points.loc["checked:all-neutral", "hallucination"] == 100
    assert "checked:no-claims" not in points.index  # no claims, no HRI to compare


def test_sql_percent_rounding_is_numpys_on_ties(store, tmp_path):
    # 0.0015 hallucination on average would read 0.1 or 0.2 depending on the rounding rule; build means
    # at many tie points and compare with aggregate_metrics' numpy rounding
    rng = random.Random(9)
    results = checked_results(9, queries=40)["results"]
    for item in results:
        rng.shuffle(item["answer2response"])
    data = {"results": results}
    _import(store, tmp_path, data)
    assert rag.summary(store, Filters())["metrics"] == ragchecker_metrics(data)


def test_per_model_and_per_batch_equal_hri_core_on_each_subset(store, tmp_path):
    first, second = checked_results(21, queries=9), checked_results(22, queries=13)
    _import(store, tmp_path, first, name="first", model="model-a", use_case="loans")
    _import(store, tmp_path, second, name="second", model="model-b", use_case="loans")
    by_model = rag.metrics_by(store, Filters(), "model")
    for model, data in (("model-a", first), ("model-b", second)):
        rows = by_model[(by_model["key"] == model) & (by_model["framework"] == "ragchecker")]
        assert dict(zip(rows["metric"], rows["value"], strict=True)) == _flat(ragchecker_metrics(data))
    by_use_case = rag.metrics_by(store, Filters(), "use_case")
    rows = by_use_case[(by_use_case["key"] == "loans") & (by_use_case["framework"] == "ragchecker")]
    both = {"results": first["results"] + second["results"]}
    assert dict(zip(rows["metric"], rows["value"], strict=True)) == _flat(ragchecker_metrics(both))
    batches = rag.metrics_by(store, Filters(), "batch")
    assert set(batches["key"]) == {"batch 1: first.json", "batch 2: second.json"}
    # the console's filters apply
    only_b = rag.summary(store, Filters(models=("model-b",)))
    assert only_b["metrics"] == ragchecker_metrics(second) and only_b["ragchecker"] == 13


def test_hallucination_on_critical_questions_is_the_mean_over_them_alone(store, tmp_path):
    data = checked_results(31, queries=30, categories=True)
    _import(store, tmp_path, data)
    conversion = ragchecker_results(data)
    # the answers with retrieved context: the others are counted apart, not averaged in as zeros
    with_context = {item["query_id"] for item in data["results"] if item["retrieved_context"]}
    per_query = {r.response.response_id: query_metrics(_checked(r.response)) for r in conversion.records
                 if r.response.response_id in with_context}
    assert len(per_query) < len(conversion.records)
    critical = {r.response.response_id for r in conversion.records if r.response.response_id in with_context
                and any(c.category in CRITICAL_INFORMATION_CATEGORIES for c in r.response.claims)}
    assert 0 < len(critical) < len(per_query)
    expected = aggregate_metrics([per_query[q] for q in sorted(critical)])["generator"]["hallucination"]
    other = aggregate_metrics([m for q, m in per_query.items() if q not in critical])["generator"]["hallucination"]
    summary = rag.summary(store, Filters())
    every_critical = {r.response.response_id for r in conversion.records
                      if any(c.category in CRITICAL_INFORMATION_CATEGORIES for c in r.response.claims)}
    assert (summary["critical_hallucination"], summary["other_hallucination"], summary["critical"]) == (
        expected, other, len(every_critical))
    categories = rag.by_category(store, Filters()).set_index("category")
    for category in ("legal", "financial"):
        ids = [r.response.response_id for r in conversion.records if r.response.response_id in per_query
               and any(c.category == category for c in r.response.claims)]
        assert categories.loc[category, "hallucination"] == aggregate_metrics(
            [per_query[q] for q in ids])["generator"]["hallucination"]
        assert bool(categories.loc[category, "critical"])


def _checked(response):
    from hri_core.ragmetrics import checked_query_from_response

    return checked_query_from_response(response)


def _factscore(responses) -> float:
    """FActScore (Min et al. 2023): per answer with claims, the share of its claims supported; then the mean over
    those answers (an answer without claims is left out, as FActScore leaves out abstentions)."""
    shares = [sum(1 for c in r.claims if [label.value for label in c.labels] == ["SUPPORTED"]) / len(r.claims)
              for r in responses if r.claims]
    return sum(shares) / len(shares)


def test_factual_precision_is_factscore_the_mean_over_answers_of_each_supported_share(store, tmp_path):
    data = checked_results(41, queries=20)
    _import(store, tmp_path, data, model="m")
    responses = ragchecker_results(data).responses
    claims = [c for r in responses for c in r.claims]
    supported = sum(1 for c in claims if [label.value for label in c.labels] == ["SUPPORTED"])
    expected = _factscore(responses)
    assert expected != pytest.approx(supported / len(claims))  # pooling the claims would read otherwise
    summary = rag.summary(store, Filters())
    assert (summary["claims"], summary["supported_claims"]) == (len(claims), supported)
    assert summary["factual_precision"] == pytest.approx(expected, abs=1e-12)
    assert summary["factscore_answers"] == sum(1 for r in responses if r.claims)
    rows = rag.metrics_by(store, Filters(), "model")
    factscore = rows[rows["framework"] == "factscore"]
    assert factscore["value"].tolist() == pytest.approx([expected], abs=1e-12)
    assert factscore["n"].tolist() == [summary["factscore_answers"]]  # answers, as every other count there


def test_factual_precision_of_two_answers_of_different_lengths(store, tmp_path):
    rng = random.Random(5)
    short, long = checked_query(rng, "short", chunks=1, claims=1, gt_claims=1), \
        checked_query(rng, "long", chunks=1, claims=9, gt_claims=1)
    short["answer2response"], long["answer2response"] = ["Entailment"], ["Neutral"] * 9
    short["retrieved2response"], long["retrieved2response"] = [["Entailment"]], [["Neutral"]] * 9
    _import(store, tmp_path, {"results": [short, long]})
    # the one-claim answer is fully supported, the nine-claim one not at all: FActScore 0.5, not 1 / 10
    assert rag.summary(store, Filters())["factual_precision"] == pytest.approx(0.5)


def test_queries_without_retrieved_context_are_shown_apart_not_averaged_in_as_zeros(store, tmp_path):
    data = edge_case_results()
    rng = random.Random(3)
    data["results"] += [checked_query(rng, f"critical-{i}", chunks=k, claims=3, gt_claims=2, category="legal")
                        for i, k in enumerate((0, 0, 2, 3))]
    _import(store, tmp_path, data)
    conversion = ragchecker_results(data)
    per_query = {r.response.response_id: query_metrics(_checked(r.response)) for r in conversion.records}
    chunks = {item["query_id"]: len(item["retrieved_context"]) for item in data["results"]}
    without = sorted(q for q in per_query if not chunks[q])
    with_context = [per_query[q] for q in per_query if chunks[q]]
    assert without == ["critical-0", "critical-1", "no-context"]
    summary = rag.summary(store, Filters())
    # RAGChecker's own totals stay as RAGChecker computes them, zeros included
    assert summary["metrics"] == ragchecker_metrics(data)
    # the page's hallucination: over the answers that had context to be faithful to
    assert summary["hallucination"] == aggregate_metrics(with_context)["generator"]["hallucination"]
    assert summary["hallucination"] != summary["metrics"]["generator"]["hallucination"]
    critical = [per_query[q] for q in ("critical-2", "critical-3")]
    assert summary["critical_hallucination"] == aggregate_metrics(critical)["generator"]["hallucination"]
    # apart: their count and their figures
    assert summary["no_context"] == 3
    apart = aggregate_metrics([per_query[q] for q in without])["overall"]
    figures = summary["no_context_metrics"]
    assert (figures["precision"], figures["recall"], figures["f1"]) == (
        apart["precision"], apart["recall"], apart["f1"])
    # with no reference every claim is unsupported: seed 003's hallucination is the share of incorrect claims
    incorrect = [1 - per_query[q]["precision"] for q in without]
    assert figures["unsupported_incorrect"] == round(float(np.mean(incorrect)) * 100, 1)
    categories = rag.by_category(store, Filters()).set_index("category")
    assert categories.loc["legal", "n"] == 2
    assert categories.loc["legal", "hallucination"] == summary["critical_hallucination"]




def test_scatter_values_are_the_per_query_metrics(store, tmp_path):
    data = checked_results(51, queries=10)
    _import(store, tmp_path, data)
    points = rag.hri_vs_hallucination(store, Filters()).set_index("response_id")
    scores = dict(store.query("SELECT response_id, score FROM scores WHERE is_current"))
    for record in ragchecker_results(data).records:
        response = record.response
        if not response.claims or not response.retrieved_context:
            assert f"checked:{response.response_id}" not in points.index
            continue
        metrics = query_metrics(_checked(response))
        rid = f"checked:{response.response_id}"
        assert points.loc[rid, "hallucination"] == pytest.approx(100 * metrics["hallucination"])
        assert points.loc[rid, "faithfulness"] == pytest.approx(100 * metrics["faithfulness"])
        assert points.loc[rid, "score"] == scores[rid]


def test_trend_is_per_week_and_model(store, tmp_path):
    week1, week2 = checked_results(61, queries=6), checked_results(62, queries=7)
    _import(store, tmp_path, week1, name="w1", model="m", created_at="2026-11-03T09:00:00Z")
    _import(store, tmp_path, week2, name="w2", model="m", created_at="2026-11-12T09:00:00Z")
    frame = rag.trend(store, Filters(), "hallucination")
    assert [str(w) for w in frame["week"]] == ["2026-11-02", "2026-11-09"]  # the Mondays
    assert frame["value"].tolist() == [ragchecker_metrics(d)["generator"]["hallucination"] for d in (week1, week2)]
    assert frame["n"].tolist() == [6, 7]


def test_groups_are_an_allow_list(store):
    with pytest.raises(ValueError, match="cannot group by"):
        rag.metrics_by(store, Filters(), "model; DROP TABLE responses")


def test_no_rag_data_gives_empty_results(store):
    summary = rag.summary(store, Filters())
    assert (summary["ragchecker"], summary["ragas"], summary["metrics"]) == (0, 0, None)
    assert rag.hri_vs_hallucination(store, Filters()).empty


def test_grouped_totals_have_ragcheckers_shape(store, tmp_path):
    _import(store, tmp_path, checked_results(71, queries=3))
    metrics = rag.summary(store, Filters())["metrics"]
    assert {group: tuple(values) for group, values in metrics.items()} == METRIC_GROUPS
    assert all(isinstance(v, float) and np.isfinite(v) for v in _flat(metrics).values())
