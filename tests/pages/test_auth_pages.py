"""The login gate, roles on pages, the users and audit pages, source access and literal display of
hostile text: AppTest on a seeded temporary database (HRI_DB)."""

from __future__ import annotations

import json
import time

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.accounts import TEST_PASSWORD, ensure_account, login
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=60)


def _texts(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "error", "warning", "success", "title")
             for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def _events(store, action: str) -> list[tuple]:
    return store.query("SELECT actor_name, actor_role, after FROM audit_events WHERE action = ? ORDER BY seq",
                       [action])


def _submit_login(at, username: str, password: str) -> AppTest:
    at.text_input(key="login_username").input(username)
    at.text_input(key="login_password").input(password)
    return at.button(key="FormSubmitter:login-Log in").click().run()


# --- the gate ----------------------------------------------------------------------------------


def test_nobody_logged_in_sees_only_the_login_form(seeded_db):
    at = _app().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "HRI console — log in"
    assert not at.metric  # no data before login: the one table is the hidden one loading the grid's library
    assert [list(df.value.columns) for df in at.dataframe] == [["preload"]] and at.dataframe[0].value.size == 1
    assert at.text_input(key="login_password").proto.type == at.text_input(key="login_password").proto.PASSWORD


@pytest.mark.parametrize("username, password", [("test-reviewer", "wrong password"), ("nobody", TEST_PASSWORD),
                                                ("' OR '1'='1' --", "' OR '1'='1' --")])
def test_a_failed_login_says_only_invalid_username_or_password(seeded_db, username, password):
    ensure_account("test-reviewer", "reviewer")
    at = _submit_login(_app().run(), username, password)
    assert [e.value for e in at.error] == ["Invalid username or password"]
    assert not at.metric
    if username == "test-reviewer":  # an account: its failure is its own event
        assert _events(seeded_db, "login.failed")[-1][0] == username
    else:  # no account: counted in a window's event, the typed name is not kept
        assert _events(seeded_db, "login.failed_unknown")[-1][:2] == ("(unknown name)", "anonymous")


def test_login_with_a_local_account_then_logout(seeded_db):
    ensure_account("test-reviewer", "reviewer")
    at = _submit_login(_app().run(), "test-reviewer", TEST_PASSWORD)
    assert not at.exception, at.exception
    assert at.title[0].value == "Overview" and at.metric
    assert any("Logged in as **Test reviewer** (reviewer" in c.value for c in at.sidebar.caption)
    at.button(key="logout").click().run()
    assert at.title[0].value == "HRI console — log in" and not at.metric
    assert [e[:2] for e in _events(seeded_db, "login")][-1] == ("test-reviewer", "reviewer")
    assert [e[:2] for e in _events(seeded_db, "logout")][-1] == ("test-reviewer", "reviewer")


def test_a_one_time_password_must_be_changed_at_first_login(seeded_db):
    from register import SYSTEM
    from register.access.identity import create_user

    one_time = create_user(seeded_db, SYSTEM, "newcomer", "annotator")
    at = _submit_login(_app().run(), "newcomer", one_time)
    assert at.title[0].value == "Choose a new password" and not at.metric
    at.text_input(key="pw_old").input(one_time)
    at.text_input(key="pw_new").input("my own long password")
    at.text_input(key="pw_repeat").input("my own long password")
    at.button(key="FormSubmitter:password_change-Change password").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Overview"
    assert _events(seeded_db, "user.password_change")[-1][0] == "newcomer"


def test_an_idle_session_expires(seeded_db, monkeypatch):
    monkeypatch.setenv("HRI_SESSION_MINUTES", "5")
    at = _app()
    login(at, "viewer")
    at.run()
    assert at.title[0].value == "Overview"
    at.session_state["hri_auth"]["last_seen"] = time.time() - 6 * 60
    at.run()
    assert at.title[0].value == "HRI console — log in"
    assert any("expired after 5 minutes" in i.value for i in at.info)
    assert _events(seeded_db, "session.expired")[-1][0] == "test-viewer"


def test_an_active_session_within_the_timeout_stays(seeded_db):
    at = _app()
    login(at, "viewer")
    at.run()
    at.session_state["hri_auth"]["last_seen"] = time.time() - 29 * 60  # default: 30 minutes
    at.run()
    assert at.title[0].value == "Overview"


def test_disabling_an_account_ends_its_session(seeded_db):
    from register import SYSTEM
    from register.access.identity import set_disabled

    at = _app()
    login(at, "annotator")
    at.run()
    set_disabled(seeded_db, SYSTEM, "test-annotator", True)
    at.run()
    assert at.title[0].value == "HRI console — log in"
    assert _events(seeded_db, "session.revoked")[-1][0] == "test-annotator"


def test_a_password_reset_ends_the_accounts_session(seeded_db):
    """Issue 34, class 9: as disabling does; the session's next run is the login page, the end is audited."""
    from register import SYSTEM
    from register.access.identity import reset_password

    at = _app()
    login(at, "annotator")
    at.run()
    assert at.title[0].value == "Overview"
    reset_password(seeded_db, SYSTEM, "test-annotator")
    at.run()
    assert at.title[0].value == "HRI console — log in"
    assert any("password was reset" in i.value for i in at.info)
    actor, _, after = _events(seeded_db, "session.revoked")[-1]
    assert actor == "test-annotator" and "password reset" in after


def test_first_start_without_accounts_bootstraps_an_admin_without_showing_its_password(seeded_db_without_accounts):
    seeded_db = seeded_db_without_accounts
    at = _app().run()
    assert seeded_db.query_one("SELECT username, role, must_change_password FROM users") == ("admin", "admin", True)
    assert "printed in the terminal" in _texts(at)


# --- roles on pages ----------------------------------------------------------------------------


def test_a_viewer_sees_the_queue_but_not_the_decision_form(seeded_db):
    at = _app()
    login(at, "viewer")
    at.run()
    at.switch_page("pages/review_queue.py").run()
    assert not at.exception, at.exception
    assert at.metric and not at.get("radio")
    assert any("recording a decision needs the reviewer" in i.value for i in at.info)


def test_a_viewer_is_refused_by_the_service_even_when_the_page_is_bypassed(seeded_db):
    from register import Actor
    from register.console.review import record_decision
    from register.errors import PermissionDenied

    with pytest.raises(PermissionDenied):
        record_decision(seeded_db, Actor("test-viewer", "viewer"), "paper-table-v", 1, "block", "no")
    assert _events(seeded_db, "denied")[-1][:2] == ("test-viewer", "viewer")


@pytest.mark.parametrize("role, users_ok, audit_ok", [("viewer", False, False), ("annotator", False, False),
                                                      ("reviewer", False, True), ("admin", True, True)])
def test_admin_pages_are_listed_and_open_only_for_their_roles(seeded_db, role, users_ok, audit_ok):
    at = _app()
    login(at, role)
    at.run()
    for page, ok, refusal in (("users", users_ok, "cannot manage users"),
                              ("audit", audit_ok, "cannot open the audit trail")):
        path = f"pages/{page}.py"
        if ok:
            shown = at.switch_page(path).run()
        else:
            with pytest.raises(ValueError, match="Could not find a navigation page"):
                at.switch_page(path)  # not in this role's navigation
            shown = AppTest.from_file(str(REPO_ROOT / path), default_timeout=60)  # opened directly anyway
            login(shown, role)
            shown.run()
        assert not shown.exception, shown.exception
        assert bool(shown.get("dataframe")) is ok
        assert (refusal in _texts(shown)) is not ok


# --- users page --------------------------------------------------------------------------------


def test_admin_adds_a_user_sees_the_one_time_password_once_and_it_is_audited(seeded_db):
    at = _app()
    login(at, "admin")
    at.run()
    at.switch_page("pages/users.py").run()
    at.text_input(key="user_add_name").input("new.reviewer")
    at.text_input(key="user_add_display").input("<b>New</b> Reviewer")
    at.selectbox(key="user_add_role").set_value("reviewer")
    at.button(key="FormSubmitter:user_add-Add account").click().run()
    assert not at.exception, at.exception
    codes = at.get("code")
    assert len(codes) == 1
    password = codes[0].value
    from register.access.identity import authenticate

    assert authenticate(seeded_db, "new.reviewer", password).must_change_password
    table = at.dataframe[0].value
    assert "<b>New</b> Reviewer" in set(table["display name"])  # stored and shown literally
    assert _events(seeded_db, "user.create")[-1][:2] == ("test-admin", "admin")
    at.run()
    assert not at.get("code")  # shown once


def test_admin_disables_and_resets_a_user(seeded_db):
    ensure_account("test-viewer", "viewer")
    at = _app()
    login(at, "admin")
    at.run()
    at.switch_page("pages/users.py").run()
    at.selectbox(key="user_change_name").set_value("test-viewer")
    at.selectbox(key="user_change_action").set_value("disable")
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    assert not at.exception, at.exception
    assert seeded_db.query_one("SELECT disabled FROM users WHERE username = 'test-viewer'")[0] is True
    at.selectbox(key="user_change_name").set_value("test-viewer")
    at.selectbox(key="user_change_action").set_value("reset password")
    at.button(key="FormSubmitter:user_change-Apply").click().run()
    assert len(at.get("code")) == 1
    assert [e[0] for e in _events(seeded_db, "user.reset_password")] == ["test-admin"]


def test_an_injection_username_is_refused_and_nothing_is_written(seeded_db):
    at = _app()
    login(at, "admin")
    at.run()
    at.switch_page("pages/users.py").run()
    before = seeded_db.query_one("SELECT count(*) FROM users")[0]
    at.text_input(key="user_add_name").input("x'; DROP TABLE users; --")
    at.button(key="FormSubmitter:user_add-Add account").click().run()
    assert any("username" in e.value for e in at.error)
    assert seeded_db.query_one("SELECT count(*) FROM users")[0] == before


# --- audit page --------------------------------------------------------------------------------


def test_audit_page_shows_the_chain_status_and_filters_in_sql(seeded_db):
    at = _app()
    login(at, "reviewer")
    at.run()
    at.switch_page("pages/audit.py").run()
    assert not at.exception, at.exception
    assert any("The audit chain verifies" in s.value for s in at.success)
    total = seeded_db.query_one("SELECT count(*) FROM audit_events")[0]
    assert f"{total:,} matching events" in _texts(at)
    at.text_input(key="audit_actor").input("test-rev").run()
    frame = at.dataframe[0].value
    assert set(frame["actor_name"]) == {"test-reviewer"}
    at.text_input(key="audit_actor").input("' OR '1'='1").run()
    assert not at.exception and "0 matching events" in _texts(at)
    assert seeded_db.query_one("SELECT count(*) FROM audit_events")[0] >= total


def test_audit_page_shows_a_broken_chain(seeded_db):
    ensure_account("test-reviewer", "reviewer")
    with seeded_db.cursor() as cur:
        cur.execute("UPDATE audit_events SET actor_name = 'Mallory' WHERE seq = 2")
    at = _app()
    login(at, "reviewer")
    at.run()
    at.switch_page("pages/audit.py").run()
    assert any("does NOT verify: first broken event 2" in e.value for e in at.error)


def test_audit_csv_escapes_formulas():
    import pandas as pd

    from ui.framework.exports import to_csv_bytes

    text = to_csv_bytes(pd.DataFrame({"actor_name": ["=HYPERLINK(\"http://x\")", "+1", "bob"]})).decode()
    assert "'=HYPERLINK" in text and "'+1" in text and "\nbob" in text


# --- source access and hostile text on the detail page ------------------------------------------


@pytest.mark.parametrize("role, span_visible", [("viewer", False), ("reviewer", False), ("admin", True)])
def test_restricted_source_spans_are_withheld_on_the_detail_page(seeded_db, role, span_visible):
    with seeded_db.cursor() as cur:
        # the demo registers the contract readable by every role; here it is restricted to admins
        cur.execute("UPDATE sources SET restricted_to = ['admin'] WHERE source_id = 'contract-2024-07'")
    assert seeded_db.scalar("SELECT restricted_to FROM sources WHERE source_id = 'contract-2024-07'") == ["admin"]
    at = _app()
    login(at, role)
    at.query_params["response_id"] = "paper-table-v"
    at.run()
    at.switch_page("pages/response_detail.py").run()
    assert not at.exception, at.exception
    claims = at.dataframe[0].value.set_index("claim_id")
    assert claims.loc["paper-table-v-3", "source_id"] == "contract-2024-07"  # the reader learns it exists
    if span_visible:
        assert claims.loc["paper-table-v-3", "span"] == "Support hours: Mon-Fri 8:00-18:00"
        assert claims.loc["paper-table-v-3", "source_access"] == "readable"
    else:
        assert claims.loc["paper-table-v-3", "span"] is None
        assert "ACCESS_GAP" in claims.loc["paper-table-v-3", "source_access"]
        assert "Mon-Fri" not in claims.to_string()
        assert "restricted source" in _texts(at)


HOSTILE = {"question": "'; DROP TABLE responses; --", "claim": "<img src=x onerror=alert(1)>",
           "answer": "Intro. <img src=x onerror=alert(1)> <script>alert('x')</script> **bold** [link](http://x)"}


def hostile_record() -> dict:
    return {"response_id": "xss-1", "use_case": "<script>alert(2)</script>", "question": HOSTILE["question"],
            "answer": HOSTILE["answer"],
            "claims": [{"claim_id": "xss-1-1", "text": HOSTILE["claim"], "labels": ["CONTRADICTED"], "criticality": 3,
                        "source_id": "' OR 1=1 --", "span": "<script>alert(3)</script>"}]}


def test_hostile_text_is_stored_and_shown_literally(seeded_db, tmp_path):
    from register import SYSTEM
    from register.ingest.importer import import_path

    path = tmp_path / "hostile.jsonl"
    path.write_text(json.dumps(hostile_record()) + "\n")
    import_path(seeded_db, SYSTEM, path)
    assert seeded_db.query_one("SELECT question FROM responses WHERE response_id = 'xss-1'")[0] == HOSTILE["question"]
    assert seeded_db.query_one("SELECT count(*) FROM responses")[0] > 1  # the table is still there
    at = _app()
    login(at, "reviewer")
    at.query_params["response_id"] = "xss-1"
    at.run()
    at.switch_page("pages/response_detail.py").run()
    assert not at.exception, at.exception
    claims = at.dataframe[0].value
    assert list(claims["text"]) == [HOSTILE["claim"]] and list(claims["span"]) == ["<script>alert(3)</script>"]
    # the answer is drawn as HTML (highlights, kept line breaks) with every character of it escaped
    answer = next(h.proto.body for h in at.get("html") if "hri-answer" in h.proto.body)
    assert "&lt;img src=x onerror=alert(1)&gt;" in answer and "<img" not in answer
    for element in at.markdown:  # and nothing reaches markdown as HTML
        assert not element.proto.allow_html
        assert "<img" not in element.value.replace("\\<img", "")


def test_search_with_injection_text_is_literal(seeded_db):
    at = _app()
    login(at, "viewer")
    at.run()
    at.switch_page("pages/responses.py").run()
    at.text_input(key="responses_search").set_value("' OR '1'='1").run()
    assert not at.exception, at.exception
    assert not at.dataframe  # nothing matches the literal text
    assert "No responses match" in _texts(at)


# --- demo mode and SSO -------------------------------------------------------------------------


def test_demo_mode_shows_a_banner_and_offers_demo_accounts(seeded_db, monkeypatch):
    monkeypatch.setenv("HRI_DEMO_MODE", "1")
    at = _app().run()
    assert any("DEMO" in w.value for w in at.warning)
    at.button(key="login_demo_viewer").click().run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Overview" and any("DEMO" in w.value for w in at.warning)
    at.switch_page("pages/review_queue.py").run()
    assert any("DEMO" in w.value for w in at.warning) and not at.get("radio")
    assert _events(seeded_db, "login")[-1][:2] == ("demo-viewer", "viewer")


def test_without_demo_mode_there_is_no_banner_and_no_bypass(seeded_db, monkeypatch):
    monkeypatch.delenv("HRI_DEMO_MODE", raising=False)
    at = _app().run()
    assert not any("DEMO" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key and b.key.startswith("login_demo")]


@pytest.fixture
def roles_file(tmp_path, monkeypatch):
    path = tmp_path / "roles.toml"
    path.write_text('[emails]\n"carol@example.com" = "admin"\n[domains]\n"example.com" = "viewer"\n')
    monkeypatch.setenv("HRI_ROLES_FILE", str(path))
    return path


def test_an_sso_user_gets_the_role_the_roles_file_maps(seeded_db, roles_file):
    at = _app()
    at.user["is_logged_in"] = True
    at.user["email"] = "carol@example.com"
    at.user["name"] = "Carol"
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Overview"
    assert any("Logged in as **Carol** (admin" in c.value for c in at.sidebar.caption)
    login_event = _events(seeded_db, "login")[-1]
    assert login_event[:2] == ("carol@example.com", "admin") and json.loads(login_event[2])["method"] == "oidc"


def test_an_unmapped_sso_user_is_refused(seeded_db, roles_file):
    at = _app()
    at.user["is_logged_in"] = True
    at.user["email"] = "eve@elsewhere.org"
    at.run()
    assert not at.metric
    assert any("has no role in this console" in e.value for e in at.error)
