"""The role matrix, and that denials are audited and write nothing else."""

from __future__ import annotations

import pytest

from register import Actor
from register.access.permissions import ROLES, Permission, allowed, authorize, require_other_person
from register.errors import FourEyesViolation, PermissionDenied
from tests.helpers.actors import enrol


@pytest.fixture
def store(store):
    """The shared register, with accounts for this module's actors (the register re-reads them on every write)."""
    enrol(store, Actor("vic", "viewer"), Actor("rita", "reviewer"), Actor("alice", "admin"), Actor("bob", "admin"))
    return store


@pytest.mark.parametrize("role,permission,expected", [
    ("viewer", Permission.READ, True), ("viewer", Permission.LABEL, False),
    ("annotator", Permission.LABEL, True), ("annotator", Permission.REVIEW_DECIDE, False),
    ("reviewer", Permission.REVIEW_DECIDE, True), ("reviewer", Permission.CHECKLIST_SIGN, True),
    ("reviewer", Permission.PROFILE_EDIT, False), ("admin", Permission.PROFILE_PUBLISH, True),
    ("admin", Permission.USERS_MANAGE, True), ("system", Permission.USERS_MANAGE, True),
    ("intruder", Permission.READ, False),
])
def test_role_matrix(role, permission, expected):
    assert allowed(role, permission) is expected


def test_roles_are_cumulative():
    for permission in Permission:
        grants = [allowed(role, permission) for role in ROLES]
        assert grants == sorted(grants), permission  # once granted, every higher role has it


def test_denied_attempt_is_audited_and_raises(store):
    before = store.query_one("SELECT count(*) FROM audit_events")[0]
    with pytest.raises(PermissionDenied, match="may not review.decide"):
        authorize(store, Actor("vic", "viewer"), Permission.REVIEW_DECIDE, entity_type="response", entity_id="r-1")
    row = store.query_one("SELECT actor_name, actor_role, action, entity_id, after FROM audit_events "
                          "ORDER BY seq DESC LIMIT 1")
    assert row[:4] == ("vic", "viewer", "denied", "r-1") and "review.decide" in row[4]
    assert store.query_one("SELECT count(*) FROM audit_events")[0] == before + 1


def test_allowed_attempt_writes_nothing(store):
    before = store.query_one("SELECT count(*) FROM audit_events")[0]
    authorize(store, Actor("rita", "reviewer"), Permission.REVIEW_DECIDE, entity_type="response")
    assert store.query_one("SELECT count(*) FROM audit_events")[0] == before


def test_four_eyes(store):
    require_other_person(store, Actor("bob", "admin"), "alice", Permission.PROFILE_PUBLISH,
                         entity_type="scoring_profile", entity_id=2)
    with pytest.raises(FourEyesViolation, match="alice authored"):
        require_other_person(store, Actor("alice", "admin"), "alice", Permission.PROFILE_PUBLISH,
                             entity_type="scoring_profile", entity_id=2, what="profile version 2")
    assert store.query_one("SELECT action FROM audit_events ORDER BY seq DESC LIMIT 1")[0] == "denied"
