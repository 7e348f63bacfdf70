"""A person's password must be hard to guess and typeable: common, low-variety, all-space and control-
character passwords are refused with the reason, wherever a password is set; the console's own one-time
passwords meet the same rules."""

from __future__ import annotations

import pytest

from register import SYSTEM, Actor
from register.access import identity
from register.access.password_policy import password_problem
from tests.helpers.actors import enrol

ONE_TIME_SAMPLES = 500

REFUSED = {  # password -> words of the reason
    "aaaaaaaaaaaa": "too easy to guess: Repeats",
    "password1234": "too easy to guess: This is a very common password",
    " " * 12: "only spaces",
    "\x00" * 12: "control character (U+0000 at position 1)",
}
GOOD = ["correct horse battery staple", "a long enough secret", "mot de passe très sûr",
        "Ünïcödé pässwörds wörk", "hri console 2026", "x" + "7Kq!" * 30 + "z"]


@pytest.fixture
def newcomer(store):
    """An account that has just logged in with its one-time password: it must choose its own."""
    return store, identity.create_user(store, SYSTEM, "newcomer", "annotator", "New Comer")


def _state(store) -> tuple:
    return store.query_one("SELECT password_hash, must_change_password, row_version FROM users "
                           "WHERE username = 'newcomer'")


@pytest.mark.parametrize("password", list(REFUSED), ids=["12 a", "password1234", "12 spaces", "12 NUL"])
def test_the_four_weak_passwords_of_the_issue_are_refused_at_password_change(newcomer, password):
    store, one_time = newcomer
    before = _state(store)
    with pytest.raises(identity.InvalidAccount, match="^the password") as refused:
        identity.change_own_password(store, Actor("newcomer", "annotator"), one_time, password)
    assert REFUSED[password] in str(refused.value)
    assert _state(store) == before  # nothing changed: the one-time password still works and must be changed
    assert identity.authenticate(store, "newcomer", one_time).must_change_password


def test_a_good_password_is_accepted_at_password_change(newcomer):
    store, one_time = newcomer
    identity.change_own_password(store, Actor("newcomer", "annotator"), one_time, "mot de passe très sûr")
    user = identity.authenticate(store, "newcomer", "mot de passe très sûr")
    assert not user.must_change_password


@pytest.mark.parametrize("password, reason", [
    ("qwertyuiop12", "too easy to guess"),                 # a keyboard row
    ("123456789012", "too easy to guess"),                 # a sequence
    ("abcdefghijkl", "too easy to guess"),
    ("Password1234!", "too easy to guess"),                # capitals and a symbol do not help a common word
    ("a\tgood long passphrase", "control character (U+0009 at position 2)"),
    ("a good long\npassphrase", "control character (U+000A at position 12)"),
    ("a good long pass\x7fphrase", "control character (U+007F"),
    ("a good long pass\ud800phrase", "lone surrogate (U+D800"),  # not text: argon2 could not even encode it
    ("\u3000" * 12, "only spaces"),                        # ideographic spaces are spaces too
    ("x" * 11, "at least 12 characters"),
    ("Z7k!" * 32 + "q", "at most 128 characters"),
    (None, "at least 12 characters"),
])
def test_weak_or_untypeable_passwords_are_refused_with_the_reason(password, reason):
    assert reason in (password_problem(password, username="alice") or "")


def test_the_username_and_display_name_count_as_guessable():
    assert password_problem("Longusername1", username="longusername1") == "the password must not be the username"
    assert password_problem("Alice Example 99") is None  # strong for a stranger ...
    assert "too easy to guess" in password_problem("Alice Example 99", username="alice",
                                                   display_name="Alice Example")  # ... not for Alice


@pytest.mark.parametrize("password", GOOD)
def test_good_passwords_pass(password):
    assert password_problem(password, username="alice", display_name="Alice Example") is None


def test_one_time_passwords_meet_the_rules_a_person_must_meet():
    passwords = {identity.one_time_password() for _ in range(ONE_TIME_SAMPLES)}
    assert len(passwords) == ONE_TIME_SAMPLES  # random
    assert [p for p in passwords if password_problem(p) is not None] == []
    assert min(len(p) for p in passwords) >= 16


def test_every_password_the_console_sets_itself_meets_the_rules(store):
    """create_user, reset_password and bootstrap_admin set one-time passwords, never a chosen one."""
    admin = Actor("boss", "admin")
    first = identity.bootstrap_admin(store, SYSTEM)  # only while no account exists
    enrol(store, admin)
    created = identity.create_user(store, admin, "carol", "viewer")
    reset = identity.reset_password(store, admin, "carol")
    assert [password_problem(p, username=u) for p, u in [(first, "admin"), (created, "carol"),
                                                          (reset, "carol")]] == [None, None, None]
    assert identity.authenticate(store, "carol", reset).must_change_password


def test_the_strength_estimator_installed_is_the_one_pinned_in_requirements():
    from importlib.metadata import version

    from tests.helpers.paths import REPO_ROOT

    pins = (REPO_ROOT / "requirements.txt").read_text().splitlines()
    assert f"zxcvbn=={version('zxcvbn')}" in pins
