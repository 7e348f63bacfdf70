"""AppTest of the console's trust fixes: untrusted text never formats or links itself, defaults change nothing,
forms keep what was typed, the review form preselects nothing, the decision shows on the response, a
response without claims is its own state, the filters show only where they apply, and "Normalise" logs no
warning. What only a browser shows is in tests/e2e/test_browser_console_trust.py and
tests/e2e/test_browser_injection.py.
"""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from register import SYSTEM, Actor
from register.console.queries.filters import NO_CLAIMS_STATE
from register.governance import checklist
from register.governance.checks import CHECKS
from register.ingest.importer import import_path
from register.scoring.profiles import create_draft
from tests.helpers.accounts import ensure_account, login
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import code_span

APP = str(REPO_ROOT / "app.py")
HOSTILE = "![x](http://127.0.0.1:9/x.png)`y`[l](http://127.0.0.1:9/l)"


def _open(page: str, role: str = "reviewer", username: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role, username)
    for key, value in params.items():  # before the first run: the filters read the URL when a session starts
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    kinds = ("markdown", "caption", "info", "error", "warning", "success", "title", "subheader")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _import(store, tmp_path, records: list[dict]) -> None:
    path = tmp_path / "extra.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert import_path(store, SYSTEM, path).accepted == len(records)


def _live_link(markdown: str) -> bool:
    """Whether ``markdown`` holds an unescaped link or image outside code spans (what a renderer would follow)."""
    import re

    outside = re.sub(r"(`+) .*? \1", "", markdown)  # code spans as code_span writes them
    return re.search(r"(?<!\\)!?(?<!\\)\[[^\]]*(?<!\\)\]\((?!\\)", outside) is not None or "http://" in outside


# --- markdown injection: the four places the issue names ------------------------------------------------


def test_detail_caption_shows_use_case_and_model_as_code(seeded_db, tmp_path):
    _import(seeded_db, tmp_path, [{"response_id": "inj-1", "use_case": HOSTILE, "model": HOSTILE, "answer": "a",
                                   "claims": [{"text": "a", "labels": ["SUPPORTED"]}]}])
    at = _open("pages/response_detail.py", response_id="inj-1")
    caption = next(c.value for c in at.caption if "revision" in c.value)
    assert caption.startswith(f"{code_span(HOSTILE)} · {code_span(HOSTILE)} · revision 1")
    assert not _live_link(caption)


def test_not_found_error_shows_the_id_from_the_url_as_text(seeded_db):
    at = _open("pages/response_detail.py", response_id=HOSTILE)
    (error,) = at.error
    assert "does not exist" in error.value and not _live_link(error.value)


def test_checklist_run_by_from_hri_actor_is_code(seeded_db):
    checklist.record_run(seeded_db, Actor(HOSTILE, "system"))
    at = _open("pages/checklist.py")
    caption = next(c.value for c in at.caption if c.value.startswith("Run by"))
    assert caption.startswith(f"Run by {code_span(HOSTILE)} at") and not _live_link(caption)


def test_review_queue_decision_heading_and_link_label_cannot_be_broken_out_of(seeded_db, tmp_path):
    rid = "q-`` ![b](http://127.0.0.1:9/b.png) ``"
    _import(seeded_db, tmp_path, [{"response_id": rid, "created_at": "2000-01-01T00:00:00Z", "answer": "a",
                                   "claims": [{"text": "a", "labels": ["CONTRADICTED"], "criticality": 3}]}])
    at = _open("pages/review_queue.py")
    assert at.selectbox(key="queue_pick").value == rid  # the oldest in the queue
    heading = next(m.value for m in at.markdown if m.value.startswith("**Decision on"))
    assert heading == f"**Decision on {code_span(rid)} (revision 1)**" and not _live_link(heading)
    link = at.get("page_link")[0].proto.label
    assert link == f"Open the detail of {code_span(rid)}"


# --- review: nothing preselected, the decision shows on the response ---------------------------------------


def test_review_form_preselects_nothing_and_a_reason_alone_records_nothing(seeded_db):
    at = _open("pages/review_queue.py")
    assert at.radio(key="review_decision_choice").value is None
    before = seeded_db.query_one("SELECT count(*) FROM review_decisions")[0]
    at.text_area(key="review_reason").input("Looks fine to me.")
    at.button[0].click()
    at.run()
    assert any("choose a decision" in e.value for e in at.error)
    assert seeded_db.query_one("SELECT count(*) FROM review_decisions")[0] == before
    assert at.text_area(key="review_reason").value == "Looks fine to me."  # kept


def test_after_a_decision_the_response_header_shows_it(seeded_db):
    at = _open("pages/review_queue.py")
    rid = at.selectbox(key="queue_pick").value
    at.radio(key="review_decision_choice").set_value("block")
    at.text_area(key="review_reason").input("Contradicts the contract.")
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    detail = _open("pages/response_detail.py", response_id=rid)
    shown = _metrics(detail)
    assert shown["Review decision"] == "Block" and shown["Decision"] in ("review", "block")
    assert any("Decided by" in c.value and "test-reviewer" in c.value for c in detail.caption)


# --- a response without claims is its own state -----------------------------------------------------------


def test_a_response_without_claims_shows_no_claims_everywhere(seeded_db, tmp_path):
    _import(seeded_db, tmp_path, [{"response_id": "none-1", "created_at": "2000-01-01T00:00:00Z",
                                   "answer": "I cannot say.", "claims": []}])
    none = seeded_db.query_one("SELECT count(*) FROM scores WHERE is_current AND no_claims")[0]
    low = seeded_db.query_one("SELECT count(*) FROM scores WHERE is_current AND band = 'Low' AND NOT no_claims")[0]
    overview = _open("pages/overview.py")
    cards = _metrics(overview)
    assert cards[f"{NO_CLAIMS_STATE} → review"] == f"{none:,}" and cards["Low → release"] == f"{low:,}"
    detail = _open("pages/response_detail.py", response_id="none-1")
    assert (_metrics(detail)["Band"], _metrics(detail)["HRI score"]) == (NO_CLAIMS_STATE, "—")
    queue = _open("pages/review_queue.py")
    row = queue.dataframe[0].value.set_index("response_id").loc["none-1"]
    assert row["band"] == NO_CLAIMS_STATE and row["why"].startswith("decision review: no claims: review")
    responses = _open("pages/responses.py", band=NO_CLAIMS_STATE)
    assert set(responses.dataframe[0].value["band"]) == {NO_CLAIMS_STATE}


# --- responses page ---------------------------------------------------------------------------------------


def test_a_new_search_starts_at_page_one_and_says_nothing_of_importing(seeded_db):
    at = _open("pages/responses.py")
    at.number_input(key="responses_page").set_value(3).run()
    assert any("page 3 of" in c.value for c in at.caption)
    at.text_input(key="responses_search").input("ISO 27001").run()
    assert any("page 1 of 1" in c.value for c in at.caption), [c.value for c in at.caption]
    at.text_input(key="responses_search").input("no response says zyxwvut").run()
    message = " ".join(i.value for i in at.info)
    assert "zyxwvut" in message and "import" not in message.lower()


# --- users page -------------------------------------------------------------------------------------------


def _role(store, username: str) -> str:
    return store.query_one("SELECT role FROM users WHERE username = ?", [username])[0]


def test_apply_with_the_untouched_form_changes_nothing(seeded_db):
    at = _open("pages/users.py", role="admin")
    events = seeded_db.query_one("SELECT count(*) FROM audit_events")[0]
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    assert not at.exception, at.exception
    assert _role(seeded_db, "test-admin") == "admin"
    assert any("nothing was changed" in i.value for i in at.info)
    assert seeded_db.query_one("SELECT count(*) FROM audit_events")[0] == events


def test_a_role_change_is_confirmed_naming_account_old_and_new_role(seeded_db):
    ensure_account("test-viewer", "viewer")
    at = _open("pages/users.py", role="admin")
    at.selectbox(key="user_change_name").set_value("test-viewer")
    at.selectbox(key="user_change_action").set_value("set role")
    at.selectbox(key="user_change_role").set_value("reviewer")
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    (warning,) = at.warning
    assert f"{code_span('test-viewer')} from **viewer** to **reviewer**" in warning.value
    assert _role(seeded_db, "test-viewer") == "viewer"  # not yet
    at.button(key="users_role_cancel").click().run()
    assert not at.warning and _role(seeded_db, "test-viewer") == "viewer"
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    at.button(key="users_role_confirm").click().run()
    assert not at.exception, at.exception
    assert _role(seeded_db, "test-viewer") == "reviewer"
    # the page says what was done, and keeps saying it until the next action (a toast vanished unread)
    assert [s.value for s in at.success] == [f"{code_span('test-viewer')}: role reviewer done."]


def test_an_admin_demoting_themself_is_told_so(seeded_db):
    at = _open("pages/users.py", role="admin")
    at.selectbox(key="user_change_name").set_value("test-admin")
    at.selectbox(key="user_change_action").set_value("set role")
    at.selectbox(key="user_change_role").set_value("viewer")
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    assert "This is your own account" in at.warning[0].value
    assert _role(seeded_db, "test-admin") == "admin"


# --- add forms --------------------------------------------------------------------------------------------


def test_claims_add_form_keeps_the_input_names_the_field_and_gives_a_readable_id(seeded_db):
    at = _open("pages/claims_register.py")
    at.text_area(key="clm_statement").input("   ")
    at.text_input(key="clm_reviewer").input("Dora")
    at.text_input(key="clm_notes").input("from the vendor call")
    at.get("form_submit_button")[-1].click().run()
    errors = " ".join(e.value for e in at.error)
    assert "**Statement**" in errors and "row 1" not in errors
    assert (at.text_input(key="clm_reviewer").value, at.text_input(key="clm_notes").value) == \
        ("Dora", "from the vendor call")
    at.text_area(key="clm_statement").input("The vendor's model is certified under ISO 42001.")
    at.get("form_submit_button")[-1].click().run()
    assert not at.exception, at.exception
    key = seeded_db.query_one("SELECT claim_key FROM register_claims WHERE reviewer = 'Dora'")[0]
    assert key == "clm-the-vendor-s-model-is-certified-under"


# --- filters, checklist, profiles -------------------------------------------------------------------------


@pytest.mark.parametrize("page, shown", [("pages/overview.py", True), ("pages/responses.py", True),
                                         ("pages/review_queue.py", True), ("pages/response_detail.py", False),
                                         ("pages/sources.py", False), ("pages/checklist.py", False),
                                         ("pages/profiles.py", False), ("pages/calibration.py", False)])
def test_sidebar_filters_only_where_they_apply(seeded_db, page, shown):
    at = _open(page, role="admin")
    labels = {w.label for w in at.sidebar.multiselect}
    assert ({"Use case", "Model", "Band"} <= labels) is shown
    assert (not labels) is (not shown)


def test_a_reviewer_signs_a_run_once(seeded_db):
    enrol(seeded_db, Actor("ann", "reviewer"), Actor("test-reviewer", "reviewer"))
    run = checklist.record_run(seeded_db, Actor("ann", "reviewer"))
    # waived with a reason: some automated checks find offending rows in the demo (imported feedback labels)
    checklist.sign(seeded_db, Actor("test-reviewer", "reviewer"), run,
                   {c.no: {"decision": "waived", "reason": "accepted for this test"} for c in CHECKS})
    at = _open("pages/checklist.py")
    assert "You signed this run" in _texts(at)
    assert not any(b.label == "Sign" for b in at.get("form_submit_button"))


def test_normalise_logs_no_streamlit_warning(seeded_db, monkeypatch):
    from streamlit.elements.lib import policies

    warnings = []
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    monkeypatch.setattr(policies._LOGGER, "warning", lambda *args, **kwargs: warnings.append(args))
    at = _open("pages/profiles.py", role="admin")
    at.number_input(key="pe1_w_F").set_value(0.35).run()
    at.button(key="pe1_normalise").click().run()
    assert not at.exception, at.exception
    assert at.number_input(key="pe1_w_F").value == pytest.approx(0.35 / 1.1, abs=1e-6)
    assert warnings == []


def test_the_four_eyes_message_is_a_whole_sentence(seeded_db):
    enrol(seeded_db, Actor("test-admin", "admin"))
    version = create_draft(seeded_db, Actor("test-admin", "admin"), {})
    at = _open("pages/profiles.py", role="admin")
    at.selectbox(key="pp_version").set_value(version)
    at.text_area(key="pp_reason").input("ready")
    at.button(key="FormSubmitter:pp_form-Publish and rescore").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "a second person must approve it \\(four eyes\\)" in errors, errors


@pytest.mark.parametrize("start, end", [("2000-01-01", "2099-12-31"), ("1999-01-01", "1999-02-01"),
                                        ("2099-01-01", None), ("2026-12-31", "2026-01-01")])
def test_a_link_with_dates_outside_the_data_opens_the_page(seeded_db, start, end):
    params = {"from": start} | ({"to": end} if end else {})
    at = _open("pages/overview.py", **params)
    low, high = seeded_db.query_one("SELECT min(created_at)::DATE, max(created_at)::DATE FROM responses "
                                    "WHERE is_current")
    picked = at.sidebar.date_input[0].value
    picked = tuple(picked) if isinstance(picked, (tuple, list)) else ((picked,) if picked else ())
    assert all(low <= d <= high for d in picked)
    assert int(_metrics(at)["Responses"].replace(",", "")) > 0
