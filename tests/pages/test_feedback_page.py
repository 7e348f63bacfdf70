"""AppTest of the Feedback page (report -> four eyes refused -> validated by a second reviewer -> resolved)
and of the overview's s_H tile against a hand computation."""

from __future__ import annotations

import math
import os
from datetime import UTC, date, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest

from register import Actor, Store
from register.feedback import items as fb_items
from tests.helpers.accounts import login
from tests.helpers.actors import enrol
from tests.helpers.feedback import Clock, import_records, two_claims
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def small_db(tmp_path):
    """Three responses in the app's database (HRI_DB): r1, r2 (contracts / rag-v3), r3 (hr / rag-v4)."""
    store = Store(os.environ["HRI_DB"])
    from register import SYSTEM
    from register.scoring.profiles import ensure_default_profile

    ensure_default_profile(store, SYSTEM)
    import_records(store, tmp_path, [two_claims("r1"), two_claims("r2"), two_claims("r3", "hr", "rag-v4")])
    yield store
    store.close()


def _feedback_page(role: str, username: str | None = None, response_id: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role, username)
    at.run()
    at.switch_page("pages/feedback.py")
    if response_id:
        at.query_params["response_id"] = response_id
    return at.run()


def _frame_with(at, column: str):
    """The first dataframe shown with ``column`` (AppTest does not expose a dataframe's key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _errors(at) -> list[str]:
    return [e.value for e in at.error]


def test_report_four_eyes_validate_and_resolve_through_the_page(small_db):
    at = _feedback_page("reviewer", "rita", response_id="r1")
    assert not at.exception, at.exception
    assert at.text_input(key="fb_response").value == "r1"
    at.selectbox(key="fb_claim").set_value("c2")
    at.text_area(key="fb_text").set_value("Renewal needs written notice (clause 12).")
    at.slider(key="fb_severity").set_value(0.75)
    at.button[[b.label for b in at.button].index("Report")].click().run()
    assert not at.exception, at.exception
    assert any("reported on" in s.value for s in at.success)
    (row,) = small_db.dicts("SELECT feedback_id, state, claim_id, severity, reported_by FROM feedback_items")
    assert (row["state"], row["claim_id"], row["severity"], row["reported_by"]) == ("reported", "c2", 0.75, "rita")
    assert at.text_area(key="fb_text").value == ""  # the form starts empty again

    # the reporter cannot validate their own report: refused on the page, audited, nothing changed
    at.button[[b.label for b in at.button].index("Validate")].click().run()
    assert any("Needs a second person" in e for e in _errors(at)), _errors(at)
    assert small_db.scalar("SELECT state FROM feedback_items") == "reported"
    assert small_db.scalar("SELECT count(*) FROM audit_events WHERE action = 'denied' AND actor_name = 'rita' "
                           "AND entity_type = 'feedback'") == 1

    other = _feedback_page("reviewer", "rob")
    assert other.selectbox(key="fb_pick_reported").value == row["feedback_id"]
    assert other.selectbox(key="fb_target").value == "c2"  # the reported claim, preselected
    other.radio(key="fb_method").set_value("source_check")
    other.button[[b.label for b in other.button].index("Validate")].click().run()
    assert not other.exception, other.exception
    assert any("validated" in s.value for s in other.success)
    state = small_db.one("SELECT state, validated_by, validation_method, validated_revision FROM feedback_items")
    assert state == {"state": "validated", "validated_by": "rob", "validation_method": "source_check",
                     "validated_revision": 2}
    assert small_db.scalar("SELECT band FROM scores WHERE response_id = 'r1' AND is_current") == "Medium"

    other.text_input(key="fb_resolution").set_value("clause 12 indexed")
    other.button[[b.label for b in other.button].index("Resolve")].click().run()
    assert not other.exception, other.exception
    assert small_db.one("SELECT state, resolved_by, resolution, resolved_revision FROM feedback_items") == {
        "state": "resolved", "resolved_by": "rob", "resolution": "clause 12 indexed", "resolved_revision": 3}
    assert small_db.scalar("SELECT band FROM scores WHERE response_id = 'r1' AND is_current") == "Low"
    listed = _frame_with(other, "resolution")
    assert listed[["feedback_id", "state"]].values.tolist() == [[row["feedback_id"], "resolved"]]
    metrics = {m.label: m.value for m in other.metric}
    assert (metrics["Reported"], metrics["Resolved"]) == ("0", "1")


def test_a_viewer_may_report_but_not_validate(small_db):
    at = _feedback_page("viewer", response_id="r2")
    assert not at.exception, at.exception
    assert "Validate" not in [b.label for b in at.button]
    assert any("may report problems" in i.value for i in at.info)
    at.text_area(key="fb_text").set_value("Wrong year.")
    at.button[[b.label for b in at.button].index("Report")].click().run()
    assert small_db.one("SELECT reported_role, severity FROM feedback_items") == {"reported_role": "viewer",
                                                                             "severity": 0.5}  # the default q


def test_imported_feedback_labels_are_listed_as_validated_outside_the_register(small_db, tmp_path):
    imported = two_claims("r-imp")
    imported["claims"][1].update(labels=["VALIDATED_NEGATIVE_FEEDBACK"], feedback_count=1)
    import_records(small_db, tmp_path, [imported], name="imported.jsonl")
    at = _feedback_page("viewer")
    outside = _frame_with(at, "validation")
    assert outside[["response_id", "claim_id", "validation"]].values.tolist() == [
        ["r-imp", "c2", "validated outside the register"]]


def test_the_overview_tile_matches_a_hand_computation(small_db, monkeypatch):
    day = date(2026, 10, 20)
    as_of = datetime(2026, 10, 21, tzinfo=UTC)  # the tile's window ends at the end of the chosen day
    clock = Clock(as_of - timedelta(days=10))
    monkeypatch.setattr(fb_items, "utc_now", clock)
    reporter, reviewer = Actor("ada", "annotator"), Actor("rita", "reviewer")
    enrol(small_db, reporter, reviewer)
    for rid, claim, q, age in (("r1", "c1", 0.9, 4.0), ("r2", "c2", 0.6, 10.0), ("r3", "c1", 0.3, 1.5)):
        fid = fb_items.report_feedback(small_db, reporter, rid, "wrong", q, claim_id=claim)
        clock.now = as_of - timedelta(days=age)
        fb_items.validate_feedback(small_db, reviewer, fid, "review")
    lam = math.log(2) / 30
    # contracts / rag-v3: r1 and r2 validated in the window (2 reviewed responses); hr / rag-v4: r3 alone
    contracts = (0.9 * math.exp(-lam * 4.0) + 0.6 * math.exp(-lam * 10.0)) / 2
    hr = 0.3 * math.exp(-lam * 1.5) / 1
    assert contracts > hr

    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "viewer")
    at.run()
    at.date_input(key="overview_sh_as_of").set_value(day).run()
    assert not at.exception, at.exception
    metrics = {m.label: m for m in at.metric}
    assert metrics["Highest scope s_H"].value == f"{contracts:.3f}"
    assert not any("n_reviewed" in d.value.columns for d in at.dataframe)  # the details are shown on request
    at.toggle(key="overview_sh_details").set_value(True).run()
    table = _frame_with(at, "n_reviewed").set_index("use_case")
    assert table.loc["contracts", "s_h"] == pytest.approx(contracts, abs=1e-12)
    assert table.loc["hr", "s_h"] == pytest.approx(hr, abs=1e-12)
    at.segmented_control(key="overview_sh_window").set_value(7).run()  # r2 (10 days old) leaves the window
    table = _frame_with(at, "n_reviewed").set_index("use_case")
    assert table.loc["contracts", "s_h"] == pytest.approx(0.9 * math.exp(-lam * 4.0) / 1, abs=1e-12)
