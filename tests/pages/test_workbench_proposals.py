"""AppTest of the labelling workbench's judge proposals: the demo questions verified offline appear there with
their provenance; a person confirms one, corrects one and rejects one in one submission, and only those labels
reach the claims; a choice that cannot be recorded is named while the others are recorded."""

from __future__ import annotations

from register import Actor
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import VerifyInput, read_inputs, verify
from register.verify.proposals import list_proposals
from tests.helpers.accounts import open_page
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

DEMO_QUESTIONS = REPO_ROOT / "data" / "verify" / "factcheck_questions.jsonl"
SEED = Actor("seed", "annotator")


def _verify_demo_questions(store, limit: int | None = None):
    enrol(store, SEED)
    lines = DEMO_QUESTIONS.read_text(encoding="utf-8").splitlines()[:limit]
    items = [item for item in read_inputs(lines) if isinstance(item, VerifyInput)]
    return verify(store, SEED, items, judge_for(load_profile("offline-default")), source_name=DEMO_QUESTIONS.name)


def _proposals_view(role: str = "annotator"):
    at = open_page("pages/workbench.py", role)
    at.button_group(key="wb_work").set_value("proposals").run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    return "\n".join(str(x.value) for x in [*at.markdown, *at.caption, *at.success, *at.error, *at.info])


def _labels(store, response_id: str) -> dict[str, list[str]]:
    return {cid: list(labels) for cid, labels in store.query(
        "SELECT claim_id, labels FROM claims WHERE is_current AND response_id = ? ORDER BY claim_idx", [response_id])}


def test_the_demo_questions_verified_offline_wait_in_the_workbench_with_their_provenance(seeded_db):
    report = _verify_demo_questions(seeded_db)
    assert report.responses == 90 and report.proposed == report.claims > 90
    at = _proposals_view()
    responses = at.selectbox(key="wb_proposal_response")
    assert len(responses.options) == 90
    shown = responses.value
    waiting = list_proposals(seeded_db, response_id=shown)
    texts = _texts(at)
    assert f"{report.proposed:,} proposals on 90 responses wait" in texts
    for proposal in waiting:  # every waiting proposal of the chosen response, with its judge and run
        assert escape_markdown(proposal["claim_text"]) in texts
    provenance = [m.value for m in at.markdown if "Provenance:" in m.value]
    assert len(provenance) == len(waiting)
    for line in provenance:
        for part in ("offline-default@2", "offline-lexical", f"verification run {report.run_id} of",
                     DEMO_QUESTIONS.name, "by seed"):
            assert escape_markdown(part) in line, (part, line)
    assert len(at.radio) == len(waiting)
    # nothing unconfirmed reached the claims: each counts as UNSUPPORTED until a person decides
    assert set(map(tuple, _labels(seeded_db, shown).values())) == {("UNSUPPORTED",)}


def test_a_person_confirms_corrects_and_rejects_in_one_submission(seeded_db):
    _verify_demo_questions(seeded_db, limit=12)
    rid = next(r for (r,) in seeded_db.query(
        "SELECT response_id FROM judge_proposals WHERE status = 'proposed' GROUP BY response_id "
        "HAVING count(*) >= 3 AND bool_or(label IS NOT NULL) ORDER BY response_id"))
    rows = list_proposals(seeded_db, response_id=rid)
    sure = next(r for r in rows if r["label"])  # a verdict the judge gave (not an abstention)
    corrected, rejected = [r for r in rows if r is not sure][:2]
    at = _proposals_view()
    at.selectbox(key="wb_proposal_response").set_value(rid).run()
    at.radio(key=f"wb_proposal_{sure['proposal_id']}_action").set_value("confirm")
    at.radio(key=f"wb_proposal_{corrected['proposal_id']}_action").set_value("correct")
    at.selectbox(key=f"wb_proposal_{corrected['proposal_id']}_label").set_value("CONTRADICTED")
    at.radio(key=f"wb_proposal_{rejected['proposal_id']}_action").set_value("reject")
    next(b for b in at.button if b.label == "Record decisions").click().run()
    assert not at.exception, at.exception
    assert "Recorded: 2 confirmed" in at.success[0].value and "1 rejected" in at.success[0].value
    labels = _labels(seeded_db, rid)
    assert labels[sure["claim_id"]] == [sure["label"]]
    assert labels[corrected["claim_id"]] == ["CONTRADICTED"]
    assert labels[rejected["claim_id"]] == ["UNSUPPORTED"]
    status = {r["proposal_id"]: (r["status"], r["decided_by"]) for r in list_proposals(
        seeded_db, status=None, response_id=rid)}
    assert status[sure["proposal_id"]] == ("confirmed", "test-annotator")
    assert status[rejected["proposal_id"]] == ("rejected", "test-annotator")
    untouched = [r for r in rows if r["proposal_id"] not in (sure["proposal_id"], corrected["proposal_id"],
                                                                rejected["proposal_id"])]
    assert all(status[r["proposal_id"]][0] == "proposed" for r in untouched)


def test_a_correction_without_a_label_is_named_and_the_other_decision_is_recorded(seeded_db):
    _verify_demo_questions(seeded_db, limit=6)
    rid = next(r for (r,) in seeded_db.query(
        "SELECT response_id FROM judge_proposals GROUP BY response_id HAVING count(*) >= 2 ORDER BY response_id"))
    first, second = list_proposals(seeded_db, response_id=rid)[:2]
    at = _proposals_view()
    at.selectbox(key="wb_proposal_response").set_value(rid).run()
    at.radio(key=f"wb_proposal_{first['proposal_id']}_action").set_value("correct")
    at.radio(key=f"wb_proposal_{second['proposal_id']}_action").set_value("reject")
    next(b for b in at.button if b.label == "Record decisions").click().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == [f"Not recorded: proposal {first['proposal_id']} — choose the label "
                                           "that replaces the judge's"]
    assert "0 confirmed" in at.success[0].value and "1 rejected" in at.success[0].value
    remaining = {r["proposal_id"] for r in list_proposals(seeded_db, response_id=rid)}
    assert first["proposal_id"] in remaining and second["proposal_id"] not in remaining


def test_with_nothing_waiting_the_view_says_where_proposals_come_from(seeded_db):
    at = _proposals_view()
    assert "No judge proposal waits for a person" in at.info[0].value
