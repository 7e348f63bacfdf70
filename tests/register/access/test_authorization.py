"""Every write service function of the register, called as each role: allowed or refused as the role
matrix says, refusals audited as "denied" and writing nothing else; four eyes on publishing profiles."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor
from register.access import identity
from register.access.permissions import ROLES, Permission, allowed
from register.console import review
from register.errors import FourEyesViolation, PermissionDenied
from register.ingest import importer
from register.scoring import profiles, scorer
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


@pytest.fixture
def authorization_register(store):
    """Three responses, one open quarantine row (bad-label), a draft profile by 'drafter', two users; accounts
    for 'drafter', 'ann' (annotator) and one person of each role (``store`` is a copy of the template
    ``tests.helpers.templates._authorization`` built once per worker: ``tests/conftest.py``)."""
    return store


@pytest.fixture
def loaded(authorization_register):
    return authorization_register


def _quarantine_fix(store) -> tuple[int, str]:
    qid, raw = store.query_one("SELECT quarantine_id, raw FROM quarantine WHERE status = 'open' "
                               "AND response_id = 'bad-label'")
    return qid, raw.replace("HALLUCINATED", "UNSUPPORTED")


def _draft(store) -> int:
    return store.query_one("SELECT max(profile_version) FROM scoring_profiles WHERE status = 'draft'")[0]


# name -> (permission, call(store, actor), the audit action an allowed call writes)
CALLS = {
    "import_path": (Permission.IMPORT, lambda s, a: importer.import_path(s, a, DATA / "responses.csv"),
                    "import.start"),
    "reimport_quarantined": (Permission.IMPORT,
                             lambda s, a: importer.reimport_quarantined(s, a, *_quarantine_fix(s)), "import.batch"),
    "rescore": (Permission.RESCORE, lambda s, a: scorer.rescore(s, a, profiles.active_profile(s)), "scores.rescore"),
    "create_draft": (Permission.PROFILE_EDIT, lambda s, a: profiles.create_draft(s, a, {"weights": {"F": 0.3,
                                                                                                   "C": 0.15}}),
                     "profile.create_draft"),
    "activate": (Permission.PROFILE_PUBLISH, lambda s, a: profiles.activate(s, a, _draft(s), "stricter on F"),
                 "profile.publish"),
    "record_decision": (Permission.REVIEW_DECIDE,
                        lambda s, a: review.record_decision(s, a, "r-001", 1, "block", "contradicts the contract"),
                        "review.decide"),
    "create_user": (Permission.USERS_MANAGE, lambda s, a: identity.create_user(s, a, "newbie", "annotator"),
                    "user.create"),
    "set_role": (Permission.USERS_MANAGE, lambda s, a: identity.set_role(s, a, "uma", "reviewer"), "user.set_role"),
    "set_disabled": (Permission.USERS_MANAGE, lambda s, a: identity.set_disabled(s, a, "uma", True), "user.disable"),
    "reset_password": (Permission.USERS_MANAGE, lambda s, a: identity.reset_password(s, a, "uma"),
                       "user.reset_password"),
}

TABLES = ("responses", "claims", "scores", "score_runs", "scoring_profiles", "review_decisions", "quarantine",
          "import_batches", "users")


def _snapshot(store) -> dict:
    counts = {t: store.query_one(f"SELECT count(*) FROM {t}")[0] for t in TABLES}
    counts["users_state"] = store.query("SELECT username, role, disabled, password_hash FROM users ORDER BY 1")
    counts["profiles_state"] = store.query("SELECT profile_version, status FROM scoring_profiles ORDER BY 1")
    counts["quarantine_state"] = store.query("SELECT quarantine_id, status FROM quarantine ORDER BY 1")
    return counts


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("name", list(CALLS))
def test_every_write_function_as_every_role(loaded, name, role):
    permission, call, action = CALLS[name]
    actor = Actor(f"{role}-person", role)
    before_seq = loaded.query_one("SELECT max(seq) FROM audit_events")[0]
    before = _snapshot(loaded)
    if allowed(role, permission):
        call(loaded, actor)
        actions = [a for (a,) in loaded.query("SELECT action FROM audit_events WHERE seq > ? AND actor_name = ?",
                                              [before_seq, actor.name])]
        assert action in actions and "denied" not in actions
        assert _snapshot(loaded) != before  # it did write
    else:
        with pytest.raises(PermissionDenied, match=f"may not {permission.value}"):
            call(loaded, actor)
        events = loaded.query("SELECT actor_name, actor_role, action, after FROM audit_events WHERE seq > ?",
                              [before_seq])
        assert len(events) == 1, events  # the refusal, and nothing else
        name_, role_, action_, after = events[0]
        assert (name_, role_, action_) == (actor.name, role, "denied")
        assert json.loads(after)["permission"] == permission.value
        assert _snapshot(loaded) == before


def test_the_matrix_is_what_the_brief_says():
    minimum = {name: next(r for r in ROLES if allowed(r, perm)) for name, (perm, _, _) in CALLS.items()}
    assert minimum == {"import_path": "annotator", "reimport_quarantined": "annotator", "rescore": "admin",
                       "create_draft": "admin", "activate": "admin", "record_decision": "reviewer",
                       "create_user": "admin", "set_role": "admin", "set_disabled": "admin",
                       "reset_password": "admin"}


@pytest.mark.parametrize("role", ["analyst", "", "ADMIN", "system "])
def test_unknown_roles_may_do_nothing(loaded, role):
    for _name, (_, call, _) in CALLS.items():
        with pytest.raises(PermissionDenied):
            call(loaded, Actor("someone", role))


def test_the_system_role_of_cli_jobs_may_do_everything(loaded):
    for _name, (_, call, _action) in CALLS.items():
        call(loaded, SYSTEM)
    assert loaded.query_one("SELECT count(*) FROM audit_events WHERE action = 'denied'")[0] == 0


def test_an_import_by_an_annotator_scores_the_new_batch_without_the_rescore_permission(loaded, tmp_path):
    annotator = Actor("ann", "annotator")
    new = tmp_path / "new.jsonl"
    new.write_text(json.dumps({"response_id": "n-1", "claims": [{"labels": ["UNSUPPORTED"], "criticality": 2}]}))
    report = importer.import_path(loaded, annotator, new)
    assert report.batches[0].score_run_id is not None
    assert loaded.query_one("SELECT actor_name FROM score_runs WHERE run_id = ?",
                            [report.batches[0].score_run_id])[0] == "ann"


def test_four_eyes_the_creator_of_a_draft_cannot_publish_it(loaded):
    version = _draft(loaded)
    drafter = Actor("drafter", "admin")
    with pytest.raises(FourEyesViolation, match="second person"):
        profiles.activate(loaded, drafter, version, "I approve my own work")
    assert loaded.query_one("SELECT status FROM scoring_profiles WHERE profile_version = ?", [version])[0] == "draft"
    denied = loaded.query_one("SELECT actor_name, action, entity_id FROM audit_events ORDER BY seq DESC LIMIT 1")
    assert denied == ("drafter", "denied", str(version))
    profiles.activate(loaded, Actor("second-admin", "admin"), version, "reviewed by a second person")
    assert loaded.query_one("SELECT status, published_by FROM scoring_profiles WHERE profile_version = ?",
                            [version]) == ("active", "second-admin")


def test_the_last_enabled_admin_cannot_be_disabled_or_demoted(store):
    identity.create_user(store, SYSTEM, "only-admin", "admin")
    with pytest.raises(identity.InvalidAccount, match="last enabled admin"):
        identity.set_disabled(store, SYSTEM, "only-admin", True)
    with pytest.raises(identity.InvalidAccount, match="last enabled admin"):
        identity.set_role(store, SYSTEM, "only-admin", "viewer")
    assert identity.get_user(store, "only-admin").role == "admin"
