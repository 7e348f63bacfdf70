"""The search index's catch-up in the background (``register.readmodels.search_catchup``): one thread per store,
started once; while it runs, an import that leaves the index to it (the console's: ``defer_index=None``) and every
revision made in the register -- adjudication, feedback, verification, a quarantine fix -- hand the catch-up to it,
and it indexes them in slices of their own transactions (audited as its actor, not the writer's); it stops cleanly
between slices."""

from __future__ import annotations

import json
import threading

import pytest

from hri_core import parse_response
from register import SYSTEM, Actor, Store
from register.access.permissions import Permission
from register.feedback import items as feedback
from register.ingest.importer import import_path, reimport_quarantined
from register.ingest.quarantine import quarantine_rows
from register.ingest.reports import DEFERRED, INDEXED
from register.ingest.revise import REVISION_ORIGINS, revise_responses
from register.labels import adjudication, batches
from register.readmodels import response_ids, search_catchup, search_check, search_index
from register.readmodels.search_catchup import INDEX_ACTOR, BackgroundIndexer
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import VerifyInput, read_inputs, verify
from tests.helpers.actors import ANNOTATOR, enrol
from tests.helpers.feedback import import_records, two_claims
from tests.helpers.labelling import AGREED, ANNA, BEN, RITA, label_all, labelling_store

VERA = Actor("Vera Viewer", "viewer")
ROB = Actor("Rob Reviewer", "reviewer")
WAIT = 60.0  # seconds a test waits for the thread (it takes well under one)


@pytest.fixture
def indexer(store):
    """The background indexer of ``store``, looking only when woken (a poll of an hour), stopped at the end."""
    running = search_catchup.start_indexer(store, poll_seconds=3600, slice_keys=5)
    assert running.wait_caught_up(WAIT)  # its first pass: nothing to do
    yield running
    running.stop()


def _threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("hri-search-index:")]


def _indexed_in_background(store: Store, indexer: BackgroundIndexer, response_id: str, word: str) -> None:
    """Once the indexer has caught up: the current revision of ``response_id`` is in the index with ``word``, put
    there by the indexer's own slice (audited as ``INDEX_ACTOR``), not by the writer."""
    assert indexer.wait_caught_up(WAIT)
    key = store.scalar("SELECT response_key FROM responses WHERE is_current AND response_id = ?", [response_id])
    state = search_index.state(store)
    assert (state.pending, state.indexed_through) == (0, response_ids.largest_key(store))
    assert store.scalar("SELECT count(*) FROM search_postings JOIN search_words USING (word_id) "
                        "WHERE response_key = ? AND word = ?", [key, word.lower()]) == 1
    slices = store.query("SELECT actor_name, before, after FROM audit_events WHERE action = 'search.indexed'")
    [actor] = [name for name, before, after in slices
               if json.loads(before or '{"indexed_through": 0}')["indexed_through"] < key
               <= json.loads(after)["indexed_through"]]
    assert actor == INDEX_ACTOR.name
    assert search_check.check(store) == []


def test_the_indexer_is_started_once_per_store_and_stops_cleanly(store):
    first = search_catchup.start_indexer(store, poll_seconds=3600)
    try:
        assert search_catchup.start_indexer(store, poll_seconds=3600) is first
        assert first.running and len(_threads()) == 1
        assert search_catchup.running_indexer(store) is first
    finally:
        first.stop()
    assert not first.running and _threads() == []
    assert search_catchup.running_indexer(store) is None
    assert not search_catchup.hand_over(store)  # nobody to hand over to: the writer indexes itself


def test_an_import_hands_the_index_to_the_running_indexer(store, tmp_path, indexer):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps({**two_claims(f"r{i}"), "answer": "A tacit renewal."}) + "\n"
                            for i in range(23)), encoding="utf-8")
    report = import_path(store, SYSTEM, path, defer_index=None)  # as the console imports
    assert report.search_index == DEFERRED and report.batches[0].scored == 23
    _indexed_in_background(store, indexer, "r22", "tacit")
    # 23 keys in slices of 5: five transactions of the indexer's own
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'search.indexed' AND actor_name = ?",
                        [INDEX_ACTOR.name]) == 5
    assert indexer.indexed == 23


def test_without_a_running_indexer_the_consoles_import_indexes_before_its_report(store, tmp_path):
    import_records(store, tmp_path, [two_claims("r1")])  # imported as the console would, none running
    report = import_path(store, SYSTEM, tmp_path / "feedback-seed.jsonl", defer_index=None)
    assert report.search_index == INDEXED and search_index.lag(store) is None


def test_the_indexer_catches_up_what_a_deferred_import_left_when_it_starts(store, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(two_claims(f"r{i}")) + "\n" for i in range(12)), encoding="utf-8")
    assert import_path(store, SYSTEM, path, defer_index=True).search_index == DEFERRED  # none running: left behind
    assert search_index.state(store).pending == 12
    started = search_catchup.start_indexer(store, poll_seconds=3600, slice_keys=5)
    try:
        _indexed_in_background(store, started, "r11", "renewal")
    finally:
        started.stop()


def test_stop_ends_the_thread_between_two_slices(store, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(two_claims(f"r{i}")) + "\n" for i in range(40)), encoding="utf-8")
    import_path(store, SYSTEM, path, defer_index=True)
    stopped = BackgroundIndexer(store, poll_seconds=3600, slice_keys=3)
    first_slice, asked = threading.Event(), []
    original = stopped.catch_up_once

    def held_after_one_slice() -> int:  # the pass's first slice commits, then it waits for the stop to come
        def stopping() -> bool:
            asked.append(1)
            if len(asked) == 2:
                first_slice.set()
                stopped._stop.wait(WAIT)  # stop() sets it, then joins the thread
            return stopped._stop.is_set()

        return search_index.catch_up(store, stopped.actor, slice_keys=stopped.slice_keys, stopping=stopping)

    stopped.catch_up_once = held_after_one_slice  # type: ignore[method-assign]
    stopped.start()
    assert first_slice.wait(WAIT)
    stopped.stop(timeout=WAIT)
    assert not stopped.running and _threads() == []
    assert search_index.state(store).indexed_through == 3  # one slice of 3 keys: the rest waits, searched by scan
    assert search_check.check(store) == []
    stopped.catch_up_once = original  # type: ignore[method-assign]
    stopped.start()  # started again, it takes the rest
    try:
        assert stopped.wait_caught_up(WAIT)
        assert search_index.state(store).pending == 0 and stopped.indexed == 37
    finally:
        stopped.stop()


@pytest.mark.parametrize("origin", REVISION_ORIGINS)
def test_a_revision_made_in_the_register_reaches_the_index_in_the_background(store, tmp_path, indexer, origin):
    import_records(store, tmp_path, [two_claims("r1")])
    assert indexer.wait_caught_up(WAIT)
    changed = parse_response({**two_claims("r1"), "answer": "It ends in 2027. Renewal is tacit."})
    batch = revise_responses(store, SYSTEM, [changed], origin=origin, subject=f"{origin} of r1",
                             permission=Permission.IMPORT)
    assert batch.new_revisions == 1
    _indexed_in_background(store, indexer, "r1", "tacit")


def test_validated_feedback_reaches_the_index_in_the_background(store, tmp_path, indexer):
    enrol(store, VERA, ROB)
    import_records(store, tmp_path, [two_claims("r1")])
    item = feedback.report_feedback(store, VERA, "r1", "Renewal needs a written notice.", 0.8, claim_id="c2")
    assert feedback.validate_feedback(store, ROB, item, "source_check", severity=0.6) == 2
    _indexed_in_background(store, indexer, "r1", "renewal")


def test_a_verified_answer_reaches_the_index_in_the_background(store, indexer):
    enrol(store, ANNOTATOR)
    nile = {"response_id": "r-nile", "question": "Where does the Nile flow?",
            "answer": "The Nile flows into the Mediterranean Sea.",
            "retrieved_context": ["The Nile flows north into the Mediterranean Sea at Alexandria."]}
    inputs = [i for i in read_inputs([json.dumps(nile)]) if isinstance(i, VerifyInput)]
    verify(store, ANNOTATOR, inputs, judge_for(load_profile("offline-default")), source_name="nile.jsonl")
    _indexed_in_background(store, indexer, "r-nile", "mediterranean")


def test_a_fixed_quarantined_record_reaches_the_index_in_the_background(store, tmp_path, indexer):
    record = {"response_id": "q-1", "answer": "The warranty lapses quietly.",
              "claims": [{"claim_id": "a", "text": "The warranty lapses.", "labels": ["NOT_A_LABEL"]}]}
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, path)
    [row] = quarantine_rows(store)
    fixed = {**record, "claims": [{**record["claims"][0], "labels": ["SUPPORTED"]}]}
    assert reimport_quarantined(store, SYSTEM, row["quarantine_id"], json.dumps(fixed)).search_index == DEFERRED
    _indexed_in_background(store, indexer, "q-1", "quietly")


def test_adjudicated_revisions_reach_the_index_in_the_background(tmp_path):
    lab = labelling_store(tmp_path)
    running = search_catchup.start_indexer(lab, poll_seconds=3600, slice_keys=5)
    try:
        batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)),
                                        ["anna", "ben"])
        for actor in (ANNA, BEN):
            label_all(lab, batch_id, actor, AGREED)
        label_all(lab, batch_id, ANNA, {("r1", "r1-2"): {"labels": ["CONTRADICTED"], "criticality": 3}})
        label_all(lab, batch_id, BEN, {("r1", "r1-2"): {"labels": ["PARTIAL"], "criticality": 2}})
        assert adjudication.apply_resolved(lab, RITA, batch_id).applied == ["r2"]  # agreed: an annotation
        _indexed_in_background(lab, running, "r2", "certification")
        report = adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="expert", reason="Mon-Fri only",
                                         labels=["CONTRADICTED"], criticality=3)
        assert report.new_revisions == 1
        _indexed_in_background(lab, running, "r1", "expires")
    finally:
        running.stop()
        lab.close()
