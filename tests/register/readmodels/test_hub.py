"""The read models' hub (``register.readmodels.hub``): every path that writes revisions ends with them in the search
index -- an import, a quarantine fix, and the revisions made in the register (adjudication, annotation, feedback,
verification) -- so that the console's search finds them through the index, not by scanning what the index has not
caught up with; ``check`` names every read model that differs from what it is computed from, and ``rebuild`` makes
them again."""

from __future__ import annotations

import json

import pytest

from hri_core import parse_response
from register import SYSTEM, Actor, Store
from register.access.permissions import Permission
from register.console.queries.explorer import responses_page
from register.console.queries.filters import Filters
from register.db.sql import Params
from register.errors import PermissionDenied
from register.feedback import items as feedback
from register.ingest.importer import import_path, reimport_quarantined
from register.ingest.quarantine import quarantine_rows
from register.ingest.revise import REVISION_ORIGINS, revise_responses
from register.labels import adjudication, batches
from register.readmodels import hub, response_ids, search_index
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import VerifyInput, read_inputs, verify
from tests.helpers.actors import ANNOTATOR, enrol
from tests.helpers.feedback import import_records, two_claims
from tests.helpers.labelling import AGREED, ANNA, BEN, RITA, label_all, labelling_store

VERA = Actor("Vera Viewer", "viewer")
ROB = Actor("Rob Reviewer", "reviewer")


def _found_through_the_index(store: Store, response_id: str, word: str) -> None:
    """The current revision of ``response_id`` is in the search index with ``word`` among its words (the index has
    caught up with every revision), and the console's search for ``word`` finds the response from the index."""
    key = store.scalar("SELECT response_key FROM responses WHERE is_current AND response_id = ?", [response_id])
    state = search_index.state(store)
    assert (state.pending, state.indexed_through) == (0, response_ids.largest_key(store))
    assert store.scalar("SELECT count(*) FROM search_postings JOIN search_words USING (word_id) "
                        "WHERE response_key = ? AND word = ?", [key, word.lower()]) == 1
    found = search_index.lookup(store, word, Params())
    assert found is not None and found.exact and found.indexed_through >= key
    page, _ = responses_page(store, Filters(), search=word)
    assert response_id in page["response_id"].tolist()


@pytest.mark.parametrize("origin", REVISION_ORIGINS)
def test_a_revision_made_in_the_register_is_found_through_the_search_index(store, tmp_path, origin):
    import_records(store, tmp_path, [two_claims("r1")])
    changed = parse_response({**two_claims("r1"), "answer": "It ends in 2027. Renewal is tacit."})
    batch = revise_responses(store, SYSTEM, [changed], origin=origin, subject=f"{origin} of r1",
                             permission=Permission.IMPORT)
    assert batch.new_revisions == 1
    _found_through_the_index(store, "r1", "tacit")


def test_validated_feedback_is_found_through_the_search_index(store, tmp_path):
    enrol(store, VERA, ROB)
    import_records(store, tmp_path, [two_claims("r1")])
    item = feedback.report_feedback(store, VERA, "r1", "Renewal needs a written notice.", 0.8, claim_id="c2")
    assert feedback.validate_feedback(store, ROB, item, "source_check", severity=0.6) == 2
    _found_through_the_index(store, "r1", "renewal")


def test_a_verified_answer_is_found_through_the_search_index(store):
    enrol(store, ANNOTATOR)
    nile = {"response_id": "r-nile", "question": "Where does the Nile flow?",
            "answer": "The Nile flows into the Mediterranean Sea.",
            "retrieved_context": ["The Nile flows north into the Mediterranean Sea at Alexandria."]}
    inputs = [i for i in read_inputs([json.dumps(nile)]) if isinstance(i, VerifyInput)]
    verify(store, ANNOTATOR, inputs, judge_for(load_profile("offline-default")), source_name="nile.jsonl")
    _found_through_the_index(store, "r-nile", "mediterranean")


def test_a_fixed_quarantined_record_is_found_through_the_search_index(store, tmp_path):
    record = {"response_id": "q-1", "answer": "The warranty lapses quietly.",
              "claims": [{"claim_id": "a", "text": "The warranty lapses.", "labels": ["NOT_A_LABEL"]}]}
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, path)
    [row] = quarantine_rows(store)
    fixed = {**record, "claims": [{**record["claims"][0], "labels": ["SUPPORTED"]}]}
    reimport_quarantined(store, SYSTEM, row["quarantine_id"], json.dumps(fixed))
    _found_through_the_index(store, "q-1", "quietly")


def test_annotated_and_adjudicated_revisions_are_found_through_the_search_index(tmp_path):
    lab = labelling_store(tmp_path)
    try:
        batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)),
                                        ["anna", "ben"])
        for actor in (ANNA, BEN):
            label_all(lab, batch_id, actor, AGREED)
        label_all(lab, batch_id, ANNA, {("r1", "r1-2"): {"labels": ["CONTRADICTED"], "criticality": 3}})
        label_all(lab, batch_id, BEN, {("r1", "r1-2"): {"labels": ["PARTIAL"], "criticality": 2}})
        assert adjudication.apply_resolved(lab, RITA, batch_id).applied == ["r2"]  # agreed: an annotation
        _found_through_the_index(lab, "r2", "certification")
        report = adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="expert", reason="Mon-Fri only",
                                         labels=["CONTRADICTED"], criticality=3)
        assert report.new_revisions == 1
        _found_through_the_index(lab, "r1", "expires")
        assert hub.check(lab) == []
    finally:
        lab.close()


def _sourced(response_id: str) -> dict:
    record = two_claims(response_id)
    return {**record, "claims": [{**record["claims"][0], "source_id": "src-1"}, record["claims"][1]]}


@pytest.mark.tampers
def test_check_names_each_read_model_that_differs_and_rebuild_makes_them_again(store, tmp_path):
    import_records(store, tmp_path, [_sourced("r1"), _sourced("r2")])
    assert hub.check(store) == []
    with store.cursor() as cur:
        cur.execute("DELETE FROM current_scores WHERE response_id = 'r1'")
        cur.execute("DELETE FROM claim_source_counts")
        cur.execute("DELETE FROM search_postings WHERE response_key = (SELECT min(response_key) FROM responses)")
        cur.execute("DELETE FROM response_ids WHERE id_hash = md5_number_lower('r2')")
    problems = hub.check(store)
    assert {problem.split(":")[0] for problem in problems} == {"current_scores", "claim_counts", "search_index",
                                                               "response_ids"}
    assert any(p.startswith("search_index: ") and "not in the index" in p for p in problems)
    with store.cursor() as cur:  # response_ids has no rebuild: put its row back as the importer wrote it
        cur.execute("INSERT INTO response_ids SELECT md5_number_lower(response_id), response_key FROM responses "
                    "WHERE response_id = 'r2'")
    hub.rebuild(store, SYSTEM)
    assert hub.check(store) == []
    state = search_index.state(store)
    assert (state.indexed_through, state.pending) == (response_ids.largest_key(store), 0)
    assert search_index.search_select(store, "renewal", Params()) is not None
    page, _ = responses_page(store, Filters(), search="renewal")
    assert sorted(page["response_id"]) == ["r1", "r2"]
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'readmodels.rebuilt'") == 1


def test_rebuild_needs_the_rescore_permission(store):
    enrol(store, ANNOTATOR)
    with pytest.raises(PermissionDenied):
        hub.rebuild(store, ANNOTATOR)
