"""A one-admin install gets its second admin from the console (issue 35, item 5): while one admin account exists and
no admin grant was ever approved, that admin names a second one, flagged in the audit trail; afterwards the admin
role needs two admins again, and the exception serves nobody else: not a second time, not a non-admin, not oneself."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor
from register.access import identity, second_admin
from register.access.four_eyes import linked_approvals
from register.errors import FourEyesViolation, InvalidAccount, PermissionDenied
from tests.helpers.actors import enrol

SOLE = Actor("sole-admin", "admin")
BEA = Actor("bea", "viewer")
CAL = Actor("cal", "reviewer")


@pytest.fixture
def store(store):
    enrol(store, SOLE, created_by="system")
    identity.create_user(store, SOLE, BEA.name, "viewer")
    identity.create_user(store, SOLE, CAL.name, "reviewer")
    return store


def events(store, action: str) -> list[dict]:
    return store.dicts("SELECT actor_name, entity_id, after FROM audit_events WHERE action = ? ORDER BY seq", [action])


def role(store, name: str) -> str:
    return identity.get_user(store, name).role


def test_the_two_admin_ways_still_refuse_the_sole_admin_and_name_the_exception(store):
    """What blocked a one-admin install: the ways to the admin role need a second admin; the refusal now says
    what the sole admin can do instead."""
    with pytest.raises(FourEyesViolation, match="needs a second admin.*name one second admin once"):
        identity.set_role(store, SOLE, BEA.name, "admin")
    grant = identity.request_admin(store, SOLE, BEA.name)
    with pytest.raises(FourEyesViolation):
        identity.approve_admin(store, SOLE, grant)
    assert second_admin.may_name_second_admin(store, SOLE)


def test_the_sole_admin_names_a_second_admin_recorded_and_flagged(store):
    grant = second_admin.name_second_admin(store, SOLE, BEA.name, "our second governance admin")
    assert role(store, BEA.name) == "admin"
    (event,) = events(store, second_admin.EVENT)
    after = json.loads(event["after"])
    assert (event["actor_name"], event["entity_id"]) == (SOLE.name, BEA.name)
    assert after["named_while_sole_admin"] is True and after["role"] == "admin" and after["grant_id"] == grant
    assert after["reason"] == "our second governance admin" and "password_hash" not in after
    (named,) = second_admin.namings(store)
    assert (named["username"], named["named_by"], named["created_by"]) == (BEA.name, SOLE.name, SOLE.name)
    # not an approval by a second person: not listed as one (it is listed on its own, above)
    assert linked_approvals(store).empty


def test_a_pending_request_for_the_account_is_the_one_approved(store):
    grant = identity.request_admin(store, SOLE, BEA.name, "requested when the account was added")
    assert second_admin.name_second_admin(store, SOLE, BEA.name, "no second admin to approve it") == grant
    assert identity.admin_requests(store) == []
    (row,) = identity.admin_requests(store, pending_only=False)
    assert (row["status"], row["decided_by"]) == ("approved", SOLE.name)
    assert row["reason"] == "requested when the account was added; no second admin to approve it"


def test_once_two_admins_exist_the_normal_rule_applies_again(store):
    second_admin.name_second_admin(store, SOLE, BEA.name, "second admin")
    bea = Actor(BEA.name, "admin")
    for actor in (SOLE, bea):
        assert not second_admin.may_name_second_admin(store, actor)
        with pytest.raises(FourEyesViolation, match="not the only admin"):
            second_admin.name_second_admin(store, actor, CAL.name, "a third")
        with pytest.raises(FourEyesViolation, match="needs a second admin") as refused:
            identity.set_role(store, actor, CAL.name, "admin")
        assert "second admin once" not in str(refused.value)
    assert role(store, CAL.name) == "reviewer"
    # four eyes as before: one requests, the other approves
    grant = identity.request_admin(store, SOLE, CAL.name)
    with pytest.raises(FourEyesViolation):
        identity.approve_admin(store, SOLE, grant)
    identity.approve_admin(store, bea, grant)
    assert role(store, CAL.name) == "admin"
    refusals = [json.loads(e["after"])["reason"] for e in events(store, "denied")]
    assert sum("not the only admin" in r for r in refusals) == 2


def test_the_exception_is_not_used_a_second_time_when_the_install_is_back_to_one_admin(store):
    second_admin.name_second_admin(store, SOLE, BEA.name, "second admin")
    identity.set_role(store, SOLE, BEA.name, "viewer")  # demoted: sole-admin once more
    with pytest.raises(FourEyesViolation, match="granted the admin role before"):
        second_admin.name_second_admin(store, SOLE, CAL.name, "again")
    assert role(store, CAL.name) == "reviewer"


def test_an_install_that_had_two_admins_through_a_request_has_no_exception(store):
    enrol(store, Actor("other-admin", "admin"))
    identity.approve_admin(store, Actor("other-admin", "admin"), identity.request_admin(store, SOLE, CAL.name))
    identity.set_role(store, SOLE, CAL.name, "reviewer")
    identity.set_role(store, SYSTEM, "other-admin", "viewer")  # back to one admin
    with pytest.raises(FourEyesViolation, match="granted the admin role before"):
        second_admin.name_second_admin(store, SOLE, BEA.name, "one more")


def test_a_disabled_admin_is_enabled_not_replaced(store):
    enrol(store, Actor("away-admin", "admin"))
    identity.set_disabled(store, SOLE, "away-admin", True)
    with pytest.raises(FourEyesViolation, match="not the only admin account \\(away-admin"):
        second_admin.name_second_admin(store, SOLE, BEA.name, "cover")


def test_a_non_admin_cannot_use_it_not_even_on_themselves(store):
    for actor in (BEA, CAL):
        assert not second_admin.may_name_second_admin(store, actor)
        with pytest.raises(PermissionDenied, match="may not users.manage"):
            second_admin.name_second_admin(store, actor, actor.name, "promote myself")
        assert role(store, actor.name) == actor.role
    assert second_admin.may_name_second_admin(store, SOLE)  # nothing was used up


def test_the_sole_admin_cannot_name_their_own_account(store):
    with pytest.raises(FourEyesViolation, match="cannot name their own account"):
        second_admin.name_second_admin(store, SOLE, SOLE.name, "me again")
    assert second_admin.namings(store) == []


def test_a_stale_actor_and_the_system_role_are_refused(store):
    with pytest.raises(PermissionDenied, match="now reviewer"):  # the account's current role, not the Actor's
        second_admin.name_second_admin(store, Actor(CAL.name, "admin"), BEA.name, "stale")
    with pytest.raises(FourEyesViolation, match="system role sets the admin role directly"):
        second_admin.name_second_admin(store, SYSTEM, BEA.name, "cli")
    assert role(store, BEA.name) == "viewer"


@pytest.mark.parametrize(("name", "problem", "error"), [
    ("nobody", "does not exist", identity.NotFound),
    ("bea", "reason is required", InvalidAccount),
])
def test_bad_requests_name_the_problem(store, name, problem, error):
    with pytest.raises(error, match=problem):
        second_admin.name_second_admin(store, SOLE, name, "" if name == "bea" else "why")
    assert second_admin.may_name_second_admin(store, SOLE)


def test_only_an_enabled_local_account_is_named(store):
    identity.set_disabled(store, SOLE, CAL.name, True)
    with pytest.raises(InvalidAccount, match="disabled"):
        second_admin.name_second_admin(store, SOLE, CAL.name, "why")
    identity.sign_in_external(store, "sso@example.org", "viewer", kind="oidc")
    with pytest.raises(InvalidAccount, match="oidc account"):
        second_admin.name_second_admin(store, SOLE, "sso@example.org", "why")
    assert second_admin.namings(store) == []
