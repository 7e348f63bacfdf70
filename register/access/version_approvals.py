"""Four eyes on versioned rules: a pending version and its approval, for every kind of versioned rules.

A version takes effect only when a second person makes it: scoring profiles and mitigation policies through
their draft -> active publish, evidence rules, use-case requesters, authority rules and judge policies
through a pending version that a different person with the publish permission approves (reason required,
audited). The steps live in ``version_approvals`` (migration 037), append-only:

- ``proposed``: who saved the version, in which role. A version the ``system`` role proposed (set-up, the
  demo, a command-line job) counts as nobody's: before anyone publishes it an admin *endorses* it, making it
  theirs, and a different admin then publishes it.
- ``endorsed``: that admin, with the reason.
- ``approved``: the second person who made a pending version take effect.

The ``system`` role (command-line jobs, run by whoever operates the machine) is exempt from four eyes on a
version a person proposed -- the operator is the second person -- as profile publishing always was; it never
publishes a version the system itself proposed.
"""

from __future__ import annotations

from typing import Any

from register.access.permissions import SYSTEM_ROLE, Permission, authorize, deny, require_other_person
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import FourEyesViolation, NotFound, RegisterError

__all__ = ["KINDS", "approval_of", "endorse", "endorsement", "pending_clause", "pending_versions", "proposed_by_system",
           "record_approval", "record_proposal", "require_second_person"]

# kind -> how people call a version of it (in refusals and audit events)
KINDS: dict[str, str] = {
    "scoring_profile": "draft profile version",
    "mitigation_policy": "draft mitigation policy version",
    "evidence_rules": "evidence rules version",
    "use_cases": "use-case requesters version",
    "authority_rules": "authority rules version",
    "judge_policy": "judge policy version",
}


def _what(kind: str, version: int) -> str:
    return f"{KINDS[kind]} {version}"


def record_proposal(tx: Transaction, kind: str, version: int, actor: Actor) -> None:
    """Record, inside the caller's write, that ``actor`` saved ``version`` of ``kind`` (and in which role)."""
    tx.execute("INSERT INTO version_approvals (kind, version, step, actor_name, actor_role, acted_at) "
               "VALUES (?, ?, 'proposed', ?, ?, ?)", [kind, version, actor.name, actor.role, utc_now()])


def record_approval(tx: Transaction, kind: str, version: int, actor: Actor, reason: str) -> None:
    """Record, inside the caller's write, that ``actor`` made ``version`` take effect, and why."""
    tx.execute("INSERT INTO version_approvals (kind, version, step, actor_name, actor_role, acted_at, reason) "
               "VALUES (?, ?, 'approved', ?, ?, ?, ?)", [kind, version, actor.name, actor.role, utc_now(), reason])


def _step(reader: Any, kind: str, version: int, step: str) -> dict[str, Any] | None:
    return reader.one("SELECT actor_name, actor_role, acted_at, reason FROM version_approvals "
                      "WHERE kind = ? AND version = ? AND step = ?", [kind, version, step])


def proposed_by_system(reader: Any, kind: str, version: int) -> bool:
    """Whether the ``system`` role proposed this version (then it is nobody's until an admin endorses it)."""
    proposal = _step(reader, kind, version, "proposed")
    return proposal is not None and proposal["actor_role"] == SYSTEM_ROLE


def endorsement(reader: Any, kind: str, version: int) -> dict[str, Any] | None:
    """The endorsement of a system-proposed version (actor_name, actor_role, acted_at, reason), or None."""
    return _step(reader, kind, version, "endorsed")


def approval_of(reader: Any, kind: str, version: int) -> dict[str, Any] | None:
    """The approval that made a pending version take effect (actor_name, actor_role, acted_at, reason), or None."""
    return _step(reader, kind, version, "approved")


def pending_clause(kind: str, column: str) -> str:
    """A SQL condition true for a version (``column``) of ``kind`` that is pending: proposed, not approved.
    ``kind`` is one of ``KINDS`` (checked: it is written into the SQL text)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of versioned rules: {kind!r}")
    return (f"EXISTS (SELECT 1 FROM version_approvals pa WHERE pa.kind = '{kind}' AND pa.version = {column} "
            f"AND pa.step = 'proposed' AND NOT EXISTS (SELECT 1 FROM version_approvals pb WHERE pb.kind = pa.kind "
            f"AND pb.version = pa.version AND pb.step = 'approved'))")


def pending_versions(reader: Any, kind: str) -> list[dict[str, Any]]:
    """Versions of ``kind`` waiting for a second person, oldest first: version, proposed_by, proposed_role,
    proposed_at."""
    return reader.dicts(
        "SELECT version, actor_name AS proposed_by, actor_role AS proposed_role, acted_at AS proposed_at "
        f"FROM version_approvals v WHERE kind = ? AND step = 'proposed' AND {pending_clause(kind, 'v.version')} "
        "ORDER BY version", [kind])


def require_second_person(store: Store, actor: Actor, kind: str, version: int, author: str | None,
                          permission: Permission) -> None:
    """Four eyes before ``actor`` makes ``version`` of ``kind`` take effect; raises ``FourEyesViolation``
    (audited) with the reason named.

    A version a person proposed: anyone but its author (the ``system`` role included: its operator is the
    second person). A version the system proposed: it needs an endorsement first, and a publisher who is
    neither the endorser nor the system.
    """
    what = _what(kind, version)
    if proposed_by_system(store, kind, version):
        endorsed = endorsement(store, kind, version)
        if endorsed is None:
            deny(store, actor, permission, kind, version,
                 f"{what} was made by the system and counts as nobody's: one admin endorses it first, then a "
                 "different admin publishes it (four eyes)", FourEyesViolation)
        elif actor.role == SYSTEM_ROLE:
            deny(store, actor, permission, kind, version,
                 f"{what} was made by the system: a person other than its endorser "
                 f"{endorsed['actor_name']} must publish it (four eyes)", FourEyesViolation)
        else:
            require_other_person(store, actor, endorsed["actor_name"], permission, entity_type=kind,
                                 entity_id=version, what=f"{what} (endorsed it)")
        return
    if actor.role != SYSTEM_ROLE:
        require_other_person(store, actor, author, permission, entity_type=kind, entity_id=version, what=what)


def endorse(store: Store, actor: Actor, kind: str, version: int, reason: str, permission: Permission) -> None:
    """An admin makes a version the system proposed theirs, so that a different admin may publish it.

    Refused (named reason) for a version a person proposed (nothing to endorse: its author is known), a version
    already endorsed, the ``system`` role itself, or without a reason. Audited as ``<kind>.endorse``.
    """
    authorize(store, actor, permission, entity_type=kind, entity_id=version)
    what = _what(kind, version)
    if not (reason or "").strip():
        raise RegisterError(f"a reason is required to endorse {what}")
    if actor.role == SYSTEM_ROLE:
        deny(store, actor, permission, kind, version,
             f"{what} was made by the system: a person endorses it, not the system (four eyes)", FourEyesViolation)
    if _step(store, kind, version, "proposed") is None:
        raise NotFound(f"{what} has no record of who proposed it")
    if not proposed_by_system(store, kind, version):
        raise RegisterError(f"{what} was made by a person: a different person publishes it, no endorsement needed")

    def fn(tx: Transaction) -> Change:
        if _step(tx, kind, version, "endorsed") is not None:
            raise RegisterError(f"{what} is already endorsed")
        tx.execute("INSERT INTO version_approvals (kind, version, step, actor_name, actor_role, acted_at, reason) "
                   "VALUES (?, ?, 'endorsed', ?, ?, ?, ?)",
                   [kind, version, actor.name, actor.role, utc_now(), reason.strip()])
        return Change(kind, str(version), None, {"endorsed_by": actor.name, "reason": reason.strip()})

    store.write(actor, f"{kind}.endorse", fn)
