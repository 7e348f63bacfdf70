"""A judge never overwrites a person (issue 33, item 3): verifying stored answers that already have claims writes
proposals beside the current labels, never a new revision; an abstention is never a label; only a reviewer
starts such a run; a person's confirmation (with the criticality, category, source and span the form carries)
is what changes the claim, and it keeps every field it does not decide."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from hri_core.judging import Judge, Verdict, abstention
from register.errors import PermissionDenied
from register.verify.judge_cli import load_profile
from register.verify.proposals import Decision, decide_proposals, list_proposals
from register.verify.stored import verify_stored
from tests.helpers.actors import ANNOTATOR, REVIEWER, enrol
from tests.helpers.feedback import import_records

# an answer people adjudicated: the two claims the issue saw replaced by the judge's placeholder
ADJUDICATED = {
    "response_id": "r-adj", "question": "May a tenant withhold rent?", "use_case": "legal-aid", "model": "m-1",
    "created_at": "2026-10-01T08:00:00Z", "stakes": "high",
    "answer": "A tenant may always withhold rent. The landlord's file says so.",
    "retrieved_context": [{"id": "k1", "text": "Withholding rent is allowed only after notice.", "source_id": "law-1"}],
    "claims": [
        {"claim_id": "a1", "text": "A tenant may always withhold rent.", "labels": ["CONTRADICTED"],
         "criticality": 3, "category": "legal", "source_id": "law-1", "span": "allowed only after notice",
         "contradicted_by": "context", "is_core": True},
        {"claim_id": "a2", "text": "The landlord's file says so.", "labels": ["ACCESS_GAP"], "criticality": 3,
         "category": "legal", "source_id": "file-9", "span": "landlord file"},
    ]}


class AbstainingJudge(Judge):
    """A judge that abstains on every claim (an LLM that timed out, a backend that could not decide)."""

    def __init__(self) -> None:
        self.profile = load_profile("offline-default")

    def judge(self, claim: str, evidence: Sequence[str]) -> Verdict:
        return abstention(self.profile, "needs review: the judge could not decide")


@pytest.fixture
def adjudicated(store, tmp_path):
    enrol(store, REVIEWER)
    import_records(store, tmp_path, [ADJUDICATED], "adjudicated.jsonl")
    return store


def claims_now(store):
    return store.dicts("SELECT claim_id, labels, criticality, category, source_id, span FROM claims "
                       "WHERE is_current AND response_id = 'r-adj' ORDER BY claim_idx")


def score_now(store):
    return store.one("SELECT revision, score, band, action FROM current_scores WHERE response_id = 'r-adj'")


def test_an_abstaining_judge_leaves_adjudicated_labels_and_the_score_as_they_are(adjudicated):
    claims, score = claims_now(adjudicated), score_now(adjudicated)
    assert score["band"] != "Low"
    report = verify_stored(adjudicated, REVIEWER, ["r-adj"], AbstainingJudge())
    assert claims_now(adjudicated) == claims  # CONTRADICTED 3 and ACCESS_GAP 3 stay, with source and span
    assert score_now(adjudicated) == score  # no new revision, no new score: still in the review queue
    assert (report.kept, report.batch_id, report.proposed, report.applied) == (1, None, 2, 0)
    proposals = list_proposals(adjudicated, response_id="r-adj")
    assert [(p["claim_id"], p["label"], p["abstained"], p["criticality"], p["category"]) for p in proposals] == \
        [("a1", None, True, 3, "legal"), ("a2", None, True, 3, "legal")]


def test_only_a_reviewer_starts_a_run_over_answers_that_have_claims(adjudicated):
    runs = adjudicated.scalar("SELECT count(*) FROM verification_runs")
    with pytest.raises(PermissionDenied):
        verify_stored(adjudicated, ANNOTATOR, ["r-adj"], AbstainingJudge())
    assert adjudicated.scalar("SELECT count(*) FROM verification_runs") == runs
    assert claims_now(adjudicated)[0]["labels"] == ["CONTRADICTED"]


def test_confirming_sets_what_the_person_chose_and_keeps_the_rest(adjudicated):
    verify_stored(adjudicated, REVIEWER, ["r-adj"], AbstainingJudge())
    first, second = list_proposals(adjudicated, response_id="r-adj")
    decide_proposals(adjudicated, REVIEWER, [
        Decision(first["proposal_id"], "confirm", label="CONTRADICTED"),
        Decision(second["proposal_id"], "confirm", label="UNSUPPORTED", criticality=4, category="compliance",
                 source_id="law-1", span="only after notice")])
    a1, a2 = claims_now(adjudicated)
    # the criticality the person did not change is the stored one, never a placeholder 1
    assert (a1["labels"], a1["criticality"], a1["category"], a1["source_id"], a1["span"]) == \
        (["CONTRADICTED"], 3, "legal", "law-1", "allowed only after notice")
    assert (a2["labels"], a2["criticality"], a2["category"], a2["source_id"], a2["span"]) == \
        (["UNSUPPORTED"], 4, "compliance", "law-1", "only after notice")
    raw = json.loads(adjudicated.scalar("SELECT raw FROM responses WHERE is_current AND response_id = 'r-adj'"))
    assert raw["claims"][0]["contradicted_by"] == "context" and raw["claims"][0]["is_core"] is True
    assert raw["retrieved_context"] == ADJUDICATED["retrieved_context"]
