"""Judge policy versions in the register (``judge_policies``): publish one, turn the policy off, read the active one.

The policy itself (what it may allow, and what it never may) is ``hri_core.judge_policy``. No row, or no
active row, means no policy: every machine verdict waits for a person. Publishing and turning off are
admin actions (``Permission.RULES_EDIT``), audited with the policy they set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hri_core.judge_policy import JudgePolicy, judge_policy_from_dict
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now

__all__ = ["active_policy", "policy_versions", "publish_policy", "turn_policy_off"]


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
    """Validate ``policy`` (without its version: the next one is given) and make it the active one; its version."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="judge_policy")
    data = dict(policy)

    def write(tx: Transaction) -> Change:
        version = int(tx.scalar("SELECT coalesce(max(version), 0) + 1 FROM judge_policies"))
        checked = judge_policy_from_dict({**data, "version": version})
        before = tx.scalar("SELECT max(version) FROM judge_policies WHERE active")
        tx.execute("UPDATE judge_policies SET active = false WHERE active")
        tx.execute("INSERT INTO judge_policies VALUES (?, ?, true, ?, ?)",
                   [version, checked.model_dump_json(), actor.name, utc_now()])
        return Change("judge_policy", str(version), {"active_version": before}, checked.model_dump(mode="json"),
                      result=version)

    return int(store.write(actor, "judge_policy.publish", write))


def turn_policy_off(store: Store, actor: Actor) -> int | None:
    """Deactivate the active policy (every verdict then waits for a person); the version turned off, if any."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type="judge_policy")

    def write(tx: Transaction) -> Change:
        version = tx.scalar("SELECT max(version) FROM judge_policies WHERE active")
        tx.execute("UPDATE judge_policies SET active = false WHERE active")
        return Change("judge_policy", None if version is None else str(version), {"active_version": version},
                      {"active_version": None}, result=version)

    return store.write(actor, "judge_policy.off", write)  # type: ignore[no-any-return]
