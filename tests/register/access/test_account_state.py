"""The register does not trust the Actor it is given (issue 10, section 4): every write re-reads the account
the Actor names, in the write's own transaction. A disabled annotator's next import and a demoted admin's
next publish are refused and audited as "denied"; so is a name with no account. Company-identity (oidc) and
demo users are accounts too, made at their first login."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor, Store
from register.access import identity
from register.access.permissions import Permission, authorize
from register.db.store import Change
from register.errors import LoginFailed, PermissionDenied
from register.ingest import importer
from register.scoring import profiles
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"
ANNOTATOR = Actor("ada-annotator", "annotator")
DRAFTER = Actor("dan-drafter", "admin")
PUBLISHER = Actor("pia-publisher", "admin")


@pytest.fixture
def store(store):
    enrol(store, ANNOTATOR, DRAFTER, PUBLISHER)
    return store


def last_event(store: Store) -> tuple:
    return store.query_one("SELECT actor_name, actor_role, action, after FROM audit_events ORDER BY seq DESC LIMIT 1")


def test_a_disabled_annotator_can_no_longer_import(store):
    actor = ANNOTATOR  # made at login, before the account was disabled
    importer.import_path(store, actor, DATA / "responses.jsonl")
    identity.set_disabled(store, SYSTEM, actor.name, True)
    batches = store.scalar("SELECT count(*) FROM import_batches")
    with pytest.raises(PermissionDenied, match="disabled"):
        importer.import_path(store, actor, DATA / "responses.csv")
    assert store.scalar("SELECT count(*) FROM import_batches") == batches
    name, role, action, after = last_event(store)
    assert (name, role, action) == (actor.name, "annotator", "denied") and "disabled" in json.loads(after)["reason"]


def test_a_demoted_admin_can_no_longer_publish(store):
    version = profiles.create_draft(store, DRAFTER, {"weights": {"F": 0.35, "C": 0.10}})
    actor = PUBLISHER  # made at login, while the account was an admin
    identity.set_role(store, SYSTEM, actor.name, "reviewer")
    with pytest.raises(PermissionDenied, match="now reviewer"):
        profiles.publish(store, actor, version, "looks right")
    assert profiles.profile_meta(store, version)["status"] == "draft"
    assert last_event(store)[:3] == (actor.name, "admin", "denied")


def test_a_promoted_account_must_reload_too(store):
    """An Actor made before any role change is stale: the register acts only on the role the account has."""
    identity.set_role(store, SYSTEM, ANNOTATOR.name, "reviewer")
    with pytest.raises(PermissionDenied, match="now reviewer, not annotator"):
        importer.import_path(store, ANNOTATOR, DATA / "responses.jsonl")
    importer.import_path(store, Actor(ANNOTATOR.name, "reviewer"), DATA / "responses.jsonl")


def test_a_name_without_an_account_is_refused(store):
    with pytest.raises(PermissionDenied, match="has no account"):
        profiles.create_draft(store, Actor("mallory", "admin"), {"weights": {"F": 0.35, "C": 0.10}})
    assert last_event(store)[:3] == ("mallory", "admin", "denied")


def test_the_account_is_read_again_inside_the_write_itself(store, monkeypatch):
    """Disabled between the permission check and the write (a race): the write's own transaction refuses."""
    from register.scoring import profiles as module

    def authorize_then_disable(*args, **kwargs):
        authorize(*args, **kwargs)
        identity.set_disabled(store, SYSTEM, DRAFTER.name, True)

    monkeypatch.setattr(module, "authorize", authorize_then_disable)
    drafts = store.scalar("SELECT count(*) FROM scoring_profiles")
    with pytest.raises(PermissionDenied, match="disabled; nothing was saved"):
        profiles.create_draft(store, DRAFTER, {"weights": {"F": 0.35, "C": 0.10}})
    assert store.scalar("SELECT count(*) FROM scoring_profiles") == drafts
    name, _, action, after = last_event(store)
    assert (name, action) == (DRAFTER.name, "denied")
    assert json.loads(after) == {"attempted": "profile.create_draft",
                                 "reason": f"the account {DRAFTER.name} is disabled"}


def test_a_write_that_skips_the_permission_check_still_meets_the_account_check(store):
    identity.set_disabled(store, SYSTEM, ANNOTATOR.name, True)
    with pytest.raises(PermissionDenied):
        store.write(ANNOTATOR, "source.create", lambda tx: Change("source", "x"))
    assert last_event(store)[2] == "denied"


def test_the_command_line_system_role_needs_no_account(store):
    assert store.scalar("SELECT count(*) FROM users WHERE username = 'system'") == 0
    profiles.create_draft(store, SYSTEM, {"weights": {"F": 0.35, "C": 0.10}})
    assert last_event(store)[:3] == ("system", "system", "profile.create_draft")


def test_a_disabled_accounts_login_still_says_only_invalid_username_or_password(store):
    """Its failed-login event is written whatever the account's state (it is about the account, not by it)."""
    identity.set_disabled(store, SYSTEM, ANNOTATOR.name, True)
    with pytest.raises(LoginFailed):
        identity.authenticate(store, ANNOTATOR.name, "whatever it is")
    assert last_event(store)[:3] == (ANNOTATOR.name, "annotator", "login.failed")


# --- company identity provider and demo accounts -------------------------------------------------------


def test_an_sso_user_becomes_an_account_at_the_first_login_and_can_be_disabled(store):
    user = identity.sign_in_external(store, "carol@example.com", "admin", kind="oidc", display_name="Carol")
    assert (user.kind, user.role, user.display_name, user.disabled) == ("oidc", "admin", "Carol", False)
    with pytest.raises(LoginFailed):
        identity.authenticate(store, "carol@example.com", "")  # no local password to guess
    carol = Actor("carol@example.com", "admin")
    profiles.create_draft(store, carol, {"weights": {"F": 0.35, "C": 0.10}})
    identity.set_disabled(store, SYSTEM, carol.name, True)
    with pytest.raises(PermissionDenied, match="disabled"):
        profiles.create_draft(store, carol, {"weights": {"F": 0.3, "C": 0.15}})
    with pytest.raises(LoginFailed):
        identity.sign_in_external(store, carol.name, "admin", kind="oidc")
    assert last_event(store)[2] == "login.failed"


def test_an_sso_users_role_is_set_again_at_each_login(store):
    identity.sign_in_external(store, "dev@example.com", "reviewer", kind="oidc")
    user = identity.sign_in_external(store, "dev@example.com", "viewer", kind="oidc")
    assert user.role == "viewer"
    name, role, action, after = last_event(store)
    assert (name, role, action) == ("dev@example.com", "viewer", "login") and json.loads(after)["method"] == "oidc"


def test_an_sso_login_cannot_take_over_a_local_account(store):
    with pytest.raises(LoginFailed):
        identity.sign_in_external(store, DRAFTER.name, "admin", kind="oidc")
    assert identity.get_user(store, DRAFTER.name).kind == "local"


def test_demo_accounts_exist_only_in_demo_mode(store, monkeypatch):
    with pytest.raises(LoginFailed):
        identity.sign_in_external(store, "demo-reviewer", "reviewer", kind="demo")
    monkeypatch.setenv("HRI_DEMO_MODE", "1")
    demo = identity.sign_in_external(store, "demo-reviewer", "reviewer", kind="demo")
    actor = Actor(demo.username, demo.role)
    authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="response")
    monkeypatch.delenv("HRI_DEMO_MODE")
    with pytest.raises(PermissionDenied, match="demo mode is off"):
        authorize(store, actor, Permission.REVIEW_DECIDE, entity_type="response")


def test_enrol_is_what_tests_use_for_accounts(store):
    """The test helper makes accounts the register accepts (and nothing else)."""
    enrol(store, Actor("helper-made", "reviewer"))
    authorize(store, Actor("helper-made", "reviewer"), Permission.REVIEW_DECIDE, entity_type="response")
    with pytest.raises(LoginFailed):
        identity.authenticate(store, "helper-made", "")
