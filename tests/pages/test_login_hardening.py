"""The login pages under hostile or careless input (AppTest on a seeded temporary database): a weak new
password is refused on the page with its reason and the account still has to choose one."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


def _submit_login(at: AppTest, username: str, password: str) -> AppTest:
    at.text_input(key="login_username").input(username)
    at.text_input(key="login_password").input(password)
    return at.button(key="FormSubmitter:login-Log in").click().run()


def _choose(at: AppTest, old: str, new: str) -> AppTest:
    at.text_input(key="pw_old").input(old)
    at.text_input(key="pw_new").input(new)
    at.text_input(key="pw_repeat").input(new)
    return at.button(key="FormSubmitter:password_change-Change password").click().run()


@pytest.mark.parametrize("weak, reason", [("password1234", "very common password"), (" " * 12, "only spaces")])
def test_a_weak_new_password_is_refused_on_the_page_with_its_reason(seeded_db, weak, reason):
    from register import SYSTEM
    from register.access.identity import create_user

    one_time = create_user(seeded_db, SYSTEM, "newcomer", "annotator")
    at = _submit_login(AppTest.from_file(APP, default_timeout=60).run(), "newcomer", one_time)
    assert at.title[0].value == "Choose a new password"
    at = _choose(at, one_time, weak)
    assert not at.exception, at.exception
    assert at.title[0].value == "Choose a new password" and not at.metric  # still not in
    assert len(at.error) == 1 and reason in at.error[0].value and "Invalid account data" in at.error[0].value
    at = _choose(at, one_time, "my own long password")
    assert at.title[0].value == "Overview"
