"""Caches are cleared by what a write changed: a login, logout or failed login writes only accounts and
the audit trail, so it must not make every user's next view of the data cold (issue 14), while the
audit trail and the annotator list, which show those writes, are read afresh."""

from __future__ import annotations

import sys

import pytest
from streamlit.testing.v1 import AppTest

from register.console.queries import overview as overview_queries
from register.db import audit
from register.db.store import Transaction
from tests.helpers.accounts import TEST_PASSWORD, ensure_account
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")


@pytest.fixture
def calls(monkeypatch):
    """Counts of the register reads behind two cached reads: the data's filter options, the audit head."""
    import ui.features.labels  # reads list_users through its own name: patched there, whenever it was imported

    counts = {"filter_options": 0, "audit_head": 0, "list_users": 0}
    for module, name in ((overview_queries, "filter_options"), (audit, "head"), (ui.features.labels, "list_users")):
        original = getattr(module, name)
        key = {"head": "audit_head"}.get(name, name)

        def counted(*args, _original=original, _key=key, **kwargs):
            # the reads of the cached functions, not the head a write reads inside its own transaction to anchor it
            # (register.db.anchors: the first write of a UTC day) nor the one a register that wrote reads to anchor
            # it when it closes (the test's own account write, through a Store of its own)
            anchoring = sys._getframe(1).f_code.co_name == "at_close"
            if not (args and isinstance(args[0], Transaction)) and not anchoring:
                counts[_key] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return counts


def _log_in(username: str, password: str = TEST_PASSWORD) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.text_input(key="login_username").input(username)
    at.text_input(key="login_password").input(password)
    return at.button(key="FormSubmitter:login-Log in").click().run()


def test_logins_and_failed_logins_keep_the_data_caches_warm(seeded_db, calls):
    ensure_account("test-reviewer", "reviewer")
    ensure_account("test-viewer", "viewer")
    first = _log_in("test-reviewer")
    assert not first.exception and first.metric, "the reviewer sees the overview"
    assert calls["filter_options"] == 1
    # another user's failed login and login, then the first user's next view: still the cached read
    failed = _log_in("test-viewer", "not the password")
    assert [e.value for e in failed.error] == ["Invalid username or password"]
    second = _log_in("test-viewer")
    assert not second.exception and second.metric
    first.run()
    assert calls["filter_options"] == 1


def test_an_account_write_reads_the_audit_trail_and_annotators_afresh_a_data_write_everything(seeded_db, calls):
    from ui.features import audit_trail, labels
    from ui.framework import data

    data.filter_options(), audit_trail.head(), labels.possible_annotators()
    data.filter_options(), audit_trail.head(), labels.possible_annotators()
    assert calls == {"filter_options": 1, "audit_head": 1, "list_users": 1}
    ensure_account("new-annotator", "annotator")
    data.after_account_write()
    assert "new-annotator" in labels.possible_annotators()
    data.filter_options(), audit_trail.head()
    assert calls == {"filter_options": 1, "audit_head": 2, "list_users": 2}
    data.after_write()
    data.filter_options(), audit_trail.head(), labels.possible_annotators()
    assert calls == {"filter_options": 2, "audit_head": 3, "list_users": 3}
