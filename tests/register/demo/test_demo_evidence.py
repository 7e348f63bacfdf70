"""The demo gives the Evidence page real figures: answers checked by RAGChecker whose HRI ranks as RAGChecker's
hallucination does, and review decisions enough for a weight fit from the register's outcomes."""

from __future__ import annotations

import json

from register import SYSTEM
from register.demo import DATA_DIR, seed_demo
from register.demo.outcomes import RAG_OPTIONS, RAG_QUERIES, _factcheck_verdicts, write_ragchecker_results
from register.evidence.rag_agreement import rag_agreement
from register.scoring.calibration import outcome_pairs


def test_the_ragchecker_file_is_deterministic_and_well_formed(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, again = write_ragchecker_results(tmp_path / "a"), write_ragchecker_results(tmp_path / "b")
    assert first.read_bytes() == again.read_bytes()
    results = json.loads(first.read_text(encoding="utf-8"))["results"]
    assert len(results) == RAG_QUERIES
    for query in results:
        claims, targets, chunks = query["response_claims"], query["gt_answer_claims"], query["retrieved_context"]
        assert len(query["answer2response"]) == len(query["retrieved2response"]) == len(claims) >= 2
        assert len(query["response2answer"]) == len(query["retrieved2answer"]) == len(targets)
        assert all(len(row) == len(chunks) for row in query["retrieved2response"] + query["retrieved2answer"])


def test_the_hri_ranks_as_ragcheckers_hallucination_on_the_demo(demo_store):
    result = rag_agreement(demo_store, replicates=200, seed=1)
    rows = result.correlations.set_index("metric")
    assert result.answers == RAG_QUERIES
    assert rows.loc["hallucination", "low"] > 0.5  # the HRI and RAGChecker agree, interval clear of zero
    assert rows.loc["faithfulness", "high"] < 0
    assert rows["valid"].gt(0).all()  # every metric varies: each has a correlation
    ids = demo_store.frame("SELECT DISTINCT use_case, model FROM responses WHERE response_id LIKE 'rag:%'")
    assert ids.values.tolist() == [[RAG_OPTIONS.use_case, RAG_OPTIONS.model]]


def test_the_demo_has_outcomes_enough_for_a_weight_fit(demo_store):
    """Before, the demo had no outcome at all: no review decision, no calibration outcome."""
    pairs = outcome_pairs(demo_store)
    assert len(pairs) >= 20 and pairs["bad"].sum() >= 2 and (~pairs["bad"]).sum() >= 2
    verdicts = _factcheck_verdicts(DATA_DIR / "demo" / "factcheck_gpt.jsonl")
    assert len(pairs) == len(verdicts)
    bad = {r for r, decision, _ in verdicts if decision == "block"}
    assert set(pairs.loc[pairs["bad"], "response_id"]) == bad


def test_seeding_again_adds_no_ragchecker_answer_and_no_decision(demo_store):
    seed_demo(demo_store, SYSTEM)  # the template was seeded without the bound profiles and the feedback history
    counts = ("SELECT (SELECT count(*) FROM responses), (SELECT count(*) FROM review_decisions), "
              "(SELECT count(*) FROM feedback_items)")
    before = demo_store.query_one(counts)
    assert before[2] > 0
    summary = seed_demo(demo_store, SYSTEM)
    assert demo_store.query_one(counts) == before
    assert summary["ragchecker"] == summary["review_decisions"] == summary["feedback_resolved"] == 0
