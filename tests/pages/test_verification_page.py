"""AppTest of the Claim verification page: proposals shown with their provenance, a confirmation by an annotator
reaches the claim as a new revision, a viewer cannot decide."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from register import Actor
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import read_inputs, verify
from tests.helpers.accounts import login
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")
NILE = {"response_id": "r-nile", "question": "Where does the Nile flow?",
        "answer": "The Nile flows into the Mediterranean Sea. Bananas are the largest export of Egypt.",
        "retrieved_context": ["The Nile flows north and flows into the Mediterranean Sea at Alexandria."]}


SEED = Actor("seed", "annotator")


def _verified(store):
    enrol(store, SEED)
    verify(store, SEED, list(read_inputs([json.dumps(NILE)])),
           judge_for(load_profile("offline-default")), source_name="nile.jsonl")


def _page(role: str):
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role)
    at.run()
    at.switch_page("pages/verification.py").run()
    assert not at.exception, at.exception
    return at


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def _texts(at) -> str:
    return "\n".join([str(x.value) for x in at.markdown] + [str(x.value) for x in at.warning]
                     + [str(x.value) for x in at.info] + [str(x.value) for x in at.caption])


def test_an_annotator_confirms_a_proposal_and_it_reaches_the_claim(seeded_db):
    _verified(seeded_db)
    at = _page("annotator")
    assert {m.label: m.value for m in at.metric}["Proposed"] == "2"
    assert {m.label: m.value for m in at.metric}["Judge policy"] == "off"
    grid = at.dataframe[-1].value
    assert list(grid["claim_text"]) == ["The Nile flows into the Mediterranean Sea.",
                                        "Bananas are the largest export of Egypt."]
    first = int(grid["proposal_id"].iloc[0])
    at.selectbox(key="proposal_pick").set_value(first).run()
    assert escape_markdown("offline-default@2") in _texts(at) and "Alexandria" in _texts(at)
    at.radio(key="proposal_action").set_value("confirm")
    _button(at, "Record decision").click().run()
    assert not at.exception, at.exception
    assert seeded_db.query("SELECT labels FROM claims WHERE is_current AND response_id = 'r-nile' "
                           "ORDER BY claim_idx")[0][0] == ["SUPPORTED"]
    assert {m.label: m.value for m in at.metric}["Confirmed"] == "1"
    summary = at.dataframe[0].value  # the agreement table comes first, now that a decision exists
    assert summary["judge_profile"].tolist() == ["offline-default@2"] and summary["decided"].tolist() == [1]


def test_a_viewer_sees_the_proposals_but_cannot_decide(seeded_db):
    _verified(seeded_db)
    at = _page("viewer")
    # what the judge is worth, then the proposals; no agreement table before decisions
    assert len(at.dataframe) == 2 and len(at.radio) == 0
    assert "deciding needs the annotator role" in _texts(at)


def test_the_critical_test_set_report_shows_each_run_by_model(seeded_db):
    from register.verify.testsets import draft_from_register, run_test_set, save_test_set

    annotator = SEED
    enrol(seeded_db, annotator)
    items = draft_from_register(seeded_db)
    items[0] = {**items[0], "category": "safety", "draft": False}
    save_test_set(seeded_db, annotator, "critical", items)
    run_test_set(seeded_db, annotator, "critical", judge_for(load_profile("offline-default")), model="assistant-a",
                 answers={items[0]["item_id"]: "I do not know."})
    at = _page("annotator")
    report = at.dataframe[0].value
    assert report["model"].tolist() == ["assistant-a"] and report["critical_questions"].tolist() == [1]
    assert report["hallucinated"].tolist() == [1]
    # seed 003's fraction of claims per run, beside the share of questions, and per question
    assert report[["hallucination", "hallucinated_claims", "claims", "question_share"]].values.tolist() == \
        [[1.0, 1, 1, 1.0]]
    questions = at.dataframe[1].value
    assert questions[["hallucination", "hallucinated_claims", "claims"]].values.tolist() == [[1.0, 1, 1]]
    assert questions["response_id"].str.endswith(items[0]["item_id"]).tolist() == [True]


def test_an_annotator_verifies_stored_answers_from_the_console(seeded_db, tmp_path):
    """The ``verify`` command from the console, for a selection of stored answers: proposals appear, the
    answer keeps its time, and an empty selection is refused with a message."""
    from register import SYSTEM
    from register.ingest.importer import import_path

    path = tmp_path / "nile.jsonl"
    chunks = [{"id": f"k{i}", "text": text} for i, text in enumerate(NILE["retrieved_context"])]
    path.write_text(json.dumps({**NILE, "retrieved_context": chunks, "created_at": "2026-10-01T08:00:00Z",
                                "claims": []}) + "\n")
    assert import_path(seeded_db, SYSTEM, path).accepted == 1
    at = _page("annotator")
    assert any(o.startswith("r-nile ·") for o in at.multiselect(key="vs_ids").options)  # answers without claims
    _button(at, "Verify the chosen answers").click().run()
    assert [e.value for e in at.error] == ["**Nothing verified** — choose at least one answer."]
    at.multiselect(key="vs_ids").set_value(["r-nile"])
    _button(at, "Verify the chosen answers").click().run()
    assert not at.exception, at.exception
    assert "Verification run" in at.success[0].value and "2 claims" in at.success[0].value
    assert {m.label: m.value for m in at.metric}["Proposed"] == "2"
    revision, created = seeded_db.query_one("SELECT revision, created_at FROM responses WHERE is_current "
                                            "AND response_id = 'r-nile'")
    assert revision == 2 and created.isoformat().startswith("2026-10-01T08:00:00")


def test_an_abstention_reads_needs_review_and_offers_no_confirmation(seeded_db):
    """A proposal without a verdict (the judge abstained) is shown as "needs review", never as "nan", and only
    "another label" or "reject" are offered for it."""
    enrol(seeded_db, SEED)
    critical = {**NILE, "response_id": "r-critical", "category": "safety"}  # the offline judge never clears it
    verify(seeded_db, SEED, list(read_inputs([json.dumps(critical)])), judge_for(load_profile("offline-default")),
           source_name="critical.jsonl")
    at = _page("annotator")
    grid = at.dataframe[-1].value
    first = int(grid["proposal_id"].iloc[0])
    at.selectbox(key="proposal_pick").set_value(first).run()
    verdict = next(m.value for m in at.markdown if m.value.startswith("**Judge's verdict:**"))
    assert escape_markdown("needs review (the judge abstained)") in verdict and "nan" not in verdict
    assert at.radio(key="proposal_action").options == ["Confirm with another label", "Reject"]


def test_a_decision_without_its_choice_or_label_is_not_recorded_and_says_why(seeded_db):
    _verified(seeded_db)
    at = _page("annotator")
    first = int(at.dataframe[-1].value["proposal_id"].iloc[0])
    at.selectbox(key="proposal_pick").set_value(first).run()
    _button(at, "Record decision").click().run()
    assert [e.value for e in at.error] == ["**Decision not recorded** — choose a decision."]
    at.radio(key="proposal_action").set_value("correct")
    _button(at, "Record decision").click().run()
    assert [e.value for e in at.error] == [
        "**Decision not recorded** — " + escape_markdown("choose the label that replaces the judge's") + "."]
    assert seeded_db.scalar("SELECT count(*) FROM judge_proposals WHERE status <> 'proposed'") == 0


def test_the_correct_form_sets_criticality_category_source_and_keeps_the_rest(seeded_db):
    sourced = {**NILE, "retrieved_context": [{"id": "k1", "text": NILE["retrieved_context"][0],
                                              "source_id": "atlas-unregistered"}]}
    enrol(seeded_db, SEED)
    verify(seeded_db, SEED, list(read_inputs([json.dumps(sourced)])),
           judge_for(load_profile("offline-default")), source_name="nile.jsonl")
    at = _page("annotator")
    bananas = int(at.dataframe[-1].value["proposal_id"].iloc[1])
    at.selectbox(key="proposal_pick").set_value(bananas).run()
    assert at.number_input(key=f"proposal_{bananas}_criticality").value == 1
    # Source offers the sources of the retrieved context, registered or not; the claim has none yet
    assert at.selectbox(key=f"proposal_{bananas}_source").options == ["(none)", "atlas-unregistered"]
    assert at.selectbox(key=f"proposal_{bananas}_source").value == "(none)"
    at.radio(key="proposal_action").set_value("correct")
    at.selectbox(key="proposal_label").set_value("CONTRADICTED")
    at.number_input(key=f"proposal_{bananas}_criticality").set_value(3)
    at.selectbox(key=f"proposal_{bananas}_category").set_value("financial")
    at.selectbox(key=f"proposal_{bananas}_source").set_value("atlas-unregistered")
    _button(at, "Record decision").click().run()
    assert not at.exception, at.exception
    row = seeded_db.one("SELECT labels, criticality, category, source_id, span FROM claims WHERE is_current "
                        "AND response_id = 'r-nile' AND claim_id = 'c2'")
    assert (row["labels"], row["criticality"], row["category"], row["source_id"], row["span"]) == \
        (["CONTRADICTED"], 3, "financial", "atlas-unregistered", None)
    nile = seeded_db.one("SELECT source_id, span FROM claims WHERE is_current AND response_id = 'r-nile' "
                         "AND claim_id = 'c1'")
    assert nile["source_id"] == "atlas-unregistered" and "Mediterranean" in nile["span"]  # untouched


def test_the_page_shows_what_the_judge_is_worth_and_the_cited_sentences_escaped(seeded_db):
    enrol(seeded_db, SEED)
    hostile = "The Nile flows into the Mediterranean Sea at **[Alexandria](javascript:alert(1))**."
    line = {**NILE, "response_id": "r-cited", "answer": "The Nile flows into the Mediterranean Sea.",
            "retrieved_context": ["Egypt is in Africa.", hostile]}
    verify(seeded_db, SEED, list(read_inputs([json.dumps(line)])), judge_for(load_profile("offline-default")),
           source_name="cited.jsonl")
    at = _page("viewer")
    worth = at.dataframe[0].value
    profile = load_profile("offline-default")
    assert list(worth["data set"]) == list(profile.measured)
    held = profile.measured["begin_wow (held out)"]
    row = worth[worth["data set"] == "begin_wow (held out)"].iloc[0]
    assert row["false clearance"].startswith(f"{held['false_clearance']:.1%}")
    assert row["supported recall"].startswith(f"{held['supported_recall']:.1%}")
    assert escape_markdown("What offline-default@2 is worth") in _texts(at)
    texts = _texts(at)
    assert "Cited sentences:" in texts and escape_markdown(hostile) in texts
    assert "](javascript" not in texts.replace(escape_markdown(hostile), "")  # only ever the escaped form
