"""The Authority checks through the pages (AppTest): the responses page's Authority column and filter for
each of allowed / current / authoritative, the detail's per-claim warning (proposed, never applied), the
overview's count, the review queue's reason, and the Source authority page's editors (admins only)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from register import SYSTEM, Store
from register.scoring.profiles import ensure_default_profile
from tests.helpers.accounts import login, open_page
from tests.helpers.authority import load_authority_register
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def authority_db(tmp_path):
    store = Store(Path(os.environ["HRI_DB"]))
    ensure_default_profile(store, SYSTEM)
    load_authority_register(store, tmp_path)
    yield store
    store.close()


def _open(page: str, role: str = "reviewer", **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    kinds = ("markdown", "caption", "info", "error", "warning", "success", "title", "subheader")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def _authority_column(at) -> dict[str, str]:
    frame = at.dataframe[0].value
    return {rid: (a if isinstance(a, str) else "") for rid, a in zip(frame["response_id"], frame["authority"],
                                                                     strict=True)}


def test_the_responses_page_shows_each_failed_check_in_the_authority_column(authority_db):
    column = _authority_column(_open("pages/responses.py"))
    assert column["au-restricted"] == "c1: forbidden source, proposed ACCESS_GAP"  # allowed
    assert column["au-stale"] == "c1: stale source, proposed OUTDATED"  # current
    assert column["au-weak"] == "c1: insufficient authority, proposed needs review"  # authoritative
    assert column["au-ok"] == ""


@pytest.mark.parametrize("picked, expected", [
    ("forbidden source", {"au-restricted"}),
    ("stale source", {"au-stale", "au-expired", "au-contra"}),
    ("insufficient authority", {"au-weak"}),
])
def test_the_authority_filter_keeps_the_answers_failing_that_check(authority_db, picked, expected):
    at = _open("pages/responses.py")
    at.selectbox(key="responses_authority").select(picked).run()
    assert not at.exception, at.exception
    assert set(_authority_column(at)) == expected
    assert f"{len(expected):,} responses" in _texts(at)


def test_the_detail_warns_per_claim_that_the_label_is_proposed_not_applied(authority_db):
    at = _open("pages/response_detail.py", response_id="au-stale")
    warnings = [str(w.value) for w in at.warning]
    assert any("stale source, proposed OUTDATED" in w and "superseded by" in w and "not applied" in w
               and "unrestricted" not in w
               for w in warnings), warnings
    claims = at.dataframe[0].value
    assert claims["authority"].tolist() == ["stale source, proposed OUTDATED"]
    assert list(claims["labels"].iloc[0]) == ["SUPPORTED"]


def test_the_overview_counts_supported_claims_on_failing_sources(authority_db):
    at = _open("pages/overview.py")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Supported claims on failing sources"] == "4"
    assert metrics["Answers queued for their sources"] == "4"


def test_the_review_queue_says_why_an_answer_waits_for_its_source(authority_db):
    at = _open("pages/review_queue.py")
    assert "authority now: c1: stale source, proposed OUTDATED" in _texts(at) + str(
        [d.value.to_dict("records") for d in at.dataframe])


def test_the_source_authority_page_lists_findings_and_edits_only_for_admins(authority_db):
    reviewer = _open("pages/authority.py")
    metrics = {m.label: m.value for m in reviewer.metric}
    assert metrics["Findings"] == "6" and metrics["With a proposed label"] == "5"
    assert not any(b.label.startswith("Save") for b in reviewer.button)
    assert "Read only" in _texts(reviewer)
    admin = _open("pages/authority.py", role="admin")
    labels = {b.label for b in admin.button}
    assert {"Save use cases as a new version", "Save authority rules as a new version"} <= labels
    admin.button(key="use_cases_save").click().run()  # no reason given: refused, nothing saved
    assert "nothing was saved" in _texts(admin)
    assert authority_db.scalar("SELECT count(*) FROM use_case_versions") == 1


def test_saving_authority_rules_on_the_page_changes_the_verdict(authority_db):
    admin = _open("pages/authority.py", role="admin")
    admin.toggle(key="authority_inclusive_0").set_value(False)
    admin.text_input(key="authority_rules_reason").input("read valid_until as the first day it is invalid").run()
    admin.button(key="authority_rules_save").click().run()
    assert not admin.exception, admin.exception
    assert authority_db.scalar("SELECT max(version) FROM authority_rule_versions") == 2
    # pending until a second admin approves it on the page (four eyes)
    assert any("version 2, saved by test" in w.value and "is pending" in w.value for w in admin.warning)
    other = open_page("pages/authority.py", "admin", "test-admin-2")
    other.text_input(key="authority_rules_approve_reason_2").set_value("valid_until is exclusive here")
    next(b for b in other.button if b.label == "Approve version 2").click().run()
    assert not other.exception, other.exception
    rules = authority_db.scalar("SELECT params->>'valid_until_inclusive' FROM authority_rule_versions")
    assert rules == "false"


def test_the_overview_shows_answers_by_scope_status_once_use_cases_are_registered(authority_db):
    """Nothing while the use-case register is empty; then the answers per scope status (issue 37)."""
    from register.console.queries.filters import Filters
    from register.console.queries.scope import scope_overview
    from register.governance.registers import add_row
    assert scope_overview(authority_db, Filters()).empty  # the page shows nothing then
    add_row(authority_db, SYSTEM, "usecases", {"use_case_id": "helpdesk", "owner": "Olga", "purpose": "help",
                                               "status": "suspended"})
    at = _open("pages/overview.py")
    assert "Answers by scope status" in [h.value for h in at.subheader]
    shown = {m.label: m.value for m in at.metric}
    assert shown["Suspended"] == "7" and shown["In scope"] == "0" and shown["Unknown"] == "0"
