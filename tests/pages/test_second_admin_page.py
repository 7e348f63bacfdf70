"""AppTest of issue 35, item 5 on the pages: the sole admin names a second admin from the Users page, without a
second person and without stopping the console; it is flagged there and on the Audit trail page, and the form is
gone once two admins exist."""

from __future__ import annotations

from register.access import identity, second_admin
from tests.helpers.accounts import ensure_account, open_page

FORM_SUBMIT = "FormSubmitter:second_admin-Name a second admin"


def _has_form(at) -> bool:
    return any(b.key == FORM_SUBMIT for b in at.button)


def test_the_sole_admin_names_a_second_admin_from_the_users_page(seeded_db):
    assert [u.username for u in identity.list_users(seeded_db) if u.role == "admin"] == ["test-admin"]
    at = open_page("pages/users.py", "admin")
    at.text_input(key="user_add_name").input("deputy")
    at.selectbox(key="user_add_role").set_value("admin")
    at.button(key="FormSubmitter:user_add-Add account").click().run()
    assert identity.get_user(seeded_db, "deputy").role == "viewer"  # with a request nobody else could approve
    assert any("You are the only admin" in i.value for i in at.info) and _has_form(at)
    at.selectbox(key="second_admin_name").set_value("deputy")
    at.text_input(key="second_admin_reason").input("our second governance admin")
    at.button(key=FORM_SUBMIT).click().run()
    assert not at.exception, at.exception
    assert identity.get_user(seeded_db, "deputy").role == "admin"
    assert identity.admin_requests(seeded_db) == []
    assert any("now an admin" in s.value for s in at.success)
    flag = next(w.value for w in at.warning if "while the sole admin" in w.value)
    assert "deputy" in flag and r"test\-admin" in flag and "our second governance admin" in flag  # escaped
    assert not _has_form(at)  # two admins now: the normal rule
    audit = open_page("pages/audit.py", "reviewer")
    assert any("while their namer was the sole admin" in w.value for w in audit.warning)
    named = next(d.value for d in audit.dataframe if "named_by" in d.value.columns)
    assert named[["username", "named_by", "created_by"]].values.tolist() == [["deputy", "test-admin", "test-admin"]]
    assert seeded_db.scalar("SELECT count(*) FROM audit_events WHERE action = ?", [second_admin.EVENT]) == 1


def test_with_two_admins_the_users_page_offers_no_exception(seeded_db):
    ensure_account("second-admin", "admin")
    at = open_page("pages/users.py", "admin")
    assert not _has_form(at)
    assert not any("only admin" in i.value for i in at.info)
    assert not any("while the sole admin" in w.value for w in at.warning)


def test_the_form_refuses_without_a_reason_and_changes_nothing(seeded_db):
    ensure_account("candidate", "reviewer")
    at = open_page("pages/users.py", "admin")
    at.selectbox(key="second_admin_name").set_value("candidate")
    at.button(key=FORM_SUBMIT).click().run()
    assert not at.exception, at.exception
    assert any("reason is required" in e.value for e in at.error)
    assert identity.get_user(seeded_db, "candidate").role == "reviewer"
    assert second_admin.namings(seeded_db) == []
