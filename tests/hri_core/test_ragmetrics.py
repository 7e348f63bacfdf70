"""RAGChecker's metrics: its own example reproduced exactly, a hand-built fixture worked out by hand,
each metric on small cases (no context, no claims, all Neutral), DOMAIN.md's identities as a property,
and the CLI's contract (grouping, exit codes, errors naming query and field)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.ragmetrics import (
    LABELS,
    METRIC_GROUPS,
    METRICS,
    CheckedQuery,
    RAGCheckError,
    aggregate_metrics,
    parse_checked_results,
    query_metrics,
    ragchecker_metrics,
)
from tests.helpers.paths import peer_data

ROOT = Path(__file__).resolve().parents[2]
HAND_BUILT = ROOT / "tests" / "data" / "ragchecker" / "hand_built.json"
E, N, C = "Entailment", "Neutral", "Contradiction"


def checked(r2a_labels, a2r_labels, r2r, ctx2a, chunks=None, **extra) -> CheckedQuery:
    """One query from its four checks (answer2response, response2answer, retrieved2response, retrieved2answer)."""
    item = {"query_id": "q", "answer2response": r2a_labels, "response2answer": a2r_labels,
            "retrieved2response": r2r, "retrieved2answer": ctx2a, **extra}
    if chunks is not None:
        item["retrieved_context"] = [{"doc_id": str(k), "text": "..."} for k in range(chunks)]
    (query,) = parse_checked_results({"results": [item]})
    return query


# --- RAGChecker's own example (peer data) ---------------------------------------------------------------


def test_reproduces_ragchecker_example_exactly():
    data = json.loads(peer_data("ragchecker", "checking_outputs.json").read_text(encoding="utf-8"))
    queries = parse_checked_results(data)
    for query, result in zip(queries, data["results"], strict=True):
        assert query_metrics(query) == result["metrics"]  # bit for bit, per query
    assert ragchecker_metrics(data) == data["metrics"]
    assert json.dumps(ragchecker_metrics(data)) == json.dumps(data["metrics"])  # same groups, same order


def test_cli_prints_ragchecker_example_metrics():
    path = peer_data("ragchecker", "checking_outputs.json")
    done = run_cli(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(path.read_text(encoding="utf-8"))["metrics"]
    assert done.stderr == ""


def test_unchecked_ragchecker_input_is_refused():
    # RAGChecker's checking_inputs.json has no checks at all: nothing to compute from
    done = run_cli(peer_data("ragchecker", "checking_inputs.json"))
    assert done.returncode == 2
    assert "results[0] (query_id=0): answer2response, response2answer" in done.stderr


# --- the hand-built fixture ---------------------------------------------------------------------------------

# Worked out by hand from tests/data/ragchecker/hand_built.json (R response claims, G gt claims, K chunks):
# "mixed" R4 G2 K2: c = (N,E,C,N) -> (0,1,0,0): precision 1/4; a = (E,N) -> recall 1/2;
#   f1 = 2(1/4)(1/2)/(3/4) = 1/3. e = [[E,N],[N,C]] -> CR = (1,0): claim_recall 1/2; rel = (1,0):
#   context_precision 1/2; context_utilization = (CR & a)/CR = 1/1. f = [[E,N],[N,E],[N,N],[C,E]] ->
#   F = (1,1,0,1), RF = (1,0,0,0), IF = (0,1,0,1); nsr = RF & !c = claim 0 -> 1/4; nsi = IF & !c = claim 3
#   -> 1/4; hallucination = !F & !c = claim 2 -> 1/4; self_knowledge 0; faithfulness 3/4.
# "no-context" R2 G1 K0: precision 1/2, recall 1, f1 = 2(1/2)(1)/(3/2) = 2/3; all else 0 (no chunks).
# "all-neutral" R2 G2 K1: precision = recall = f1 = 0; no chunk relevant, nothing recalled; F = (0,0):
#   hallucination 1, self_knowledge 0, faithfulness 0; noise sensitivities 0.
# "no-response-claims" R0 G1 K1: recall 0 (a = N); CR = (1): claim_recall 1, context_precision 1,
#   context_utilization 0/1 = 0; every response-claim metric 0.
HAND_PER_QUERY = {
    "mixed": dict(precision=1 / 4, recall=1 / 2, f1=1 / 3, claim_recall=1 / 2, context_precision=1 / 2,
                  context_utilization=1.0, noise_sensitivity_in_relevant=1 / 4,
                  noise_sensitivity_in_irrelevant=1 / 4, hallucination=1 / 4, self_knowledge=0.0,
                  faithfulness=3 / 4),
    "no-context": dict(precision=1 / 2, recall=1.0, f1=2 / 3),
    "all-neutral": dict(hallucination=1.0),
    "no-response-claims": dict(claim_recall=1.0, context_precision=1.0),
}
# Totals: mean of the four x 100, one decimal (numpy rounds halves to even: 18.75 -> 18.8, 6.25 -> 6.2).
HAND_TOTALS = {
    "overall": {"precision": 18.8, "recall": 37.5, "f1": 25.0},
    "retriever": {"claim_recall": 37.5, "context_precision": 37.5},
    "generator": {"context_utilization": 25.0, "noise_sensitivity_in_relevant": 6.2,
                  "noise_sensitivity_in_irrelevant": 6.2, "hallucination": 31.2, "self_knowledge": 0.0,
                  "faithfulness": 18.8},
}


def test_hand_built_fixture_per_query():
    queries = parse_checked_results(json.loads(HAND_BUILT.read_text(encoding="utf-8")))
    assert [q.query_id for q in queries] == list(HAND_PER_QUERY)
    for query in queries:
        expected = dict.fromkeys(METRICS, 0.0) | HAND_PER_QUERY[query.query_id]
        assert query_metrics(query) == pytest.approx(expected, abs=1e-15), query.query_id


def test_cli_hand_built_fixture():
    done = run_cli(HAND_BUILT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == json.dumps(HAND_TOTALS)


# --- each metric on small cases -------------------------------------------------------------------------------


def test_no_retrieved_context_scores_zero_on_retriever_and_generator_metrics():
    metrics = query_metrics(checked([E, N, C], [E, N], [[], [], []], [[], []], chunks=0))
    assert (metrics["precision"], metrics["recall"]) == (pytest.approx(1 / 3), 0.5)
    zero = [m for m in METRICS if m not in METRIC_GROUPS["overall"]]
    assert {m: metrics[m] for m in zero} == dict.fromkeys(zero, 0.0)


def test_no_context_listed_and_empty_matrices_mean_no_chunks():
    query = checked([N, N], [E], [], [])
    assert query.chunks == 0 and query.response_claims == 2
    assert query_metrics(query)["hallucination"] == 0.0  # RAGChecker's convention: 0 without context


def test_no_claims_at_all():
    metrics = query_metrics(checked([], [], [], [], chunks=3))
    assert metrics == dict.fromkeys(METRICS, 0.0)


def test_no_gt_claims_zeroes_noise_sensitivity_but_not_hallucination():
    # RAGChecker's guard: without gt claims no chunk can be relevant and both noise metrics are 0
    metrics = query_metrics(checked([N, E], [], [[E], [N]], [], chunks=1))
    assert metrics["noise_sensitivity_in_relevant"] == metrics["noise_sensitivity_in_irrelevant"] == 0.0
    assert metrics["faithfulness"] == 0.5 and metrics["self_knowledge"] == 0.5 and metrics["hallucination"] == 0.0
    assert metrics["recall"] == 0.0 and metrics["f1"] == 0.0 and metrics["precision"] == 0.5


def test_all_neutral_is_all_hallucination():
    metrics = query_metrics(checked([N, N, N], [N], [[N, N]] * 3, [[N, N]], chunks=2))
    assert metrics["hallucination"] == 1.0
    assert sum(v for m, v in metrics.items() if m != "hallucination") == 0.0


def test_contradiction_counts_as_not_entailed():
    neutral = query_metrics(checked([N, E], [N], [[N], [E]], [[E]], chunks=1))
    contradiction = query_metrics(checked([C, E], [C], [[C], [E]], [[E]], chunks=1))
    assert neutral == contradiction


@pytest.mark.parametrize("a2r, r2a, expected_f1", [
    ([E, E], [E, N], 2 * 1.0 * 0.5 / 1.5),  # per-query harmonic mean
    ([N, N], [E, E], 0.0),  # precision 0 -> f1 0
    ([E], [N], 0.0),  # recall 0 -> f1 0
])
def test_f1(a2r, r2a, expected_f1):
    assert query_metrics(checked(a2r, r2a, [[N]] * len(a2r), [[N]] * len(r2a), chunks=1))["f1"] == expected_f1


def test_f1_total_is_the_mean_of_per_query_f1_not_f1_of_means():
    queries = [checked([E], [E], [[N]], [[N]], chunks=1), checked([N, E], [N, N, E], [[N]] * 2, [[N]] * 3, chunks=1)]
    totals = aggregate_metrics([query_metrics(q) for q in queries])
    # per query f1 = 1 and 2(1/2)(1/3)/(5/6) = 2/5 -> mean 0.7; f1 of the mean P 3/4, R 2/3 would be 70.6
    assert totals["overall"]["f1"] == 70.0


def test_context_utilization_counts_recalled_claims_the_response_covers():
    # gt claims 0,1,2; chunks recall 0 and 2; the response covers 0 and 1 -> 1 of 2 recalled claims used
    metrics = query_metrics(checked([E], [E, E, N], [[N, N]], [[E, N], [N, N], [N, E]], chunks=2))
    assert metrics["context_utilization"] == 0.5
    assert metrics["claim_recall"] == pytest.approx(2 / 3) and metrics["context_precision"] == 1.0


def test_totals_use_numpys_rounding_like_ragchecker():
    # RAGChecker rounds numpy float64s: round(np.float64(1.15), 1) == 1.2 where Python's round gives 1.1
    one = dict.fromkeys(METRICS, 0.0)
    totals = aggregate_metrics([one | {"precision": 0.0115, "recall": 0.0105}])
    assert totals["overall"]["precision"] == 1.2 and totals["overall"]["recall"] == 1.0


def test_existing_per_query_metrics_are_recomputed_not_trusted():
    item = {"query_id": "x", "answer2response": [E], "response2answer": [E], "retrieved2response": [[E]],
            "retrieved2answer": [[E]], "metrics": {"precision": 0.0}}
    assert ragchecker_metrics({"results": [item]})["overall"]["precision"] == 100.0


def test_missing_check_zeroes_the_metrics_that_need_it():
    item = {"query_id": "x", "answer2response": [E, N], "response2answer": [E], "retrieved_context": [{}],
            "retrieved2response": [[E], [N]]}  # retrieved2answer missing
    (query,) = parse_checked_results([item])
    assert query.missing == ("retrieved2answer",)
    metrics = query_metrics(query)
    assert metrics["precision"] == 0.5 and metrics["faithfulness"] == 0.5 and metrics["hallucination"] == 0.5
    assert metrics["claim_recall"] == metrics["noise_sensitivity_in_relevant"] == 0.0


# --- DOMAIN.md's identities, as a property ----------------------------------------------------------------------


@hs.composite
def label_matrices(draw) -> CheckedQuery:
    r, g, k = draw(hs.integers(1, 8)), draw(hs.integers(1, 8)), draw(hs.integers(1, 6))
    labels = hs.sampled_from(LABELS)
    return checked(draw(hs.lists(labels, min_size=r, max_size=r)), draw(hs.lists(labels, min_size=g, max_size=g)),
                   [draw(hs.lists(labels, min_size=k, max_size=k)) for _ in range(r)],
                   [draw(hs.lists(labels, min_size=k, max_size=k)) for _ in range(g)], chunks=k)


@settings(max_examples=300, deadline=None)
@given(label_matrices())
def test_identities_per_query(query):
    m = query_metrics(query)
    assert m["hallucination"] + m["self_knowledge"] + m["faithfulness"] == pytest.approx(1.0, abs=1e-12)
    assert (m["hallucination"] + m["noise_sensitivity_in_relevant"] + m["noise_sensitivity_in_irrelevant"]
            == pytest.approx(1.0 - m["precision"], abs=1e-12))
    assert all(0.0 <= v <= 1.0 for v in m.values())


# --- bad input --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("item, loc, needle", [
    ({"query_id": "7", "answer2response": [E, "entailment"], "response2answer": [],
      "retrieved2response": [[], []], "retrieved2answer": []}, "results[0] (query_id=7): answer2response[1]",
     "unknown label 'entailment'"),
    ({"query_id": "7", "response_claims": [["a"], ["b"]], "answer2response": [E], "response2answer": [],
      "retrieved2response": [], "retrieved2answer": []}, "results[0] (query_id=7): answer2response",
     "has 1 labels, expected 2"),
    ({"query_id": 8, "retrieved_context": [{}, {}], "answer2response": [E], "response2answer": [E],
      "retrieved2response": [[E]], "retrieved2answer": [[E, N]]}, "results[0] (query_id=8): retrieved2response[0]",
     "has 1 labels, expected 2"),
    ({"query_id": "9", "answer2response": [E], "response2answer": [E], "retrieved2response": "E",
      "retrieved2answer": [[E]]}, "results[0] (query_id=9): retrieved2response", "must be a list"),
    ({"answer2response": [E], "response2answer": [], "retrieved2response": [[E, N]], "retrieved2answer": [[E]]},
     "results[0]: retrieved_context", "differ in length"),
    ("not an object", "results[0]", "must be an object"),
])
def test_bad_queries_are_named_by_query_and_field(item, loc, needle):
    with pytest.raises(RAGCheckError) as caught:
        parse_checked_results({"results": [item]})
    problem = caught.value.problems[0]
    assert problem.loc == loc and needle in problem.message


def test_every_bad_query_is_reported_at_once():
    good = {"query_id": "ok", "answer2response": [E], "response2answer": [E], "retrieved2response": [[E]],
            "retrieved2answer": [[E]]}
    bad = [good | {"query_id": "a", "answer2response": ["?"]}, good, good | {"query_id": "b", "response2answer": 3}]
    with pytest.raises(RAGCheckError) as caught:
        parse_checked_results(bad)
    assert [p.loc for p in caught.value.problems] == ["results[0] (query_id=a): answer2response[0]",
                                                      "results[2] (query_id=b): response2answer"]


def test_input_shapes_accepted():
    item = {"query_id": "x", "answer2response": [E], "response2answer": [E], "retrieved2response": [[E]],
            "retrieved2answer": [[E]]}
    expected = ragchecker_metrics({"results": [item]})
    assert ragchecker_metrics([item]) == ragchecker_metrics(item) == expected
    with pytest.raises(RAGCheckError):
        ragchecker_metrics({"results": []})
    with pytest.raises(RAGCheckError):
        ragchecker_metrics({"something": "else"})


# --- the CLI, end to end ------------------------------------------------------------------------------------


def run_cli(path: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hri_core", "ragmetrics", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_cli_missing_check_is_named_on_stderr(tmp_path):
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"results": [{"query_id": "q1", "answer2response": [E], "response2answer": [E],
                                             "retrieved_context": []}]}), encoding="utf-8")
    done = run_cli(path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["overall"] == {"precision": 100.0, "recall": 100.0, "f1": 100.0}
    assert "query q1: no retrieved2response, retrieved2answer" in done.stderr


@pytest.mark.parametrize("text, needle", [
    ("{not json", "line 1: malformed JSON"),
    (json.dumps({"results": [{"query_id": "q9", "answer2response": ["Yes"], "response2answer": [],
                              "retrieved2response": [[]], "retrieved2answer": []}]}),
     "results[0] (query_id=q9): answer2response[0]: unknown label 'Yes'"),
    (json.dumps({"results": []}), "results: no queries"),
])
def test_cli_bad_input_exits_2(tmp_path, text, needle):
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    done = run_cli(path)
    assert done.returncode == 2 and done.stdout == ""
    assert f"{path}: {needle}" in done.stderr


def test_cli_missing_file_exits_1(tmp_path):
    done = run_cli(tmp_path / "absent.json")
    assert done.returncode == 1 and done.stdout == "" and "cannot read" in done.stderr
