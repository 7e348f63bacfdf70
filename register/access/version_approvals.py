"""Four eyes on versioned rules: a pending version and its approval, for every kind of versioned rules.

A version takes effect only when a second person makes it: scoring profiles and mitigation policies through
their draft -> active publish, evidence rules, use-case requesters, authority rules, judge policies and the
use cases' lenses (a profile and CLAIM steps per use case)
through a pending version that a different person with the publish permission approves (reason required,
audited). The steps live in ``approval_steps`` (migration 035), append-only:

- ``proposed``: who saved the version, in which role. A version the ``system`` role proposed (set-up, the
  demo, a command-line job) counts as nobody's: before anyone publishes it an admin *endorses* it, making it
  theirs, and a different admin then publishes it.
- ``endorsed``: that admin, with the reason.
- ``approved``: the second person who made a pending version take effect.

The ``system`` role (command-line jobs, run by whoever operates the machine and controls the register's file)
is exempt from four eyes, as profile publishing always treated it; the rule binds the people of the console.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from register.access.permissions import SYSTEM_ROLE, Permission, deny, require_other_person
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import FourEyesViolation, NotFound, RegisterError

__all__ = ["KINDS", "approval_of", "approve", "endorse", "endorsement", "pending_clause", "pending_versions",
           "proposed_by_system", "record_approval", "record_proposal", "require_second_person", "takes_effect_at_once"]

# kind -> how people call a version of it (in refusals and audit events)
KINDS: dict[str, str] = {
    "scoring_profile": "draft profile version",
    "mitigation_policy": "draft mitigation policy version",
    "evidence_rules": "evidence rules version",
    "use_cases": "use-case requesters version",
    "authority_rules": "authority rules version",
    "judge_policy": "judge policy version",
    "use_case_lens": "use-case lens version",
}


def _what(kind: str, version: int) -> str:
    return f"{KINDS[kind]} {version}"


def record_proposal(tx: Transaction, kind: str, version: int, actor: Actor) -> None:
    """Record, inside the caller's write, that ``actor`` saved ``version`` of ``kind`` (and in which role)."""
    tx.execute("INSERT INTO approval_steps (kind, version, step, actor_name, actor_role, acted_at) "
               "VALUES (?, ?, 'proposed', ?, ?, ?)", [kind, version, actor.name, actor.role, utc_now()])


def record_approval(tx: Transaction, kind: str, version: int, actor: Actor, reason: str) -> None:
    """Record, inside the caller's write, that ``actor`` made ``version`` take effect, and why."""
    tx.execute("INSERT INTO approval_steps (kind, version, step, actor_name, actor_role, acted_at, reason) "
               "VALUES (?, ?, 'approved', ?, ?, ?, ?)", [kind, version, actor.name, actor.role, utc_now(), reason])


def _step(reader: Any, kind: str, version: int, step: str) -> dict[str, Any] | None:
    return reader.one("SELECT actor_name, actor_role, acted_at, reason FROM approval_steps "
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
    return (f"EXISTS (SELECT 1 FROM approval_steps pa WHERE pa.kind = '{kind}' AND pa.version = {column} "
            f"AND pa.step = 'proposed' AND NOT EXISTS (SELECT 1 FROM approval_steps pb WHERE pb.kind = pa.kind "
            f"AND pb.version = pa.version AND pb.step = 'approved'))")


def pending_versions(reader: Any, kind: str) -> list[dict[str, Any]]:
    """Versions of ``kind`` waiting for a second person, oldest first: version, proposed_by, proposed_role,
    proposed_at."""
    return reader.dicts(
        "SELECT version, actor_name AS proposed_by, actor_role AS proposed_role, acted_at AS proposed_at "
        f"FROM approval_steps v WHERE kind = ? AND step = 'proposed' AND {pending_clause(kind, 'v.version')} "
        "ORDER BY version", [kind])


def require_second_person(store: Store, actor: Actor, kind: str, version: int, author: str | None,
                          permission: Permission) -> None:
    """Four eyes before ``actor`` makes ``version`` of ``kind`` take effect; raises ``FourEyesViolation``
    (audited) with the reason named.

    The ``system`` role (command-line jobs, run by whoever operates the machine and controls the register's
    file) is exempt, as profile publishing always treated it. A person: not the version's author; and for a
    version the system proposed (nobody's), only after a different admin endorsed it -- one admin endorses,
    another publishes.
    """
    if actor.role == SYSTEM_ROLE:
        return
    what = _what(kind, version)
    if not proposed_by_system(store, kind, version):
        require_other_person(store, actor, author, permission, entity_type=kind, entity_id=version, what=what)
        return
    endorsed = endorsement(store, kind, version)
    if endorsed is None:
        deny(store, actor, permission, kind, version,
             f"{what} was made by the system and counts as nobody's: one admin endorses it first, then a "
             "different admin publishes it (four eyes)", FourEyesViolation)
    else:
        require_other_person(store, actor, endorsed["actor_name"], permission, entity_type=kind,
                             entity_id=version, what=f"{what} (endorsed it)")


def endorse(store: Store, actor: Actor, kind: str, version: int, reason: str, permission: Permission) -> None:
    """An admin makes a version the system proposed theirs, so that a different admin may publish it.

    Refused (named reason) for a version a person proposed (nothing to endorse: its author is known), a version
    already endorsed, the ``system`` role itself, or without a reason. Audited as ``<kind>.endorse``. The
    caller (``register.scoring.profiles.endorse_draft``) checks ``permission`` first.
    """
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
        tx.execute("INSERT INTO approval_steps (kind, version, step, actor_name, actor_role, acted_at, reason) "
                   "VALUES (?, ?, 'endorsed', ?, ?, ?, ?)",
                   [kind, version, actor.name, actor.role, utc_now(), reason.strip()])
        return Change(kind, str(version), None, {"endorsed_by": actor.name, "reason": reason.strip()})

    store.write(actor, f"{kind}.endorse", fn)


def takes_effect_at_once(actor: Actor, in_force: int | None) -> bool:
    """Whether a new version of rules saved by ``actor`` takes effect without a second person: the ``system``
    role's (set-up and command-line jobs, whose operator controls the register) and the very first version
    (nothing in force to change); every other save waits, pending, for a different person's approval."""
    return actor.role == SYSTEM_ROLE or in_force is None


def approve(store: Store, actor: Actor, kind: str, version: int, reason: str, permission: Permission, *,
            in_force: Callable[[Transaction], int | None],
            take_effect: Callable[[Transaction], None] | None = None) -> None:
    """A second person makes a pending version of ``kind`` take effect (reason required, audited as
    ``<kind>.approve``). Refused with a named reason: without the permission or a reason, a version that is
    not pending, its proposer approving it (four eyes, ``require_second_person``), or a newer version
    already in force (``in_force(tx)``: the version in force; saving again is the way). ``take_effect(tx)``
    does what approval means beyond this record (the judge policy's active flag), in the same write. The
    caller (each kind's ``approve_*`` service function) checks ``permission`` first."""
    what = _what(kind, version)
    if not (reason or "").strip():
        raise RegisterError(f"a reason is required to approve {what}")
    proposal = _step(store, kind, version, "proposed")
    if proposal is None or _step(store, kind, version, "approved") is not None:
        raise RegisterError(f"{what} is not waiting for approval")
    require_second_person(store, actor, kind, version, proposal["actor_name"], permission)

    def fn(tx: Transaction) -> Change:
        if _step(tx, kind, version, "approved") is not None:
            raise RegisterError(f"{what} is not waiting for approval")
        current = in_force(tx)
        if current is not None and current > version:
            raise RegisterError(f"{what} is older than version {current}, in force since it was proposed: "
                                "save the change again from the version in force")
        record_approval(tx, kind, version, actor, reason.strip())
        if take_effect is not None:
            take_effect(tx)
        return Change(kind, str(version), {"status": "pending", "in_force": current, "proposed_by":
                                          proposal["actor_name"]}, {"status": "in force", "reason": reason.strip()})

    store.write(actor, f"{kind}.approve", fn)
