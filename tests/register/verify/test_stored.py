"""Verifying answers already in the register (the console's "Verify stored answers"): the same pipeline as a
file, fed from the current revisions; the verified revision keeps the answer's time, use case and model; an
answer the pipeline cannot take is named and the others go through; roles checked."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor
from register.errors import NotFound, PermissionDenied, RegisterError
from register.ingest.importer import import_path
from register.verify.judge_cli import judge_for, load_profile
from register.verify.proposals import list_proposals
from register.verify.stored import MAX_SELECTION, candidates, stored_inputs, verify_stored
from tests.helpers.actors import ANNOTATOR, REVIEWER, enrol

VIEWER = Actor("Vic Viewer", "viewer")

NILE = {"response_id": "r-nile", "question": "Where does the Nile flow?", "use_case": "geography",
        "model": "m-1", "created_at": "2026-10-01T08:00:00Z", "stakes": "low",
        "answer": "The Nile flows into the Mediterranean Sea. Bananas are the largest export of Egypt.",
        "retrieved_context": [{"id": "k1", "text": "The Nile flows north and flows into the Mediterranean Sea."}],
        "gt_answer": "The Nile flows into the Mediterranean Sea.", "claims": []}
LABELLED = {"response_id": "r-done", "answer": "Paris is the capital of France.", "created_at": "2026-09-01T00:00:00Z",
            "claims": [{"claim_id": "p1", "text": "Paris is the capital of France.", "labels": ["SUPPORTED"]}]}
BLANK = {"response_id": "r-blank", "answer": "", "claims": []}


@pytest.fixture
def stored(store, tmp_path):
    enrol(store, VIEWER, REVIEWER)
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (NILE, LABELLED, BLANK)))
    import_path(store, SYSTEM, path)
    return store


def judge():
    return judge_for(load_profile("offline-default"))


def test_answers_without_claims_are_offered_and_with_claims_only_when_asked(stored):
    assert candidates(stored)["response_id"].tolist() == ["r-nile"]  # a blank answer has nothing to verify
    both = candidates(stored, with_claims=True)
    assert both["response_id"].tolist() == ["r-nile", "r-done"]
    assert both.set_index("response_id").loc["r-nile", "context_chunks"] == 1


def test_a_stored_answer_is_verified_into_its_next_revision_keeping_what_it_was(stored):
    report = verify_stored(stored, ANNOTATOR, ["r-nile"], judge())
    assert (report.responses, report.claims, report.problems) == (1, 2, [])
    row = stored.one("SELECT revision, use_case, model, stakes, created_at, claim_count, gt_answer FROM responses "
                     "WHERE is_current AND response_id = 'r-nile'")
    assert (row["revision"], row["use_case"], row["model"], row["stakes"], row["claim_count"]) == \
        (2, "geography", "m-1", "low", 2)
    assert row["created_at"].isoformat().startswith("2026-10-01T08:00:00") and row["gt_answer"] == NILE["gt_answer"]
    proposals = list_proposals(stored, response_id="r-nile")
    assert [p["claim_text"] for p in proposals][0] == "The Nile flows into the Mediterranean Sea."
    assert proposals[0]["label"] == "SUPPORTED" and proposals[0]["status"] == "proposed"
    assert stored.scalar("SELECT source_name FROM import_batches WHERE batch_id = ?", [report.batch_id]) \
        .startswith("verification run")


def test_an_answer_the_pipeline_cannot_take_is_named_and_the_others_go_through(stored):
    inputs, problems = stored_inputs(stored, ["r-blank", "r-done"])
    assert [i.response_id for i in inputs] == ["r-done"]
    assert problems == ["response r-blank: answer: required: a non-empty string"]
    report = verify_stored(stored, REVIEWER, ["r-blank", "r-done"], judge())  # r-done has claims: a reviewer's run
    assert report.responses == 1 and report.problems == problems
    with pytest.raises(RegisterError, match="none of the chosen answers can be verified: response r-blank"):
        verify_stored(stored, ANNOTATOR, ["r-blank"], judge())


def test_unknown_ids_too_many_or_none_are_refused_before_anything_is_written(stored):
    batches = stored.scalar("SELECT count(*) FROM import_batches")
    with pytest.raises(NotFound, match="r-nowhere"):
        verify_stored(stored, ANNOTATOR, ["r-nile", "r-nowhere"], judge())
    with pytest.raises(RegisterError, match="at most"):
        verify_stored(stored, ANNOTATOR, [f"r-{i}" for i in range(MAX_SELECTION + 1)], judge())
    with pytest.raises(RegisterError, match="at least one"):
        verify_stored(stored, ANNOTATOR, [], judge())
    assert stored.scalar("SELECT count(*) FROM import_batches") == batches


def test_a_viewer_may_not_verify(stored):
    with pytest.raises(PermissionDenied):
        verify_stored(stored, VIEWER, ["r-nile"], judge())
    assert stored.scalar("SELECT max(revision) FROM responses WHERE response_id = 'r-nile'") == 1
