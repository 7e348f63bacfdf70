"""The workbench's queue of judge proposals: which responses wait, and what a person sees of one (the answer,
its context and every waiting proposal with its provenance); annotators only."""

from __future__ import annotations

import pytest

from register import Actor
from register.errors import NotFound, PermissionDenied
from register.verify.proposals import Decision, decide_proposals, list_proposals, proposal_item, proposal_responses
from tests.helpers.actors import ANNOTATOR, enrol
from tests.register.verify.test_pipeline import NILE, run

DANUBE = {"response_id": "r-danube", "question": "Where does the Danube flow?",
          "answer": "The Danube flows into the Black Sea.",
          "retrieved_context": [{"id": "d1", "text": "The Danube flows east into the Black Sea.",
                                 "source_id": "atlas"}]}


def test_the_queue_lists_each_response_with_waiting_proposals_newest_run_first(store):
    run(store, NILE)
    run(store, DANUBE)
    queue = proposal_responses(store, ANNOTATOR)
    assert [(r["response_id"], r["proposals"]) for r in queue] == [("r-danube", 1), ("r-nile", 2)]
    nile = next(r for r in queue if r["response_id"] == "r-nile")
    assert nile["unlinked"] == 1  # the bananas claim has no span in the Nile's context
    first, second = list_proposals(store, response_id="r-nile")
    decide_proposals(store, ANNOTATOR, [Decision(first["proposal_id"], "reject")])
    assert [(r["response_id"], r["proposals"]) for r in proposal_responses(store, ANNOTATOR)] \
        == [("r-danube", 1), ("r-nile", 1)]
    decide_proposals(store, ANNOTATOR, [Decision(second["proposal_id"], "reject")])
    assert [r["response_id"] for r in proposal_responses(store, ANNOTATOR)] == ["r-danube"]


def test_an_item_shows_the_answer_its_context_and_each_proposal_with_its_provenance(store):
    report = run(store, DANUBE)
    item = proposal_item(store, ANNOTATOR, "r-danube")
    assert (item["question"], item["answer"]) == (DANUBE["question"], DANUBE["answer"])
    assert item["context"] == [{"id": "d1", "text": DANUBE["retrieved_context"][0]["text"], "source_id": "atlas"}]
    (proposal,) = item["proposals"]
    assert proposal["claim_text"] == "The Danube flows into the Black Sea."
    assert (proposal["judge_profile"], proposal["backend"], proposal["run_id"]) == ("offline-default@2",
                                                                                   "offline-lexical", report.run_id)
    assert (proposal["run_source"], proposal["run_by"]) == ("t.jsonl", ANNOTATOR.name)
    assert proposal["run_started_at"] is not None and "Black Sea" in proposal["span"]


def test_decided_proposals_leave_the_item(store):
    run(store, NILE)
    nile, bananas = proposal_item(store, ANNOTATOR, "r-nile")["proposals"]
    decide_proposals(store, ANNOTATOR, [Decision(nile["proposal_id"], "confirm")])
    assert [p["proposal_id"] for p in proposal_item(store, ANNOTATOR, "r-nile")["proposals"]] \
        == [bananas["proposal_id"]]


def test_a_viewer_may_not_open_the_queue_and_an_unknown_response_is_named(store):
    run(store, NILE)
    viewer = Actor("vic", "viewer")
    enrol(store, viewer)
    with pytest.raises(PermissionDenied):
        proposal_responses(store, viewer)
    with pytest.raises(PermissionDenied):
        proposal_item(store, viewer, "r-nile")
    with pytest.raises(NotFound, match="r-missing"):
        proposal_item(store, ANNOTATOR, "r-missing")
