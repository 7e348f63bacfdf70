"""The critical-information report (seed 003): the fraction of response claims that are both unsupported by the
retrieved references and incorrect with respect to the target, per question and per run, beside the share of
questions with any such claim; a claim the judge could not decide is counted apart, never as fine."""

from __future__ import annotations

import pytest

from register import SYSTEM
from register.db.store import Change, utc_now
from register.verify.testsets import critical_report

# (question, claim verdict against the references, verdict against the target); None: the judge abstained
CLAIMS = [
    ("q1", "UNSUPPORTED", "CONTRADICTED"),   # unsupported and incorrect: hallucinated
    ("q1", "SUPPORTED", "SUPPORTED"),        # faithful
    ("q1", "UNSUPPORTED", "SUPPORTED"),      # self-knowledge: unsupported but correct, not a hallucination
    ("q1", "SUPPORTED", "CONTRADICTED"),     # supported by a noisy reference: noise sensitivity, not a hallucination
    ("q2", "CONTRADICTED", "UNSUPPORTED"),   # hallucinated
    ("q2", "CONTRADICTED", "CONTRADICTED"),  # hallucinated
    ("q3", "SUPPORTED", None),               # supported: fine, whatever the target says
    ("q3", None, None),                      # undecided
    ("q4", "UNSUPPORTED", None),             # unsupported, correctness unknown: undecided
    ("q4", None, "SUPPORTED"),               # correct: not a hallucination, whatever the references say
    ("q5", "UNSUPPORTED", "CONTRADICTED"),   # a question in no critical category: not in the report
    ("q6", "UNSUPPORTED", "SUPPORTED"),      # "correct" from an offline judge, which never clears a critical claim
]
OFFLINE = {"q6"}
VERIFICATION_RUN = 7


@pytest.fixture
def judged(store):
    def write(tx):
        tx.execute("INSERT INTO test_set_runs VALUES (1, 'critical', 1, 'assistant-a', ?, 'ann', ?, 5, 2)",
                   [utc_now(), VERIFICATION_RUN])
        for index, (question, label, target) in enumerate(CLAIMS):
            tx.execute("""
                INSERT INTO judge_proposals (proposal_id, run_id, response_id, claim_idx, claim_id, claim_text,
                    category, stakes, criticality, link_score, unlinked, label, confidence, abstained, reason,
                    target_label, backend, judge_profile, status, created_at)
                VALUES (?, ?, ?, ?, ?, 'a claim', ?, NULL, 3, 1.0, false, ?, 0.9, ?, 'r', ?, ?, 'test@1',
                        'proposed', ?)""",
                       [index + 1, VERIFICATION_RUN, question, index, f"c{index}",
                        "general" if question == "q5" else "financial", label, label is None, target,
                        "offline-overlap" if question in OFFLINE else "llm", utc_now()])
        return Change("test_set_run", "1")

    store.write(SYSTEM, "test.judged", write)
    return store


def test_the_report_gives_seed_003s_fraction_of_claims_per_question_and_overall(judged):
    (run,) = critical_report(judged, "critical")
    questions = {q["response_id"]: q for q in run["questions"]}
    assert sorted(questions) == ["q1", "q2", "q3", "q4", "q6"]
    per_question = {rid: (q["claims"], q["hallucinated_claims"], q["undecided_claims"], q["hallucination"],
                          q["hallucination_at_most"]) for rid, q in questions.items()}
    assert per_question == {"q1": (4, 1, 0, 0.25, 0.25), "q2": (2, 2, 0, 1.0, 1.0), "q3": (2, 0, 1, 0.0, 0.5),
                            "q4": (2, 0, 1, 0.0, 0.5), "q6": (1, 0, 1, 0.0, 1.0)}
    assert (run["critical_questions"], run["claims"], run["hallucinated_claims"], run["undecided_claims"]) == \
        (5, 11, 3, 3)
    # overall: the mean over questions of each one's fraction, as RAGChecker aggregates its hallucination
    assert run["hallucination"] == pytest.approx((0.25 + 1.0 + 0.0 + 0.0 + 0.0) / 5)
    # an undecided claim never reads as fine: the rate if each were hallucinated is beside it
    assert run["hallucination_at_most"] == pytest.approx((0.25 + 1.0 + 0.5 + 0.5 + 1.0) / 5)
    # beside it, the share of questions with any such claim; undecided questions need review, never count as fine
    assert (run["hallucinated"], run["needs_review"], run["question_share"]) == (2, 3, 0.4)
    assert run["unanswered"] == 2
