"""Evidence rules, use-case requesters, authority rules and judge policies take effect under four eyes.

Before, one admin's save put a new version in force at once ("Evidence-rule versions are published by one
admin", issue 33). Now a person's save is pending; a different person with the permission approves it (reason
required, audited); the author approving is refused with a named reason. The ``system`` role (set-up and
command-line jobs) keeps saving versions in force at once, as profiles treat it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from hri_core.authority import default_authority_rules
from register import SYSTEM
from register.errors import FourEyesViolation, PermissionDenied, RegisterError
from register.governance import evidence
from register.scoring import authority_rules as au
from register.verify import policy as judge
from tests.helpers.actors import ANN, BOB, REVIEWER, enrol

JUDGE_POLICY = {"description": "the offline default may clear general low-stakes claims",
                "rules": [{"profiles": ["offline-default"], "backends": ["offline-lexical"], "labels": ["SUPPORTED"],
                           "min_confidence": 0.5, "categories": ["general"], "stakes": ["low", "unknown"],
                           "max_criticality": 2}]}


def _evidence_rules(store) -> list[dict]:
    rows = evidence.list_rules(store).drop(columns=["rule_version"]).to_dict("records")
    return [{**r, "guidance": f"{r['guidance']} (checked)"} for r in rows]


def _authority_rules() -> dict:
    rules = default_authority_rules().model_dump(mode="json")
    rules["rules"]["legal"] = {"max_tier": 4, "source_types": None, "note": "any but the weakest"}
    return rules


@dataclass
class Kind:
    """One kind of versioned rules: how to save a version, approve it and read the version in force."""

    name: str
    save: Callable[[Any, Any], int]
    approve: Callable[..., None]
    in_force: Callable[[Any], Any]
    pending: Callable[[Any], list[dict]]


KINDS = [
    Kind("evidence_rules", lambda s, a: evidence.save_rules(s, a, _evidence_rules(s), "checked guidance"),
         evidence.approve_rules, evidence.current_rule_version, evidence.pending_rule_versions),
    Kind("use_cases", lambda s, a: au.save_use_cases(s, a, [{"use_case": "helpdesk", "requester_roles": ["viewer"]}],
                                                     "helpdesk is asked by viewers"),
         au.approve_use_cases, au.use_case_version, au.pending_use_case_versions),
    Kind("authority_rules", lambda s, a: au.save_authority_rules(s, a, _authority_rules(), "commentary for legal"),
         au.approve_authority_rules, au.authority_rules_version, au.pending_authority_rule_versions),
    Kind("judge_policy", lambda s, a: judge.publish_policy(s, a, JUDGE_POLICY), judge.approve_policy,
         lambda s: None if judge.active_policy(s) is None else judge.active_policy(s).version, judge.pending_policies),
]


@pytest.fixture
def register(store):
    enrol(store, ANN, BOB, REVIEWER)
    evidence.ensure_default_rules(store, SYSTEM)
    return store


def _actions(store, kind: str) -> list[tuple[str, str]]:
    return [(r["actor_name"], r["action"]) for r in store.dicts(
        "SELECT actor_name, action FROM audit_events WHERE entity_type = ? ORDER BY seq", [kind])]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_a_persons_version_waits_for_a_second_person(register, kind):
    before = kind.in_force(register)
    version = kind.save(register, ANN)
    assert kind.in_force(register) == before  # not in force yet
    assert [(p["version"], p["proposed_by"]) for p in kind.pending(register)] == [(version, ANN.name)]
    with pytest.raises(FourEyesViolation, match=f"{ANN.name} authored .* version {version}"):
        kind.approve(register, ANN, version, "mine")
    with pytest.raises(PermissionDenied):
        kind.approve(register, REVIEWER, version, "not mine to approve")
    with pytest.raises(RegisterError, match="reason"):
        kind.approve(register, BOB, version, " ")
    assert kind.in_force(register) == before
    kind.approve(register, BOB, version, "checked against the paper")
    assert kind.in_force(register) == version
    assert kind.pending(register) == []
    actions = _actions(register, kind.name)
    assert (ANN.name, f"{kind.name}.propose") in actions and (BOB.name, f"{kind.name}.approve") in actions
    assert (ANN.name, "denied") in actions
    with pytest.raises(RegisterError, match="not waiting for approval"):
        kind.approve(register, BOB, version, "twice")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_the_system_role_saves_in_force_at_once(register, kind):
    version = kind.save(register, SYSTEM)
    assert kind.in_force(register) == version
    assert kind.pending(register) == []


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.name)
def test_an_older_pending_version_cannot_replace_a_newer_one_in_force(register, kind):
    older = kind.save(register, ANN)
    newer = kind.save(register, BOB)
    kind.approve(register, ANN, newer, "the newer one")
    with pytest.raises(RegisterError, match=f"older than version {newer}"):
        kind.approve(register, BOB, older, "the older one")
    assert kind.in_force(register) == newer


def test_a_pending_evidence_rule_version_is_listed_as_pending(register):
    version = KINDS[0].save(register, ANN)
    versions = evidence.rule_versions(register).set_index("rule_version")
    assert bool(versions.loc[version, "pending"]) is True
    evidence.approve_rules(register, BOB, version, "ok")
    versions = evidence.rule_versions(register).set_index("rule_version")
    assert (bool(versions.loc[version, "pending"]), versions.loc[version, "approved_by"]) == (False, BOB.name)
