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


def test_a_reviewer_draws_an_audit_sample_and_records_a_finding_that_the_coverage_counts(seeded_db):
    # one bad review decision on a high answer, so that the page has outcomes of both kinds to rest on
    rid, revision = seeded_db.query_one("SELECT response_id, revision FROM scores WHERE is_current AND "
                                        "action = 'review' ORDER BY response_id LIMIT 1")
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
    expected = cal.outcome_coverage(cal.outcome_pairs(seeded_db), cal.active_profile(seeded_db)).set_index("kind")
    assert coverage.loc["Audit finding", "outcomes"] == 1 and coverage.loc["Audit finding", "bad"] == 0
    assert coverage.loc["Review decision", "outcomes"] == 1 and coverage.loc["Review decision", "bad"] == 1
    assert coverage.loc["All kinds"].tolist() == expected.loc["all"].tolist()
    assert len(_frame(at, "sample_id")) == 2  # the decided one left the open sample


def test_a_viewer_sees_the_sample_but_cannot_draw(seeded_db):
    at = _open("viewer")
    assert at.button(key="cal_draw").disabled
