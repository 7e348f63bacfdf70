"""AppTest of the calibration page's outcomes: a random audit sample drawn and decided on the page, and the
table of outcomes per kind and band that the calibration rests on."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register import Actor
from register.console.review import record_decision
from register.scoring import calibration as cal
from tests.helpers.accounts import login
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
LEAD = Actor("lead-reviewer", "reviewer")


def _open(role: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role)
    at.run()
    at.switch_page("pages/calibration.py").run()
    assert not at.exception, at.exception
    return at


def _frame(at, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _coverage(store):
    """The register's outcome coverage by kind, as the page's table is computed."""
    return cal.outcome_coverage(cal.outcome_pairs(store), cal.active_profile(store)).set_index("kind")


def test_a_reviewer_draws_an_audit_sample_and_records_a_finding_that_the_coverage_counts(seeded_db):
    # one bad review decision on a high answer, so that the page has outcomes of both kinds to rest on; an answer no
    # reviewer decided (the demo decides its Factcheck-GPT answers, register.demo: those would be refused)
    rid, revision = seeded_db.query_one("SELECT response_id, revision FROM scores WHERE is_current AND "
                                        "action = 'review' AND NOT EXISTS (SELECT 1 FROM review_decisions d "
                                        "WHERE d.response_id = scores.response_id) ORDER BY response_id LIMIT 1")
    # the demo's own review decisions are outcomes too: the page counts them with this one
    demo = _coverage(seeded_db)
    demo_reviews = demo.loc["review_decision"] if "review_decision" in demo.index else None
    enrol(seeded_db, LEAD)
    record_decision(seeded_db, LEAD, rid, revision, "block", "contradicts the contract")
    at = _open("reviewer")
    at.number_input(key="cal_sample_size").set_value(3)
    at.button(key="cal_draw").click().run()
    assert not at.exception, at.exception
    sampled = _frame(at, "sample_id")
    assert len(sampled) == 3 and set(sampled["action"]) <= {"release", "caution"}
    assert seeded_db.scalar("SELECT count(*) FROM audit_sample_items") == 3
    pick = at.selectbox(key="cal_sample_pick").value
    at.radio(key="cal_sample_decision").set_value("release")
    at.text_input(key="cal_sample_reason").set_value("checked against the sources")
    at.button[[b.label for b in at.button].index("Record the audit finding")].click().run()
    assert not at.exception, at.exception
    assert seeded_db.one("SELECT decision, decided_by FROM review_decisions WHERE response_id = ?", [pick]) == {
        "decision": "release", "decided_by": "test-reviewer"}
    coverage = _frame(at, "outcomes").set_index("kind")
    expected = _coverage(seeded_db)
    assert coverage.loc["Audit finding", "outcomes"] == 1 and coverage.loc["Audit finding", "bad"] == 0
    reviews_before = (0, 0) if demo_reviews is None else (demo_reviews["outcomes"], demo_reviews["bad"])
    assert coverage.loc["Review decision", "outcomes"] == reviews_before[0] + 1
    assert coverage.loc["Review decision", "bad"] == reviews_before[1] + 1
    assert coverage.loc["All kinds"].tolist() == expected.loc["all"].tolist()
    assert len(_frame(at, "sample_id")) == 2  # the decided one left the open sample


def test_a_viewer_sees_the_sample_but_cannot_draw(seeded_db):
    at = _open("viewer")
    assert at.button(key="cal_draw").disabled
