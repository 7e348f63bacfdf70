"""AppTest of issue 10, section 4 on the pages: the audit page flags an approval whose two accounts were
created by the same person; the users page grants the admin role only with a second admin; a company
(SSO) account disabled by an admin loses its session and cannot come back in."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from register import SYSTEM, Actor
from register.access import identity
from register.scoring import profiles
from tests.helpers.accounts import ensure_account, login
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def _open(page: str, role: str, username: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role, username)
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_the_audit_page_flags_a_publish_between_accounts_of_one_creator(seeded_db):
    author, approver = Actor("x-admin", "admin"), Actor("y-admin", "admin")
    enrol(seeded_db, author, approver, created_by="ops")
    version = profiles.create_draft(seeded_db, author, {"weights": {"F": 0.35, "C": 0.10}})
    at = _open("pages/audit.py", "reviewer")
    assert not any("linked to the author" in w.value for w in at.warning)  # not published yet: nothing to flag
    profiles.activate(seeded_db, approver, version, "reviewed")
    st.cache_data.clear()  # what the profiles page's publish does after its write (ui.framework.data.after_write)
    at.run()
    assert any("1 approval(s) were given by an account linked to the author's" in w.value for w in at.warning)
    flagged = next(d.value for d in at.dataframe if "link" in d.value.columns)
    assert flagged.to_dict("records")[0] | {"approved_at": None} == {
        "approval": "profile publish", "subject": f"scoring profile v{version}", "author": "x-admin",
        "approver": "y-admin", "approved_at": None, "link": "both accounts were created by ops"}


def test_the_audit_page_shows_no_flag_for_independent_accounts(seeded_db):
    enrol(seeded_db, Actor("p-admin", "admin"), created_by="ops")
    enrol(seeded_db, Actor("q-admin", "admin"), created_by="hr")
    version = profiles.create_draft(seeded_db, Actor("p-admin", "admin"), {"weights": {"F": 0.35, "C": 0.10}})
    profiles.activate(seeded_db, Actor("q-admin", "admin"), version, "reviewed")
    at = _open("pages/audit.py", "reviewer")
    assert not any("linked to the author" in w.value for w in at.warning)
    assert any("The audit chain verifies" in s.value for s in at.success)


def test_an_admin_added_on_the_users_page_waits_for_a_second_admin(seeded_db):
    at = _open("pages/users.py", "admin")
    at.text_input(key="user_add_name").input("deputy")
    at.selectbox(key="user_add_role").set_value("admin")
    at.button(key="FormSubmitter:user_add-Add account").click().run()
    assert not at.exception, at.exception
    assert identity.get_user(seeded_db, "deputy").role == "viewer"
    (grant,) = identity.admin_requests(seeded_db)
    assert (grant["username"], grant["requested_by"]) == ("deputy", "test-admin")
    at.button(key=f"grant_approve_{grant['grant_id']}").click().run()  # the requester tries to approve
    assert any("Needs a second person" in e.value for e in at.error)
    assert identity.get_user(seeded_db, "deputy").role == "viewer"
    ensure_account("second-admin", "admin")
    other = _open("pages/users.py", "admin", "second-admin")
    other.button(key=f"grant_approve_{grant['grant_id']}").click().run()
    assert not other.exception, other.exception
    assert identity.get_user(seeded_db, "deputy").role == "admin"


@pytest.fixture
def roles_file(tmp_path, monkeypatch):
    path = tmp_path / "roles.toml"
    path.write_text('[emails]\n"carol@example.com" = "admin"\n')
    monkeypatch.setenv("HRI_ROLES_FILE", str(path))
    return path


def test_a_disabled_sso_account_loses_its_session_and_cannot_come_back(seeded_db, roles_file):
    at = AppTest.from_file(APP, default_timeout=60)
    at.user["is_logged_in"] = True
    at.user["email"] = "carol@example.com"
    at.run()
    assert at.title[0].value == "Overview"
    assert identity.get_user(seeded_db, "carol@example.com").kind == "oidc"
    ensure_account("other-admin", "admin")  # carol (an admin by the roles file) must not be the last admin
    identity.set_disabled(seeded_db, SYSTEM, "carol@example.com", True)
    at.run()
    assert not at.metric
    assert any("cannot use this console" in e.value for e in at.error)
    refusals = seeded_db.query("SELECT action FROM audit_events WHERE actor_name = 'carol@example.com' "
                               "ORDER BY seq DESC LIMIT 2")
    assert [a for (a,) in refusals] == ["login.failed", "session.revoked"]
    at.run()  # not retried (nor audited) on every rerun
    assert seeded_db.scalar("SELECT count(*) FROM audit_events WHERE actor_name = 'carol@example.com' "
                            "AND action = 'login.failed'") == 1
