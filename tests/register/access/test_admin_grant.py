"""Four eyes when one person holds two accounts (issue 10, section 4): an admin created a second admin account
and published their own draft through it. Granting the admin role is now itself a four-eyes action (one
admin requests, another approves; the command line's ``system`` role grants directly, audited), and approvals
whose two accounts were created by the same person are listed for the audit page."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor
from register.access import identity
from register.access.four_eyes import LINKED_COLUMNS, linked_approvals
from register.errors import FourEyesViolation, PermissionDenied
from register.scoring import profiles
from tests.helpers.actors import enrol

ANN = Actor("ann", "admin")      # an admin
CARL = Actor("carl", "admin")    # a second, independent admin
SOCK = Actor("ann2", "admin")    # the account ann would like to be a second admin


@pytest.fixture
def store(store):
    enrol(store, ANN, created_by="ops")
    enrol(store, CARL, created_by="hr-onboarding")
    return store


def events(store, action: str) -> list[tuple]:
    return store.query("SELECT actor_name, entity_id, after FROM audit_events WHERE action = ? ORDER BY seq",
                       [action])


def test_an_admin_cannot_create_an_admin_account_alone(store):
    with pytest.raises(FourEyesViolation, match="needs a second admin"):
        identity.create_user(store, ANN, SOCK.name, "admin")
    assert identity.get_user(store, SOCK.name) is None
    assert events(store, "denied")[-1][:2] == ("ann", SOCK.name)


def test_an_admin_cannot_make_an_account_admin_alone(store):
    identity.create_user(store, ANN, SOCK.name, "viewer")
    with pytest.raises(FourEyesViolation, match="needs a second admin"):
        identity.set_role(store, ANN, SOCK.name, "admin")
    assert identity.get_user(store, SOCK.name).role == "viewer"


def test_the_admin_role_is_granted_by_a_second_admin(store):
    identity.create_user(store, ANN, SOCK.name, "viewer")
    grant = identity.request_admin(store, ANN, SOCK.name, "second account for holidays")
    with pytest.raises(FourEyesViolation, match="second person"):
        identity.approve_admin(store, ANN, grant)  # the requester
    with pytest.raises(PermissionDenied):
        identity.approve_admin(store, Actor(SOCK.name, "viewer"), grant)  # the account itself (not an admin)
    assert identity.get_user(store, SOCK.name).role == "viewer"
    identity.approve_admin(store, CARL, grant)
    assert identity.get_user(store, SOCK.name).role == "admin"
    (name, entity, after), = events(store, "user.admin_granted")
    assert (name, entity) == ("carl", SOCK.name)
    assert json.loads(after)["role"] == "admin" and json.loads(after)["requested_by"] == "ann"
    assert identity.admin_requests(store) == []
    assert identity.admin_requests(store, pending_only=False)[0]["status"] == "approved"


def test_a_request_can_be_cancelled_and_is_not_repeated(store):
    identity.create_user(store, ANN, SOCK.name, "viewer")
    grant = identity.request_admin(store, ANN, SOCK.name)
    with pytest.raises(identity.InvalidAccount, match="pending"):
        identity.request_admin(store, CARL, SOCK.name)
    identity.cancel_admin_request(store, ANN, grant)
    with pytest.raises(identity.StaleEdit, match="no longer pending"):
        identity.approve_admin(store, CARL, grant)
    assert identity.get_user(store, SOCK.name).role == "viewer"


def test_the_command_line_grants_admin_directly_and_it_is_audited(store):
    identity.create_user(store, SYSTEM, "ops-admin", "admin")
    identity.create_user(store, SYSTEM, "later-admin", "viewer")
    identity.set_role(store, SYSTEM, "later-admin", "admin")
    assert {u.username: u.role for u in identity.list_users(store)}["later-admin"] == "admin"
    assert json.loads(events(store, "user.create")[0][2])["role"] == "admin"
    assert json.loads(events(store, "user.set_role")[-1][2])["role"] == "admin"


def test_the_first_admin_is_bootstrapped_without_a_second_one(tmp_path):
    from register import Store

    store = Store(tmp_path / "fresh.duckdb")
    try:
        assert identity.bootstrap_admin(store, SYSTEM) is not None
        assert identity.get_user(store, "admin").role == "admin"
    finally:
        store.close()


# --- approvals whose two accounts were created by the same person --------------------------------------


def _publish_own_draft_through(store, author: Actor, approver: Actor) -> int:
    version = profiles.create_draft(store, author, {"weights": {"F": 0.35, "C": 0.10}})
    profiles.activate(store, approver, version, "reviewed")
    return version


def test_a_publish_through_an_account_the_author_created_is_flagged(store):
    """The scenario of the issue, as far as it still goes: ann creates ann2, gets it made an admin (carl
    approves the request) and publishes her own draft through it."""
    identity.create_user(store, ANN, SOCK.name, "viewer")
    identity.approve_admin(store, CARL, identity.request_admin(store, ANN, SOCK.name))
    version = _publish_own_draft_through(store, ANN, SOCK)
    flagged = linked_approvals(store)
    assert list(flagged.columns) == LINKED_COLUMNS
    rows = flagged[flagged["approval"] == "profile publish"].to_dict("records")
    assert [(r["subject"], r["author"], r["approver"], r["link"]) for r in rows] == [
        (f"scoring profile v{version}", "ann", "ann2", "ann2's account was created by ann")]


def test_accounts_created_by_one_third_person_are_flagged(store):
    enrol(store, Actor("x-admin", "admin"), Actor("y-admin", "admin"), created_by="ops")
    _publish_own_draft_through(store, Actor("x-admin", "admin"), Actor("y-admin", "admin"))
    (row,) = linked_approvals(store).to_dict("records")
    assert (row["author"], row["approver"], row["link"]) == ("x-admin", "y-admin",
                                                            "both accounts were created by ops")


def test_independent_accounts_are_not_flagged(store):
    _publish_own_draft_through(store, ANN, CARL)  # created by ops and by hr-onboarding
    assert linked_approvals(store).empty


def test_an_admin_grant_between_linked_accounts_is_flagged(store):
    enrol(store, Actor("ann-helper", "admin"), created_by="ann")
    identity.create_user(store, ANN, "newcomer", "viewer")
    identity.approve_admin(store, Actor("ann-helper", "admin"), identity.request_admin(store, ANN, "newcomer"))
    (row,) = linked_approvals(store).to_dict("records")
    assert (row["approval"], row["subject"], row["link"]) == ("admin role", "account newcomer",
                                                             "ann-helper's account was created by ann")
