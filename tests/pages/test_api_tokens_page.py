"""The API tokens page and the Users page's tokens (issue 35, item 2), with AppTest on the seeded database: every
signed-in person makes (the secret shown once), lists and revokes their own tokens; an admin sees and revokes every
account's and makes one for a chosen account; names from users show literally."""

from __future__ import annotations

import re

import pytest

from register import SYSTEM, Actor
from register.access.api_tokens import TOKEN_PATTERN, authenticate, create_token
from register.errors import TokenRejected
from tests.helpers.accounts import ensure_account, open_page
from ui.features.api_tokens import NEW_TOKEN
from ui.framework.text import code_span

PAGE = "pages/api_tokens.py"
HOSTILE = "![x](http://127.0.0.1:9/x.png) [l](javascript:alert(1)) :red[big]"


def _texts(at) -> str:
    kinds = ("markdown", "caption", "info", "error", "warning", "success", "title")
    return "\n".join(str(e.value) for kind in kinds for e in at.get(kind))


def _table(at):
    """The page's one table of tokens (the Users page's other table is the accounts')."""
    (table,) = [df.value for df in at.dataframe if "token id" in df.value.columns]
    return table


def _make(at, form: str, name: str = "", days: int | None = None, account: str | None = None):
    if account is not None:
        at.selectbox(key=f"{form}_account").set_value(account)
    at.text_input(key=f"{form}_name").input(name)
    if days is not None:
        at.number_input(key=f"{form}_days").set_value(days)
    return at.button(key=f"FormSubmitter:{form}-Make token").click().run()


def test_a_viewer_makes_a_token_sees_it_once_and_it_acts_as_them(seeded_db):
    at = open_page(PAGE, "viewer")
    assert at.title[0].value == "API tokens" and "No API tokens yet." in _texts(at)
    _make(at, "own_token_create", name="nightly import", days=7)
    assert not at.exception, at.exception
    (code,) = at.get("code")
    token = code.value
    assert TOKEN_PATTERN.fullmatch(token)
    assert "not shown again" in at.success[0].value and "nightly import" in at.success[0].value
    assert authenticate(seeded_db, token, client="page-test") == Actor("test-viewer", "viewer")
    table = _table(at)
    assert list(table["status"]) == ["active"] and list(table["name"]) == ["nightly import"]
    assert token[-20:] not in table.to_string()
    expires = table["expires"][0] - table["created"][0]
    assert expires.days == 7
    at.run()  # any next run: the secret is gone from the page and the session
    assert not at.get("code") and NEW_TOKEN not in at.session_state


def test_a_viewer_revokes_their_own_token_and_sees_no_other_account_s(seeded_db):
    ensure_account("test-reviewer", "reviewer")
    others = create_token(seeded_db, SYSTEM, "test-reviewer", name="not yours")
    at = open_page(PAGE, "viewer")
    _make(at, "own_token_create", name="to revoke")
    token = at.get("code")[0].value
    listed = _table(at)
    assert list(listed["name"]) == ["to revoke"]  # the reviewer's token is not listed here
    at.selectbox(key="own_token_revoke_token").set_value(TOKEN_PATTERN.fullmatch(token).group(1))
    at.button(key="FormSubmitter:own_token_revoke-Revoke token").click().run()
    assert not at.exception, at.exception
    assert "revoked" in at.success[0].value
    assert list(_table(at)["status"]) == ["revoked"]
    with pytest.raises(TokenRejected):
        authenticate(seeded_db, token, client="page-test")
    assert authenticate(seeded_db, others.token, client="page-test").name == "test-reviewer"


def test_a_token_s_name_shows_literally(seeded_db):
    at = open_page(PAGE, "annotator")
    _make(at, "own_token_create", name=HOSTILE)
    assert not at.exception, at.exception
    message = at.success[0].value
    assert "![x](http" not in message and "[l](javascript" not in message and ":red[" not in message
    assert list(_table(at)["name"]) == [HOSTILE]  # the table shows it as typed


def test_an_untouched_admin_form_makes_nothing(seeded_db):
    at = open_page("pages/users.py", "admin")
    at.button(key="FormSubmitter:admin_token_create-Make token").click().run()
    assert "no token was made" in _texts(at)
    assert seeded_db.scalar("SELECT count(*) FROM api_tokens") == 0


def test_an_admin_sees_every_account_s_tokens_revokes_one_and_makes_one_for_an_account(seeded_db):
    ensure_account("test-reviewer", "reviewer")
    theirs = create_token(seeded_db, SYSTEM, "test-reviewer", name="reviewer's job")
    at = open_page("pages/users.py", "admin")
    table = _table(at)
    assert list(table["owner"]) == ["test-reviewer"] and list(table["last used"].isna()) == [True]
    assert at.dataframe[0].value is not None and "username" in at.dataframe[0].value.columns  # the users table first

    at.selectbox(key="admin_token_revoke_token").set_value(theirs.token_id)
    at.button(key="FormSubmitter:admin_token_revoke-Revoke token").click().run()
    assert not at.exception, at.exception
    assert f"{code_span(theirs.token_id)} of {code_span('test-reviewer')} revoked" in at.success[0].value
    assert list(_table(at)["status"]) == ["revoked"]

    _make(at, "admin_token_create", name="pipeline", account="test-reviewer")
    assert not at.exception, at.exception
    (code,) = at.get("code")
    assert authenticate(seeded_db, code.value, client="page-test") == Actor("test-reviewer", "reviewer")
    assert re.search(r"for ` test-reviewer `", at.success[-1].value)
    made_by = seeded_db.query_one("SELECT created_by FROM api_tokens WHERE name = 'pipeline'")
    assert made_by == ("test-admin",)


def test_every_role_has_the_api_tokens_page_in_its_navigation(seeded_db):
    for role in ("viewer", "reviewer"):
        at = open_page(PAGE, role)  # switch_page fails for a page not in the role's navigation
        assert at.title[0].value == "API tokens"
