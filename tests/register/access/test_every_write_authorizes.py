"""Every public function of the register that acts for someone checks the permission first (issue 10,
section 4: ``score_imported`` checked none, and a viewer wrote a score run).

The functions are found, not listed: every public function of every ``register`` module that takes a
``store`` and an ``actor``. Each is called as a viewer and as a disabled admin account with *probes* for
its other arguments: objects that fail the test when the function uses them (reads an attribute, iterates,
tests truth) before the permission check, so the check must come first. Each call must raise
``PermissionDenied`` and write nothing but its "denied" audit event. A new write function that forgets
the check fails here, whatever its module.

``ALLOWED`` names the few functions any signed-in user may call, each with the reason.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable

import pytest

import register
from register import SYSTEM, Actor, Store
from register.access.identity import create_user, set_disabled
from register.errors import InvalidAccount, PermissionDenied

VIEWER = Actor("vera-viewer", "viewer")
DISABLED = Actor("dora-admin", "admin")  # an admin whose account was disabled after this Actor was made

# qualified name -> (why a viewer may call it, what a disabled account gets: an error class or None = allowed)
ALLOWED: dict[str, tuple[str, type[Exception] | None]] = {
    "register.access.permissions.authorize": ("the permission check itself", None),
    "register.access.permissions.deny": ("records a refusal; only the checks call it", None),
    "register.access.permissions.require_other_person": (
        "the four-eyes check itself; its callers authorise first", None),
    "register.access.version_approvals.require_second_person": (
        "the four-eyes check of versioned rules; its callers authorise first", None),
    "register.access.version_approvals.approve": (
        "the shared approval of a pending version; each kind's approve_* function authorises first", None),
    "register.access.version_approvals.endorse": (
        "the shared endorsement of a system-made version; profiles.endorse_draft authorises first", None),
    "register.access.identity.record_session_event": (
        "records what happened to the actor's own session (login, logout, expiry, revocation), also when the "
        "account was just disabled", None),
    "register.access.web_sessions.start": (
        "every account starts its own web session at its login, just authenticated; Store.write re-reads the account "
        "(disabled, another role: refused)", PermissionDenied),
    "register.access.web_sessions.end": (
        "every account ends its own web session (a logout; another's is refused), also when the account was just "
        "disabled: it records what happened to the session", None),
    "register.access.identity.change_own_password": (
        "every signed-in user changes their own password; a disabled account's password no longer verifies",
        InvalidAccount),
    "register.access.token_failures.refuse": (
        "records a failed API-token authentication (its actor is the token's account, which acts in nothing); only "
        "api_tokens.authenticate calls it", None),
    "register.access.api_tokens.list_tokens": (
        "every signed-in account lists its own API tokens; another's, or all, need users.manage", PermissionDenied),
    "register.access.api_tokens.revoke_token": (
        "every signed-in account revokes its own API tokens (found by the token's id); another's need users.manage",
        PermissionDenied),
    "register.scoring.elicitation.submit_weights": (
        "a facilitator may name experts of any role, viewers too; the session's list of experts is checked",
        PermissionDenied),
    "register.scoring.elicitation.round_submissions": (
        "a read: an expert of any role reads the round's submissions", PermissionDenied),
    "register.labels.agreement.agreement_report": (
        "a read: every role may read the annotators' agreement (Permission.READ)", PermissionDenied),
    "register.access.second_admin.may_name_second_admin": (
        "a read: whether the actor may name a second admin now, False for anyone but the sole admin (the account is "
        "re-read); the write, name_second_admin, authorises", None),
    "register.waiting.items.waiting_for": (
        "a read: every signed-in role has its list of what waits for it (Permission.READ)", PermissionDenied),
    "register.feedback.items.report_feedback": (
        "anyone signed in reports a problem with an answer (paper section V.A); validating it is a reviewer's",
        PermissionDenied),
}


def actor_functions() -> dict[str, Callable]:
    """Every public function of the register that takes ``store`` and ``actor``, by qualified name."""
    found = {}
    for info in pkgutil.walk_packages(register.__path__, "register."):
        if info.name.endswith("__main__"):
            continue  # running it would run the command line
        module = importlib.import_module(info.name)
        for name, fn in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module.__name__:
                continue
            parameters = inspect.signature(fn).parameters
            if "store" in parameters and "actor" in parameters:
                found[f"{module.__name__}.{name}"] = fn
    return found


FUNCTIONS = actor_functions()


class Probe:
    """An argument the function must not use before its permission check: printing it is all it allows
    (the refusal's audit event names the entity)."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return f"<probe {self._name}>"

    __str__ = __repr__

    def __getattr__(self, attribute: str):
        raise AssertionError(f"argument {self._name!r} used ({attribute}) before the permission check")

    def _used(self, *args, **kwargs):
        raise AssertionError(f"argument {self._name!r} used before the permission check")

    __bool__ = __len__ = __iter__ = __int__ = __index__ = __float__ = __getitem__ = __call__ = _used
    __lt__ = __le__ = __gt__ = __ge__ = __add__ = __radd__ = __contains__ = __fspath__ = _used


def probes(fn: Callable) -> dict[str, Probe]:
    """A probe for every required argument but ``store`` and ``actor``."""
    return {name: Probe(name) for name, p in inspect.signature(fn).parameters.items()
            if name not in ("store", "actor") and p.default is inspect.Parameter.empty
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


@pytest.fixture(scope="module")
def accounts(tmp_path_factory) -> Store:
    """A register with an enabled viewer and a disabled admin (one shared database: each test only adds
    events and measures what it added)."""
    from register.scoring.profiles import ensure_default_profile

    store = Store(tmp_path_factory.mktemp("authz") / "register.duckdb")
    ensure_default_profile(store, SYSTEM)
    create_user(store, SYSTEM, "root-admin", "admin")
    create_user(store, SYSTEM, VIEWER.name, VIEWER.role)
    create_user(store, SYSTEM, DISABLED.name, DISABLED.role)
    set_disabled(store, SYSTEM, DISABLED.name, True)
    yield store
    store.close()


def _events(store: Store) -> list[tuple]:
    return store.query("SELECT seq, action, actor_name FROM audit_events ORDER BY seq")


def test_the_enumeration_finds_the_write_functions():
    """Not vacuous: the known writers are found (the one of the issue among them), and every allow-listed
    name still exists."""
    assert len(FUNCTIONS) >= 40
    assert {"register.scoring.scorer.score_imported", "register.scoring.profiles.publish",
            "register.ingest.importer.import_path", "register.access.identity.create_user",
            "register.ingest.batches.write_chunk"} <= set(FUNCTIONS)
    assert set(ALLOWED) <= set(FUNCTIONS)


@pytest.mark.parametrize("qualified", sorted(set(FUNCTIONS) - set(ALLOWED)))
def test_a_viewer_is_refused_and_the_refusal_is_audited(accounts, qualified):
    fn = FUNCTIONS[qualified]
    before = _events(accounts)
    with pytest.raises(PermissionDenied):
        fn(store=accounts, actor=VIEWER, **probes(fn))
    added = _events(accounts)[len(before):]
    assert [(action, name) for _, action, name in added] == [("denied", VIEWER.name)]


def test_the_scoring_step_of_an_import_refuses_a_viewer_and_writes_no_score_run(accounts):
    """The hole of the issue: a viewer wrote a score run through ``score_imported``."""
    from register.scoring.profiles import active_profile
    from register.scoring.scorer import score_imported

    runs = accounts.scalar("SELECT count(*) FROM score_runs")
    with pytest.raises(PermissionDenied):
        score_imported(accounts, VIEWER, active_profile(accounts), batch_id=1)
    assert accounts.scalar("SELECT count(*) FROM score_runs") == runs


REFUSED_WHEN_DISABLED = sorted(q for q in FUNCTIONS if q not in ALLOWED or ALLOWED[q][1] is not None)


@pytest.mark.parametrize("qualified", REFUSED_WHEN_DISABLED)
def test_a_disabled_account_is_refused_whatever_its_role(accounts, qualified):
    """The Actor still says admin; the account was disabled after it was made (issue 10: "a disabled annotator
    or a demoted admin still passes")."""
    fn = FUNCTIONS[qualified]
    expected = ALLOWED[qualified][1] if qualified in ALLOWED else PermissionDenied
    before = _events(accounts)
    with pytest.raises(expected):
        fn(store=accounts, actor=DISABLED, **probes(fn))
    added = [(action, name) for _, action, name in _events(accounts)[len(before):]]
    assert added == ([("denied", DISABLED.name)] if expected is PermissionDenied else [])
