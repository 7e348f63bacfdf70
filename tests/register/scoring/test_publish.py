"""Profile lifecycle: drafts by admins, four eyes and a reason to publish, rescoring that keeps history."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from register import RegisterError
from register.errors import FourEyesViolation, PermissionDenied
from register.scoring.profiles import (
    activate,
    active_profile,
    create_draft,
    get_profile,
    list_profiles,
    profile_diff,
    profile_meta,
    publish,
)
from tests.helpers.actors import ANN, BOB, REVIEWER

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
WEIGHTS = {"weights": {"F": 0.30, "C": 0.20, "U": 0.20, "O": 0.10, "S": 0.05, "P": 0.05, "H": 0.10}}


def _denials(store, actor):
    return store.query("SELECT action, after FROM audit_events WHERE actor_name = ? AND action = 'denied'",
                       [actor.name])


def test_the_drafts_creator_cannot_publish_it(demo_store):
    version = create_draft(demo_store, ANN, WEIGHTS)
    with pytest.raises(FourEyesViolation, match="second person"):
        publish(demo_store, ANN, version, "my own change")
    assert profile_meta(demo_store, version)["status"] == "draft"
    assert active_profile(demo_store).version == 1
    assert _denials(demo_store, ANN), "the refused attempt is audited"
    publish(demo_store, BOB, version, "reviewed by a second admin", as_of=AS_OF)
    assert active_profile(demo_store).version == version
    assert profile_meta(demo_store, version)["published_by"] == BOB.name


def test_a_reviewer_can_neither_draft_nor_publish(demo_store):
    with pytest.raises(PermissionDenied):
        create_draft(demo_store, REVIEWER, WEIGHTS)
    version = create_draft(demo_store, ANN, WEIGHTS)
    with pytest.raises(PermissionDenied):
        activate(demo_store, REVIEWER, version, "not mine to publish")
    assert profile_meta(demo_store, version)["status"] == "draft"


def test_a_reason_is_required_and_only_drafts_publish(demo_store):
    version = create_draft(demo_store, ANN, WEIGHTS)
    with pytest.raises(RegisterError, match="reason"):
        publish(demo_store, BOB, version, "   ")
    publish(demo_store, BOB, version, "ok", as_of=AS_OF)
    with pytest.raises(RegisterError, match="only a draft"):
        activate(demo_store, BOB, version, "again")
    statuses = {p["profile_version"]: p["status"] for p in list_profiles(demo_store)}
    assert statuses == {1: "archived", version: "active"}


def test_publishing_rescores_and_keeps_the_old_scores(demo_store):
    before = demo_store.query_one("SELECT count(*) FROM scores")[0]
    current = demo_store.query_one("SELECT count(*) FROM scores WHERE is_current")[0]
    version = create_draft(demo_store, ANN, WEIGHTS)
    steps = []
    summary = publish(demo_store, BOB, version, "new weights", as_of=AS_OF,
                      progress=lambda step, total, message: steps.append((step, total)))
    assert steps[0] == (0, 3) and steps[-1] == (3, 3)
    assert summary.responses_scored == current
    assert demo_store.query_one("SELECT count(*) FROM scores")[0] == before + current
    versions = dict(demo_store.query("SELECT profile_version, count(*) FROM scores WHERE is_current GROUP BY ALL"))
    assert versions == {version: current}
    assert demo_store.query_one("SELECT count(*) FROM scores WHERE NOT is_current AND profile_version = 1")[0] \
        == before
    run = demo_store.query_one("SELECT profile_version, as_of, actor_name FROM score_runs WHERE run_id = ?",
                               [summary.run_id])
    assert run == (version, AS_OF, BOB.name)


def test_a_published_version_is_never_edited_editing_makes_a_new_draft(demo_store):
    version = create_draft(demo_store, ANN, WEIGHTS)
    publish(demo_store, BOB, version, "ok", as_of=AS_OF)
    frozen = get_profile(demo_store, version).fingerprint()
    edit = create_draft(demo_store, ANN, {"feedback_half_life_days": 14}, based_on=version)
    assert edit == version + 1
    assert get_profile(demo_store, version).fingerprint() == frozen
    assert profile_meta(demo_store, edit)["based_on"] == version


def test_diff_names_each_changed_parameter(demo_store):
    base = get_profile(demo_store, 1)
    other = get_profile(demo_store, create_draft(demo_store, ANN, {
        **WEIGHTS, "bands": [{"name": "Low", "upper": 25, "action": "release"},
                             {"name": "Medium", "upper": 50, "action": "caution"},
                             {"name": "High", "upper": 75, "action": "review"},
                             {"name": "Critical", "upper": 100, "action": "block"}]}))
    rows = {r["parameter"]: (r["a"], r["b"]) for r in profile_diff(base, other)}
    assert rows == {"weights.F": (0.25, 0.30), "weights.U": (0.15, 0.20), "weights.S": (0.10, 0.05),
                    "weights.P": (0.10, 0.05), "bands[Low].upper": (20.0, 25.0)}
