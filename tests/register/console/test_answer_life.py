"""An answer's whole life in the audit trail (issue 33, item 9): one answer taken through import, revision by
adjudication, feedback, verification, a rescore and a review decision; searching its id finds every one of those
events, in time order with what each did to it, and no event that only concerned another answer."""

from __future__ import annotations

import pytest

from register import SYSTEM, Store
from register.console.answer_life import answer_events, names_answer, write_answer_events_csv
from register.console.review import record_decision
from register.db.audit import EventFilter, search_events
from register.feedback.items import report_feedback, validate_feedback
from register.ingest.importer import import_path
from register.labels import adjudication, batches
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.scorer import rescore
from register.verify.judge_cli import judge_for, load_profile
from register.verify.proposals import Decision, decide_proposals, list_proposals
from register.verify.stored import verify_stored
from tests.helpers.console_records import write_jsonl
from tests.helpers.labelling import ADA, AGREED, ANNA, BEN, RECORDS, RITA, VIEWER, label_all, labelling_store

CONTRADICTED = {"labels": ["CONTRADICTED"], "criticality": 3, "category": "contractual"}
PARTIAL = {"labels": ["PARTIAL"], "criticality": 2, "category": "contractual"}
# every score above 0 is Critical: a rescore under it changes the band and action of any answer with risk
ALL_CRITICAL = {"bands": [{"name": "Low", "upper": 0, "action": "release"},
                          {"name": "Critical", "upper": 100, "action": "block"}]}


@pytest.fixture
def lab(tmp_path, database_templates):
    """The labelling register (r1, r2 in one import batch, r3), a copy of the session's template."""
    def build(path) -> None:
        labelling_store(path.parent, path.name).close()

    store = Store(database_templates.copy("labelling", tmp_path / "labels.duckdb", build))
    yield store
    store.close()


def _seqs(store: Store, action: str, entity_type: str, entity_id, *, after: int = 0) -> set[int]:
    """The events of ``action`` filed under (``entity_type``, ``entity_id``) after event ``after``."""
    return {s for (s,) in store.query(
        "SELECT seq FROM audit_events WHERE action = ? AND entity_type = ? AND entity_id IS NOT DISTINCT FROM ? "
        "AND seq > ?", [action, entity_type, None if entity_id is None else str(entity_id), after])}


def _head(store: Store) -> int:
    return int(store.scalar("SELECT max(seq) FROM audit_events"))


def _batch_events(store: Store, batch_id: int) -> set[int]:
    return set().union(*(_seqs(store, action, "import_batch", batch_id)
                         for action in ("import.start", "import.chunk", "import.batch")))


def _band(store: Store, response_id: str) -> tuple[str, str]:
    return tuple(store.query_one("SELECT band, action FROM scores WHERE is_current AND response_id = ?",
                                 [response_id]))


def test_one_answer_is_found_through_import_labels_feedback_verification_rescore_and_review(lab, tmp_path):
    mine: dict[str, set[int]] = {}    # step -> the events of r1 it wrote
    others: dict[str, set[int]] = {}  # step -> events that concerned other answers only

    # import: the labelling register imported r1, r2, r3 in one batch; then a file of r3 alone
    (first_batch,) = [b for (b,) in lab.query("SELECT DISTINCT batch_id FROM responses WHERE response_id = 'r1'")]
    mine["import"] = _batch_events(lab, first_batch)
    mark = _head(lab)
    r3 = dict(RECORDS[2], answer="Everyone is eligible, says the handbook.")
    import_path(lab, SYSTEM, write_jsonl(tmp_path / "r3.jsonl", [r3]))
    (r3_batch,) = [b for (b,) in lab.query("SELECT batch_id FROM responses WHERE response_id = 'r3' AND is_current")]
    others["import of r3"] = _batch_events(lab, r3_batch)
    assert others["import of r3"] and all(s > mark for s in others["import of r3"])

    # labels: r1 and r2 drawn; r2 agreed and applied on its own; r1's claim adjudicated into its next revision
    label_batch = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)),
                                       ["anna", "ben"])
    for actor in (ANNA, BEN):
        label_all(lab, label_batch, actor, AGREED)
    label_all(lab, label_batch, ANNA, {("r1", "r1-2"): CONTRADICTED})
    label_all(lab, label_batch, BEN, {("r1", "r1-2"): PARTIAL})
    mark = _head(lab)
    assert adjudication.apply_resolved(lab, RITA, label_batch).applied == ["r2"]
    others["r2 applied"] = _seqs(lab, "label.apply", "label_batch", label_batch, after=mark) | set().union(*(
        _batch_events(lab, b) for (b,) in lab.query("SELECT batch_id FROM import_batches WHERE batch_id > ?",
                                                     [r3_batch])))
    mine["labels"] = (_seqs(lab, "label.batch_create", "label_batch", label_batch)
                      | set().union(*(_seqs(lab, "label.annotate", "annotation", f"{label_batch}/r1/{unit}")
                                      for unit in ("r1-1", "r1-2"))))
    others["r2 annotated"] = _seqs(lab, "label.annotate", "annotation", f"{label_batch}/r2/r2-1")
    mark = _head(lab)
    report = adjudication.adjudicate(lab, RITA, label_batch, "r1", "r1-2", rule="expert",
                                     reason="the contract gives Mon-Fri support", **CONTRADICTED)
    assert report.applied == ["r1"] and report.new_revisions == 1
    adjudicated_batch = lab.scalar("SELECT batch_id FROM responses WHERE response_id = 'r1' AND is_current")
    assert lab.scalar("SELECT format FROM import_batches WHERE batch_id = ?", [adjudicated_batch]) == \
        "revision:adjudication"
    mine["adjudication"] = (_seqs(lab, "label.adjudicate", "adjudication", f"{label_batch}/r1/r1-2")
                            | _seqs(lab, "label.apply", "label_batch", label_batch, after=mark)
                            | _batch_events(lab, adjudicated_batch))

    # feedback: reported by a viewer, validated by a reviewer (its next revision); one on r2 too
    mark = _head(lab)
    feedback = report_feedback(lab, VIEWER, "r1", "support hours are wrong", 0.8, claim_id="r1-1")
    validate_feedback(lab, RITA, feedback, "review")
    feedback_batch = lab.scalar("SELECT batch_id FROM responses WHERE response_id = 'r1' AND is_current")
    mine["feedback"] = (_seqs(lab, "feedback.report", "feedback", feedback)
                        | _seqs(lab, "feedback.validate", "feedback", feedback) | _batch_events(lab, feedback_batch))
    other_feedback = report_feedback(lab, VIEWER, "r2", "not certified", 0.5)
    others["r2 feedback"] = _seqs(lab, "feedback.report", "feedback", other_feedback)
    assert feedback_batch > adjudicated_batch and all(s > mark for s in mine["feedback"])

    # verification: r1 verified and one of its proposals decided; r2 verified and decided by the same person
    judge = judge_for(load_profile("offline-default"))
    runs = {}
    for rid in ("r1", "r2"):
        mark = _head(lab)
        verified = verify_stored(lab, RITA, [rid], judge)  # only reviewers verify answers that have claims
        proposal = list_proposals(lab, response_id=rid)[0]["proposal_id"]
        decide_proposals(lab, RITA, [Decision(proposal, "reject")])
        runs[rid] = (_seqs(lab, "verify.start", "verification_run", verified.run_id)
                     | _seqs(lab, "verify.proposals", "verification_run", verified.run_id)
                     | _seqs(lab, "judge_proposal.decide", "judge_proposal", None, after=mark)
                     | (_batch_events(lab, verified.batch_id) if verified.batch_id else set()))
    mine["verification"], others["r2 verification"] = runs["r1"], runs["r2"]
    assert len(mine["verification"]) >= 3

    # rescore: one that changes nothing of r1 (not part of its life), then one that changes its band and action
    unchanged = rescore(lab, ADA, get_profile(lab, lab.scalar(
        "SELECT profile_version FROM scoring_profiles WHERE status = 'active'")))
    others["rescore without change"] = _seqs(lab, "scores.rescore", "score_run", unchanged.run_id)
    before = _band(lab, "r1")
    version = create_draft(lab, ADA, ALL_CRITICAL)
    activate(lab, SYSTEM, version, "test: every risk is critical")
    changed = rescore(lab, ADA, get_profile(lab, version))
    assert _band(lab, "r1") != before and _band(lab, "r1") == ("Critical", "block")
    mine["rescore"] = _seqs(lab, "scores.rescore", "score_run", changed.run_id)

    # review decisions: r1's, and r3's
    revision = lab.scalar("SELECT revision FROM responses WHERE response_id = 'r1' AND is_current")
    record_decision(lab, RITA, "r1", revision, "block", "support hours contradict the contract")
    mine["review"] = _seqs(lab, "review.decide", "response", "r1")
    r3_revision = lab.scalar("SELECT revision FROM responses WHERE response_id = 'r3' AND is_current")
    record_decision(lab, RITA, "r3", r3_revision, "send_back", "ask the handbook's owner")
    others["r3 review"] = _seqs(lab, "review.decide", "response", "r3")

    assert names_answer(lab, "r1") and not names_answer(lab, "r-nobody")
    frame, total = answer_events(lab, "r1")
    found = frame["seq"].tolist()
    for step, seqs in mine.items():
        assert seqs, f"{step}: the test found no event to look for"
        assert seqs <= set(found), f"{step}: events {sorted(seqs - set(found))} of r1 are not found by its id"
    for step, seqs in others.items():
        assert seqs, f"{step}: the test found no event to look for"
        assert not seqs & set(found), f"{step}: events {sorted(seqs & set(found))} of another answer are found"
    assert total == len(found) and found == sorted(found)  # time order, oldest first
    assert frame["what_it_did"].notna().all()
    said = dict(zip(frame["seq"], frame["what_it_did"], strict=True))
    assert "adjudication of claim r1-2 by expert" in said[min(_seqs(lab, "label.adjudicate", "adjudication",
                                                                       f"{label_batch}/r1/r1-2"))]
    assert said[min(mine["rescore"])].startswith("scored revision") and "Critical, action block" in \
        said[min(mine["rescore"])]
    assert said[min(mine["review"])].startswith("review decision block on revision")
    assert f"stored revision {revision}" not in said[min(mine["import"])]  # the first batch stored revision 1

    # the page's other filters still apply; the exact-id search is still there for any record
    reviews, count = answer_events(lab, "r1", EventFilter(actions=("review.decide",)))
    assert set(reviews["seq"]) == mine["review"] and count == 1
    assert answer_events(lab, "r1", EventFilter(actor="anna"))[1] == len(
        [s for s in found if lab.scalar("SELECT actor_name FROM audit_events WHERE seq = ?", [s]) == "anna"])
    assert set(search_events(lab, EventFilter(entity_id="r1"))[0]["seq"]) == mine["review"]
    written = write_answer_events_csv(lab, "r1", EventFilter(), tmp_path / "life.csv")
    assert written.rows == total


def test_a_score_run_is_part_of_the_life_when_it_changes_the_band_action_or_decision(lab):
    profile = get_profile(lab, lab.scalar("SELECT profile_version FROM scoring_profiles WHERE status = 'active'"))
    same, again = rescore(lab, ADA, profile).run_id, rescore(lab, ADA, profile).run_id

    def runs() -> list[str]:
        frame = answer_events(lab, "r2", EventFilter(actions=("scores.rescore",)))[0]
        return frame["entity_id"].tolist()

    first = lab.scalar("SELECT min(run_id) FROM scores WHERE response_id = 'r2'")
    assert runs() == [str(first)]  # its first score; two rescores that changed nothing are not part of its life
    # a decision column (scores.decision, when the register has it) counts as the band and action do
    with lab.cursor() as cur:
        cur.execute("ALTER TABLE scores ADD COLUMN IF NOT EXISTS decision VARCHAR")
        cur.execute("UPDATE scores SET decision = CASE WHEN run_id = ? THEN 'review' ELSE 'release' END "
                    "WHERE response_id = 'r2'", [same])
    assert runs() == [str(first), str(same), str(again)]  # release -> review -> release
    said = answer_events(lab, "r2", EventFilter(actions=("scores.rescore",)))[0]["what_it_did"].tolist()
    assert "decision review (was " in said[1] and said[2].endswith("decision review)")


def test_records_filed_under_their_own_ids_are_found_through_their_tables(lab):
    from register.console.answer_life import ANSWER_RECORDS
    from register.db.store import Change

    record = ANSWER_RECORDS[0]
    assert (record.table, record.entity_type) == ("risk_acceptances", "risk_acceptance")
    lab.write(ADA, "risk.accept", lambda _tx: Change(record.entity_type, "7", None, {"state": "proposed"}))
    assert "risk.accept" not in answer_events(lab, "r1")[0]["action"].tolist()  # no row: nothing to find it by
    with lab.cursor() as cur:
        for acceptance_id, rid in ((7, "r1"), (8, "r2")):
            cur.execute("INSERT INTO risk_acceptances (acceptance_id, response_id, revision, response_key, "
                        "claims_hash, decision_at, release, reason, expires_on, proposed_by, proposed_role, "
                        "proposed_at, status) VALUES (?, ?, 1, 0, 'h', 'block', 'release', 'r', DATE '2027-01-01', "
                        "'ada', 'reviewer', now(), 'proposed')", [acceptance_id, rid])
    frame = answer_events(lab, "r1")[0]
    (said,) = frame.loc[frame["action"] == "risk.accept", "what_it_did"]
    assert said == "risk acceptance 7"
    assert "risk.accept" not in answer_events(lab, "r2")[0]["action"].tolist()
