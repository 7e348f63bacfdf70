"""Judge policy versions in the register (``judge_policies``): publish one, turn the policy off, read the active one.

The policy itself (what it may allow, and what it never may) is ``hri_core.judge_policy``. No row, or no
active row, means no policy: every machine verdict waits for a person. Publishing and turning off are
admin actions (``Permission.RULES_EDIT``), audited with the policy they set. A published version takes effect
when a second person approves it (``approve_policy``, four eyes); turning the policy off lets the judge apply
less, so one admin does it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hri_core.judge_policy import JudgePolicy, judge_policy_from_dict
from register.access import version_approvals
from register.access.permissions import SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now

__all__ = ["active_policy", "approve_policy", "pending_policies", "policy_versions", "publish_policy",
           "turn_policy_off"]

KIND = "judge_policy"  # in approval_steps


def active_policy(store: Store) -> JudgePolicy | None:
    """The active judge policy, or None (the default: nothing is applied without a person)."""
    row = store.query_one("SELECT policy FROM judge_policies WHERE active ORDER BY version DESC LIMIT 1")
    return judge_policy_from_dict(json.loads(row[0])) if row else None


def policy_versions(store: Store) -> list[dict[str, Any]]:
    """Every version, newest first: version, active, created_by, created_at and the policy."""
    rows = store.dicts("SELECT version, active, created_by, created_at, policy FROM judge_policies "
                       "ORDER BY version DESC")
    for row in rows:
        row["policy"] = json.loads(row["policy"])
    return rows


def publish_policy(store: Store, actor: Actor, policy: Mapping[str, Any]) -> int:
    """Validate ``policy`` (without its version: the next one is given) and save it; its version.

    Four eyes: a person's version is pending (inactive) until a different person approves it
    (``approve_policy``); the ``system`` role's (command-line jobs) is made the active one at once.
    """
    authorize(store, actor, Permission.RULES_EDIT, entity_type="judge_policy")
    data = dict(policy)
    at_once = actor.role == SYSTEM_ROLE

    def write(tx: Transaction) -> Change:
        version = int(tx.scalar("SELECT coalesce(max(version), 0) + 1 FROM judge_policies"))
        checked = judge_policy_from_dict({**data, "version": version})
        before = tx.scalar("SELECT max(version) FROM judge_policies WHERE active")
        if at_once:
            tx.execute("UPDATE judge_policies SET active = false WHERE active")
        tx.execute("INSERT INTO judge_policies VALUES (?, ?, ?, ?, ?)",
                   [version, checked.model_dump_json(), at_once, actor.name, utc_now()])
        if not at_once:
            version_approvals.record_proposal(tx, KIND, version, actor)
        return Change("judge_policy", str(version), {"active_version": before}, checked.model_dump(mode="json"),
                      result=version)

    return int(store.write(actor, "judge_policy.publish" if at_once else "judge_policy.propose", write))


def pending_policies(store: Store) -> list[dict[str, Any]]:
    """Judge policy versions waiting for a second person: version, proposed_by, proposed_role, proposed_at."""
    return version_approvals.pending_versions(store, KIND)


def approve_policy(store: Store, actor: Actor, version: int, reason: str) -> None:
    """A second person (``Permission.RULES_EDIT``, not the one who saved it) makes a pending judge policy the
    active one (reason required, audited ``judge_policy.approve``)."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type=KIND, entity_id=version)

    def activate(tx: Transaction) -> None:
        tx.execute("UPDATE judge_policies SET active = false WHERE active")
        tx.execute("UPDATE judge_policies SET active = true WHERE version = ?", [version])

    version_approvals.approve(store, actor, KIND, version, reason, Permission.RULES_EDIT,
                              in_force=lambda tx: tx.scalar("SELECT max(version) FROM judge_policies WHERE active"),
                              take_effect=activate)


def turn_policy_off(store: Store, actor: Actor) -> int | None:
    """Deactivate the active policy (every verdict then waits for a person); the version turned off, if any."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="judge_policy")

    def write(tx: Transaction) -> Change:
        version = tx.scalar("SELECT max(version) FROM judge_policies WHERE active")
        tx.execute("UPDATE judge_policies SET active = false WHERE active")
        return Change("judge_policy", None if version is None else str(version), {"active_version": version},
                      {"active_version": None}, result=version)

    return store.write(actor, "judge_policy.off", write)  # type: ignore[no-any-return]
