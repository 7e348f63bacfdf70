"""RAGChecker and RAGAS results as interchange records (issue 12 section 6): the label mapping, raw checks
kept so that RAGChecker's metrics recompute exactly from the imported records (its own example, the
hand-built fixture, relabelled data), bad queries and bad cells named, RAGAS rows and metrics."""

from __future__ import annotations

import copy
import json
import math
import random
from datetime import UTC, datetime

import numpy as np
import pytest

from hri_core import Dimension, default_profile, parse_response, score_response
from hri_core.rag_import import claim_label, iter_converted, ragas_rows, ragchecker_results, triplet_text
from hri_core.ragmetrics import (
    RAGCheckError,
    checked_query_from_response,
    has_rag_checks,
    metrics_from_responses,
    query_metrics,
    ragchecker_metrics,
)
from hri_core.vocabulary import Label
from tests.helpers.paths import REPO_ROOT, peer_data

HAND_BUILT = REPO_ROOT / "tests" / "data" / "ragchecker" / "hand_built.json"
E, N, C = "Entailment", "Neutral", "Contradiction"


def peer_results() -> dict:
    return json.loads(peer_data("ragchecker", "checking_outputs.json").read_text(encoding="utf-8"))


def hand_built() -> dict:
    return json.loads(HAND_BUILT.read_text(encoding="utf-8"))


def problems(failure) -> list[str]:
    return [p["field"] for p in failure.error.as_dict()["problems"]]


# --- the label mapping ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("target", "context", "expected"), [
    (N, [N, E], {"labels": ["SUPPORTED"]}),
    (E, [E], {"labels": ["SUPPORTED"]}),
    (C, [E, N], {"labels": ["CONTRADICTED"], "contradicted_by": "world"}),  # a faithful falsehood
    (N, [C, N], {"labels": ["CONTRADICTED"], "contradicted_by": "context"}),
    (C, [C], {"labels": ["CONTRADICTED"], "contradicted_by": "context"}),
    (E, [C], {"labels": ["CONTRADICTED"], "contradicted_by": "context", "dimensions": ["C"]}),
    (E, [N, N], {"labels": ["SUPPORTED"]}),  # self-knowledge
    (C, [N], {"labels": ["CONTRADICTED"], "contradicted_by": "world"}),
    (N, [N], {"labels": ["UNSUPPORTED"]}),
    (N, [], {"labels": ["UNSUPPORTED"]}),
    (None, None, {"labels": ["UNSUPPORTED"]}),  # checks missing: nothing supports it
    (E, None, {"labels": ["SUPPORTED"]}),
])
def test_claim_label(target, context, expected):
    assert claim_label(target, context) == expected


def test_self_knowledge_can_be_read_strictly():
    assert claim_label(E, [N], Label.UNSUPPORTED) == {"labels": ["UNSUPPORTED"]}
    assert claim_label(E, [E], Label.UNSUPPORTED) == {"labels": ["SUPPORTED"]}  # grounded claims stay supported


def test_hallucination_is_the_ungrounded_claims_that_count_in_f_or_u():
    # seed 003: hallucinated = neither supported by the references nor correct w.r.t. the target
    for target in (E, N, C):
        for context in ([E], [N], [C], [N, C], [E, C], []):
            fields = claim_label(target, context)
            counts_in_f_or_u = fields["labels"] == ["UNSUPPORTED"] or (
                fields["labels"] == ["CONTRADICTED"] and fields.get("dimensions") != ["C"])
            hallucinated = E not in context and target != E
            assert hallucinated == (counts_in_f_or_u and E not in context), (target, context)


@pytest.mark.parametrize(("claim", "text"), [
    (["Nile", "is", "longest river in the world"], "Nile is longest river in the world"),
    (["  a ", "b", ""], "a b"),
    ("The Nile is long.", "The Nile is long."),
])
def test_triplet_text(claim, text):
    assert triplet_text(claim) == text


@pytest.mark.parametrize("bad", [[], [1, 2, 3], None, {"s": "x"}])
def test_triplet_text_refuses_other_shapes(bad):
    with pytest.raises(ValueError):
        triplet_text(bad)


# --- RAGChecker's own example (peer data) -----------------------------------------------------------------

def test_peer_example_imports_every_query_and_keeps_every_label():
    data = peer_results()
    conversion = ragchecker_results(data, id_prefix="rc-", use_case="rag-demo", model="gpt", stakes="High")
    assert conversion.failures == []
    assert [r.response_id for r in conversion.responses] == [f"rc-{q['query_id']}" for q in data["results"]]
    assert set(conversion.records[0].record["retrieved_context"][0]) == {"id", "text"}  # doc_id -> id
    for response, query in zip(conversion.responses, data["results"], strict=True):
        assert (response.question, response.answer, response.gt_answer) == (
            query["query"], query["response"], query["gt_answer"])
        assert (response.use_case, response.model, response.stakes) == ("rag-demo", "gpt", "high")
        assert [c.id for c in response.retrieved_context] == [d["doc_id"] for d in query["retrieved_context"]]
        assert [c.text for c in response.claims] == [" ".join(t) for t in query["response_claims"]]
        assert [c.entailment.target for c in response.claims] == query["answer2response"]
        assert [list(c.entailment.context) for c in response.claims] == query["retrieved2response"]
        assert [t.response for t in response.gt_claims] == query["response2answer"]
        assert [list(t.context) for t in response.gt_claims] == query["retrieved2answer"]


def test_metrics_from_imported_records_equal_ragcheckers_own_and_the_cli(hri_core_cli):
    data = peer_results()
    responses = ragchecker_results(data).responses
    for response, query in zip(responses, data["results"], strict=True):
        assert query_metrics(checked_query_from_response(response)) == query["metrics"]  # bit for bit
    from_records = metrics_from_responses(responses)
    assert from_records == data["metrics"] == ragchecker_metrics(data)
    done = hri_core_cli("ragmetrics", str(peer_data("ragchecker", "checking_outputs.json")))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == from_records


def test_metrics_survive_a_json_round_trip_of_the_records():
    # what the register stores is the record's JSON: recomputing from it must give the same numbers
    conversion = ragchecker_results(hand_built())
    reread = [parse_response(json.loads(json.dumps(r.response.model_dump(mode="json")))) for r in conversion.records]
    assert metrics_from_responses(reread) == ragchecker_metrics(hand_built())


def relabelled(data: dict, seed: int) -> dict:
    rng = random.Random(seed)
    out = copy.deepcopy(data)
    for query in out["results"]:
        for check in ("answer2response", "response2answer"):
            query[check] = [rng.choice((E, N, C)) for _ in query[check]]
        for check in ("retrieved2response", "retrieved2answer"):
            query[check] = [[rng.choice((E, N, C)) for _ in row] for row in query[check]]
    return out


@pytest.mark.parametrize("seed", range(8))
def test_metrics_from_records_equal_on_relabelled_data(seed):
    data = relabelled(hand_built() if seed % 2 else peer_results(), seed)
    assert metrics_from_responses(ragchecker_results(data).responses) == ragchecker_metrics(data)


def test_hand_built_edge_cases_no_context_no_claims_all_neutral():
    data = hand_built()
    conversion = ragchecker_results(data)
    assert conversion.failures == []
    by_id = {r.response_id: r for r in conversion.responses}
    no_context = by_id["no-context"]
    assert no_context.retrieved_context == () and [c.entailment.context for c in no_context.claims] == [(), ()]
    assert [c.labels[0].value for c in no_context.claims] == ["SUPPORTED", "UNSUPPORTED"]  # self-knowledge, then U
    assert by_id["no-response-claims"].claims == () and len(by_id["no-response-claims"].gt_claims) == 1
    assert {c.labels[0].value for c in by_id["all-neutral"].claims} == {"UNSUPPORTED"}
    mixed = [(c.labels[0].value, c.contradicted_by) for c in by_id["mixed"].claims]
    assert mixed == [("SUPPORTED", None), ("SUPPORTED", None), ("CONTRADICTED", "world"), ("SUPPORTED", None)]
    assert metrics_from_responses(conversion.responses) == ragchecker_metrics(data)


def test_a_missing_check_stays_missing():
    data = hand_built()
    del data["results"][0]["answer2response"]
    data["results"][2]["retrieved2answer"] = None
    conversion = ragchecker_results(data)
    assert conversion.failures == []
    assert checked_query_from_response(conversion.responses[0]).missing == ("answer2response",)
    assert checked_query_from_response(conversion.responses[2]).missing == ("retrieved2answer",)
    assert metrics_from_responses(conversion.responses) == ragchecker_metrics(data)


def test_imported_context_contradictions_score_in_f_and_c():
    item = {"query_id": "q", "retrieved_context": [{"doc_id": "d", "text": "90 days"}],
            "response_claims": [["refund window", "is", "30 days"]], "gt_answer_claims": [],
            "answer2response": [N], "response2answer": [], "retrieved2response": [[C]], "retrieved2answer": []}
    (response,) = ragchecker_results({"results": [item]}, criticality=3, category="financial").responses
    assert (response.claims[0].category, response.claims[0].criticality) == ("financial", 3)
    result = score_response(response, default_profile(), datetime(2026, 12, 1, tzinfo=UTC))
    assert result.dimensions[Dimension.F] == result.dimensions[Dimension.C] == 1.0
    # additive 0.25 F + 0.20 C = 0.45 < the 0.70 floor of a criticality-3 contradiction
    assert result.hri_add == pytest.approx(0.45) and (result.score, result.band) == (70.0, "High")


# --- bad input: every query named, nothing lost -----------------------------------------------------------

def test_bad_queries_become_failures_naming_query_and_field():
    data = hand_built()
    good = len(data["results"])
    bad = copy.deepcopy(data["results"][0])
    variants = [
        ({**bad, "query_id": "bad-label", "answer2response": [E, "Maybe", N, N]}, ["answer2response[1]"]),
        ({k: v for k, v in bad.items() if k != "query_id"}, ["query_id"]),
        ({**{k: v for k, v in bad.items() if k != "retrieved_context"}, "query_id": "no-chunks"},
         ["retrieved_context"]),
        ({**bad, "query_id": "bad-claim", "response_claims": [["a", "b", "c"], 7, ["x"], ["y"]]},
         ["response_claims[1]"]),
        ({**bad}, ["query_id"]),  # a duplicate of results[0]
        ({**bad, "query_id": "bad-stakes-free"}, None),  # fine
        ("not an object", [""]),
    ]
    data["results"] += [item for item, _ in variants]
    conversion = ragchecker_results(data)
    expected = [fields for _, fields in variants if fields is not None]
    assert [problems(f) for f in conversion.failures] == expected
    assert len(conversion.records) + len(conversion.failures) == len(data["results"])
    assert len(conversion.records) == good + 1
    assert conversion.failures[0].error.record == f"results[{good}] (query_id=bad-label)"
    assert "duplicate query id" in conversion.failures[4].error.problems[0].message
    assert json.loads(conversion.failures[0].raw)["query_id"] == "bad-label"  # the query as sent


def test_interchange_refusals_are_failures_too():
    conversion = ragchecker_results(hand_built(), stakes="extreme")
    assert conversion.records == [] and {tuple(problems(f)) for f in conversion.failures} == {("stakes",)}


def test_not_ragchecker_at_all_is_an_error():
    with pytest.raises(RAGCheckError):
        ragchecker_results({"queries": []})


def test_iter_converted_keeps_input_order_for_the_importer():
    data = hand_built()
    data["results"].insert(1, {"query_id": "broken"})
    items = list(iter_converted(ragchecker_results(data)))
    assert [number for number, _, _ in items] == [1, 2, 3, 4, 5]
    assert isinstance(items[1][2], Exception) and isinstance(items[0][2], dict)


def test_responses_without_checks_are_refused_by_the_metrics():
    plain = parse_response({"response_id": "plain", "claims": [{"labels": ["SUPPORTED"]}]})
    assert not has_rag_checks(plain)
    with pytest.raises(RAGCheckError) as caught:
        metrics_from_responses([plain])
    assert caught.value.problems[0].loc.startswith("response_id=plain")


# --- RAGAS ----------------------------------------------------------------------------------------------

RAGAS = [
    {"user_input": "When is the refund deadline?", "retrieved_contexts": "['Refunds within 90 days.', 'Fees apply.']",
     "response": "Within 90 days.", "reference": "90 days after cancellation.", "faithfulness": 1.0,
     "context_precision": "0.5", "context_recall": 1.0, "answer_relevancy": 0.92},
    {"user_input": "Who is eligible?", "retrieved_contexts": '["Members only."]', "response": "Everyone.",
     "reference": "Members.", "faithfulness": 0.0, "context_precision": float("nan"), "context_recall": "",
     "answer_relevancy": 0.4},
    {"user_input": "Is it safe?", "retrieved_contexts": np.array(["Wear gloves."], dtype=object),
     "response": "Yes.", "reference": "With gloves.", "faithfulness": 0.5, "context_precision": 1.0,
     "context_recall": 0.0, "answer_relevancy": None},
]


def test_ragas_rows_become_records_and_a_metrics_table():
    conversion = ragas_rows(RAGAS, use_case="support", model="m1")
    assert conversion.failures == []
    assert conversion.metric_columns == ("faithfulness", "context_precision", "context_recall", "answer_relevancy")
    first = conversion.responses[0]
    assert (first.response_id, first.question, first.answer, first.gt_answer) == (
        "ragas-2", "When is the refund deadline?", "Within 90 days.", "90 days after cancellation.")
    assert [(c.id, c.text) for c in first.retrieved_context] == [("1", "Refunds within 90 days."), ("2", "Fees apply.")]
    assert first.claims == () and first.use_case == "support"
    assert conversion.responses[2].retrieved_context[0].text == "Wear gloves."
    assert [s.values for s in conversion.scores] == [
        {"faithfulness": 1.0, "context_precision": 0.5, "context_recall": 1.0, "answer_relevancy": 0.92},
        {"faithfulness": 0.0, "context_precision": None, "context_recall": None, "answer_relevancy": 0.4},
        {"faithfulness": 0.5, "context_precision": 1.0, "context_recall": 0.0, "answer_relevancy": None}]
    means = conversion.means()
    assert means["faithfulness"] == pytest.approx(0.5) and means["context_precision"] == pytest.approx(0.75)
    assert means["answer_relevancy"] == pytest.approx(0.66)


def test_ragas_bad_cells_are_reported_by_row_and_column():
    rows = copy.deepcopy(RAGAS[:2]) + [
        {"user_input": "q", "retrieved_contexts": "[unclosed", "response": "r", "faithfulness": "high",
         "context_precision": 42, "context_recall": 1, "answer_relevancy": 0.5},
        {"user_input": "q", "retrieved_contexts": "[1, 2]", "response": "r", "faithfulness": True,
         "context_precision": math.inf, "context_recall": 1, "answer_relevancy": 0.5},
    ]
    conversion = ragas_rows(rows)
    assert [f.error.record for f in conversion.failures] == ["row 4", "row 5"]
    assert [problems(f) for f in conversion.failures] == [
        ["retrieved_contexts", "faithfulness", "context_precision"],
        ["retrieved_contexts", "faithfulness", "context_precision"]]
    assert [s.row for s in conversion.scores] == [2, 3]  # bad rows are in neither table
    assert json.loads(conversion.failures[0].raw)["faithfulness"] == "high"


def test_ragas_legacy_columns_ids_and_record_fields():
    rows = [{"response_id": "a-1", "question": "q", "contexts": ["c"], "answer": "r", "ground_truth": "g",
             "stakes": "HIGH", "faithfulness": 0.3},
            {"response_id": "a-1", "question": "q2", "contexts": [], "answer": "r2", "faithfulness": 0.4},
            {"question": "q3", "contexts": [], "answer": "r3", "faithfulness": 0.4, "stakes": "unheard-of"}]
    conversion = ragas_rows(rows, first_row=1, id_prefix="file-")
    assert conversion.metric_columns == ("faithfulness",)
    (record,) = conversion.responses
    assert (record.response_id, record.question, record.gt_answer, record.stakes) == ("a-1", "q", "g", "high")
    assert [(f.line, problems(f)) for f in conversion.failures] == [(2, ["response_id"]), (3, ["stakes"])]
    assert conversion.failures[1].response_id == "file-3"


def test_ragas_metric_columns_can_be_chosen():
    rows = [{"user_input": "q", "response": "r", "faithfulness": 0.5, "latency_ms": 812}]
    assert problems(ragas_rows(rows).failures[0]) == ["latency_ms"]  # read as a score by default
    chosen = ragas_rows(rows, metric_columns=["faithfulness"])
    assert chosen.failures == [] and chosen.scores[0].values == {"faithfulness": 0.5}
