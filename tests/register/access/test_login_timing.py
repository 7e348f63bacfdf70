"""Login answers take the same time whatever went wrong: no user enumeration by timing.

The cost of a login is one argon2 verification (hundreds of milliseconds); the rest is a few
milliseconds of database work. So instead of timing logins (tests never assert wall time), these
tests count the argon2 computations each path runs: an unknown name, a wrong password, a locked, a
disabled account and a must-change one-time password each run exactly one verification and no
hashing, with parameters as costly as a real account's. ``benchmarks/bench_login_timing.py`` prints
the measured times per path.
"""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import argon2
import pytest

from register import SYSTEM, Actor
from register.access import identity
from register.db.store import utc_now
from register.errors import LoginFailed

PASSWORD = "a long enough secret"


@pytest.fixture
def accounts(store):
    """alice (active), lou (locked now), dee (disabled) and newbie (one-time password to change)."""
    for name in ("alice", "lou", "dee"):
        identity.change_own_password(store, Actor(name, "viewer"),
                                     identity.create_user(store, SYSTEM, name, "viewer"), PASSWORD)
    identity.set_disabled(store, SYSTEM, "dee", True)
    one_time = identity.create_user(store, SYSTEM, "newbie", "viewer")
    now = utc_now()
    for _ in range(identity.FREE_ATTEMPTS):
        with pytest.raises(LoginFailed):
            identity.authenticate(store, "lou", "wrong guess", now=now)
    assert identity.get_user(store, "lou").locked_until > now + timedelta(seconds=1)
    return store, one_time, now + timedelta(seconds=1)


@pytest.fixture
def argon2_calls(monkeypatch):
    """Count the argon2 computations (the expensive part) that PasswordHasher runs."""
    calls: Counter[str] = Counter()
    module = argon2._password_hasher  # PasswordHasher.verify/hash call these two names
    for name in ("verify_secret", "hash_secret"):
        real = getattr(module, name)

        def spy(*args, _real=real, _name=name, **kwargs):
            calls[_name] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)
    return calls


PATHS = {  # path -> (username, password or "one-time", succeeds)
    "unknown name": ("nobody", PASSWORD, False),
    "empty name": ("", "", False),
    "not even text (lone surrogates)": ("x\ud800y", "p\udfffw", False),
    "right password, surrogate appended": ("alice", PASSWORD + "\ud800", False),
    "wrong password": ("alice", "not the password", False),
    "locked, right password": ("lou", PASSWORD, False),
    "locked, wrong password": ("lou", "not the password", False),
    "disabled, right password": ("dee", PASSWORD, False),
    "disabled, wrong password": ("dee", "not the password", False),
    "must change, one-time password": ("newbie", "one-time", True),
    "success": ("alice", PASSWORD, True),
}


def test_every_login_path_runs_exactly_one_argon2_verification(accounts, argon2_calls):
    store, one_time, now = accounts  # one database for every path: each account costs seconds of argon2
    counts = {}
    for path, (username, password, succeeds) in PATHS.items():
        password = one_time if password == "one-time" else password
        argon2_calls.clear()
        if succeeds:
            assert identity.authenticate(store, username, password, now=now).username == username
        else:
            with pytest.raises(LoginFailed):
                identity.authenticate(store, username, password, now=now)
        counts[path] = dict(argon2_calls)
    assert counts == {path: {"verify_secret": 1} for path in PATHS}


def test_the_dummy_hash_of_unknown_names_costs_what_a_real_hash_costs(store):
    identity.create_user(store, SYSTEM, "alice", "viewer")
    real = store.scalar("SELECT password_hash FROM users WHERE username = 'alice'")
    dummy = argon2.extract_parameters(identity._DUMMY_HASH)
    assert dummy == argon2.extract_parameters(real)
    assert dummy.type is argon2.Type.ID and dummy.memory_cost >= 19 * 1024  # OWASP's argon2id minimum
