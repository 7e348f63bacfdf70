"""The two versioned tables the Authority step reads, edited in the console like the evidence rules.

* **Use cases and their requester roles** (``use_case_versions`` / ``use_case_requesters``): who asks
  a use case's questions. "Allowed" compares a source's ``restricted_to`` with these roles; a use case
  missing from the table has unknown requesters (restricted sources are then undecided, never allowed).
  The approved-use-case register's requester roles (``use_case_register``, issue 37) take precedence over
  this older table wherever the register lists them (``requester_roles``).
* **Authority rules** (``authority_rule_versions``): ``hri_core.authority.AuthorityRules`` as JSON,
  the largest acceptable ``authority_tier`` and/or source types per claim category. Before anything
  is saved, ``default_authority_rules()`` (version 1) is in force.

Saving writes a new version; the newest one a second person approved is in force (four eyes,
``register.access.version_approvals``; the ``system`` role's saves are in force at once); older ones are
kept. Both writes need ``Permission.RULES_EDIT`` and land through ``Store.write`` with their audit event. Called by the
authority page (through ``ui.features.authority``), the Authority checks (``register.scoring.authority``) and
tests.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from hri_core.authority import AuthorityRules, AuthorityRulesError, authority_rules_from_dict, default_authority_rules
from register.access import version_approvals
from register.access.permissions import ROLES, SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, Problem, ValidationFailed
from register.scoring.use_case_rows import name_problems, note_problems

__all__ = ["approve_authority_rules", "approve_use_cases", "authority_rule_versions", "authority_rules",
           "authority_rules_version", "get_authority_rules", "list_use_cases", "pending_authority_rule_versions",
           "pending_use_case_versions", "requester_roles", "save_authority_rules", "save_use_cases", "use_case_version",
           "use_case_versions"]



def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):  # NaN from an edited table
        return None
    text = str(value).strip()
    return text or None


def _roles(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and value != value):
        return []
    items = value.tolist() if hasattr(value, "tolist") else value
    if isinstance(items, str):
        items = items.replace(";", ",").split(",")
    return sorted({t for t in (_text(i) for i in items) if t})


# --- use cases ------------------------------------------------------------------------------------------


USE_CASES, AUTHORITY_RULES = "use_cases", "authority_rules"  # kinds in approval_steps
# the newest version not waiting for a second person's approval
_USE_CASES_IN_FORCE = ("SELECT max(version) FROM use_case_versions v "
                       f"WHERE NOT {version_approvals.pending_clause(USE_CASES, 'v.version')}")
_RULES_NOT_PENDING = f"NOT {version_approvals.pending_clause(AUTHORITY_RULES, 'v.version')}"


def _status_columns(kind: str) -> str:
    """``pending`` and ``approved_by`` of a version ``v.version`` (``kind`` is a fixed kind of this module)."""
    return (f"{version_approvals.pending_clause(kind, 'v.version')} AS pending, "
            f"(SELECT actor_name FROM approval_steps a WHERE a.kind = '{kind}' AND a.version = v.version "
            "AND a.step = 'approved') AS approved_by")


def use_case_version(store: Store | Transaction) -> int | None:
    """The use-case table in force (the newest approved version), or None before any was saved."""
    return store.scalar(_USE_CASES_IN_FORCE)


def use_case_versions(store: Store) -> pd.DataFrame:
    """Every use-case version, newest first: who wrote it, when and why, pending or approved by whom."""
    return store.frame(f"SELECT version, created_at, created_by, reason, {_status_columns(USE_CASES)} "
                       "FROM use_case_versions v ORDER BY version DESC")


def pending_use_case_versions(store: Store) -> list[dict]:
    """Use-case versions waiting for a second person: version, proposed_by, proposed_role, proposed_at."""
    return version_approvals.pending_versions(store, USE_CASES)


def approve_use_cases(store: Store, actor: Actor, version: int, reason: str) -> None:
    """A second person (``Permission.RULES_EDIT``, not the one who saved it) puts a pending use-case table
    in force."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type=USE_CASES, entity_id=version)
    previous = use_case_version(store)
    version_approvals.approve(store, actor, USE_CASES, version, reason, Permission.RULES_EDIT,
                              in_force=use_case_version)
    # in force now: the answers of the use cases whose requesters changed are decided again
    from register.scoring.redecide import redecide_use_cases

    def roles(of: int | None) -> dict[str, list[str]]:
        frame = pd.DataFrame() if of is None else list_use_cases(store, of)
        return {str(r["use_case"]): sorted(() if r["requester_roles"] is None else r["requester_roles"])
                for r in frame.to_dict("records")}

    old, new = roles(previous), roles(version)
    redecide_use_cases(store, actor, sorted(name for name in old.keys() | new.keys() if old.get(name) != new.get(name)))


def list_use_cases(store: Store, version: int | None = None) -> pd.DataFrame:
    """The use cases of one version (the one in force by default): use_case, requester_roles, note."""
    version = version if version is not None else use_case_version(store)
    return store.frame("SELECT use_case, requester_roles, note FROM use_case_requesters WHERE version = ? "
                       "ORDER BY use_case", [version])


def requester_roles(store: Store | Transaction) -> dict[str, tuple[str, ...]]:
    """``{use case: requester roles}`` the Authority step's "allowed" check reads (a use case not listed has unknown
    requesters). The approved-use-case register's (``use_case_register``, its live rows that list requester roles,
    whatever their status: the Scope check judges the status) come first; a use case it does not list, or lists
    without roles, keeps the roles of the older requester table in force (``use_case_requesters``), so that a
    register kept before the use-case register decides as it did."""
    rows = store.query("SELECT use_case, requester_roles FROM use_case_requesters WHERE version = "
                       f"({_USE_CASES_IN_FORCE})")
    roles = {use_case: tuple(names or ()) for use_case, names in rows}
    if not store.scalar("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'use_case_register'"):
        return roles  # a register older than migration 049
    roles.update({use_case: tuple(names) for use_case, names in store.query(
        "SELECT use_case_id, requester_roles FROM use_case_register WHERE NOT deleted AND len(requester_roles) > 0")})
    return roles


def _use_case_problems(rows: list[dict]) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for n, row in enumerate(rows, start=1):
        problems += name_problems(n, row["use_case"], seen)
        # the roles sources are restricted to (``sources.restricted_to``): the console's roles
        problems += [Problem(n, "requester_roles", f"{role[:60]!r} is not a role; choose from {', '.join(ROLES)}")
                     for role in row["requester_roles"] if role not in ROLES]
        problems += note_problems(n, row["note"])
    return problems


def save_use_cases(store: Store, actor: Actor, rows: list[dict], reason: str) -> int:
    """Write ``rows`` (use_case, requester_roles, note) as a new use-case version; its number. Pending until a
    different person approves it (``approve_use_cases``); the ``system`` role's is in force at once.

    ``requester_roles`` (roles of ``register.access.permissions.ROLES``, the roles a source can be
    restricted to) is a list or ``a; b`` text; an empty list says nobody in a restricted role asks
    the use case's questions. Refused with ``ValidationFailed`` naming each bad row and field.
    """
    authorize(store, actor, Permission.RULES_EDIT, entity_type="use_cases")
    clean = [{"use_case": _text(r.get("use_case")), "requester_roles": _roles(r.get("requester_roles")),
              "note": _text(r.get("note"))} for r in rows]
    problems = _use_case_problems(clean)
    if not _text(reason):
        problems.append(Problem(None, "reason", "say why the use cases change"))
    if problems:
        raise ValidationFailed(problems)

    # the first table changes Authority too (unknown requesters become known): a person's waits as well
    at_once = actor.role == SYSTEM_ROLE

    def fn(tx: Transaction) -> Change:
        previous = use_case_version(tx)
        before = None if previous is None else tx.dicts(
            "SELECT use_case, requester_roles, note FROM use_case_requesters WHERE version = ? ORDER BY use_case",
            [previous])
        version = int(tx.scalar("SELECT coalesce(max(version), 0) + 1 FROM use_case_versions"))
        tx.execute("INSERT INTO use_case_versions (version, created_at, created_by, reason) VALUES (?, ?, ?, ?)",
                   [version, utc_now(), actor.name, reason.strip()])
        for row in clean:
            tx.execute("INSERT INTO use_case_requesters (version, use_case, requester_roles, note) "
                       "VALUES (?, ?, ?, ?)", [version, row["use_case"], row["requester_roles"], row["note"]])
        if at_once:
            old = {str(r["use_case"]): sorted(r["requester_roles"] or []) for r in before or []}
            new = {str(r["use_case"]): sorted(r["requester_roles"] or []) for r in clean}
            changed.extend(name for name in old.keys() | new.keys() if old.get(name) != new.get(name))
        else:
            version_approvals.record_proposal(tx, USE_CASES, version, actor)
        return Change("use_cases", str(version), before, clean, result=version)

    changed: list[str] = []
    version: int = store.write(actor, "use_cases.publish" if at_once else "use_cases.propose", fn)
    # in force now: the answers of those use cases on restricted sources are decided again (register.scoring.redecide)
    from register.scoring.redecide import redecide_use_cases
    redecide_use_cases(store, actor, changed)
    return version


# --- authority rules ------------------------------------------------------------------------------------


def _rules_from_row(version: int, name: str, params: Any) -> AuthorityRules:
    data = json.loads(params) if isinstance(params, str) else dict(params)
    data.update({"name": name, "version": version})
    return AuthorityRules.model_validate(data)


def authority_rules(store: Store | Transaction) -> AuthorityRules:
    """The authority rules in force: the newest approved version, else ``default_authority_rules()``."""
    row = store.query_one(f"SELECT version, name, params FROM authority_rule_versions v WHERE {_RULES_NOT_PENDING} "
                          "ORDER BY version DESC LIMIT 1")
    return default_authority_rules() if row is None else _rules_from_row(*row)


def authority_rules_version(store: Store | Transaction) -> int:
    """The version of the authority rules in force (1: the unsaved default)."""
    return int(store.scalar(f"SELECT coalesce(max(version), 1) FROM authority_rule_versions v "
                            f"WHERE {_RULES_NOT_PENDING}"))


def pending_authority_rule_versions(store: Store) -> list[dict]:
    """Authority rule versions waiting for a second person: version, proposed_by, proposed_role, proposed_at."""
    return version_approvals.pending_versions(store, AUTHORITY_RULES)


def approve_authority_rules(store: Store, actor: Actor, version: int, reason: str) -> None:
    """A second person (``Permission.RULES_EDIT``, not the one who saved them) puts pending rules in force."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type=AUTHORITY_RULES, entity_id=version)
    version_approvals.approve(store, actor, AUTHORITY_RULES, version, reason, Permission.RULES_EDIT,
                              in_force=authority_rules_version)
    # in force now: every answer with a sourced claim is decided again (register.scoring.redecide)
    from register.scoring.redecide import redecide_all_sourced
    redecide_all_sourced(store, actor, f"authority-rules:v{version}")


def get_authority_rules(store: Store, version: int) -> AuthorityRules:
    """One saved version (version 1 is the default until a first save stores it)."""
    row = store.query_one("SELECT version, name, params FROM authority_rule_versions WHERE version = ?", [version])
    if row is None:
        if version == 1 and store.scalar("SELECT count(*) FROM authority_rule_versions") == 0:
            return default_authority_rules()
        raise NotFound(f"authority rules version {version} do not exist")
    return _rules_from_row(*row)


def authority_rule_versions(store: Store) -> pd.DataFrame:
    """Every saved version, newest first (empty while the default version 1 is in force unsaved)."""
    return store.frame(f"SELECT version, name, fingerprint, created_at, created_by, reason, "
                       f"{_status_columns(AUTHORITY_RULES)} FROM authority_rule_versions v ORDER BY version DESC")


def save_authority_rules(store: Store, actor: Actor, rules: AuthorityRules | dict, reason: str) -> int:
    """Store ``rules`` (an ``AuthorityRules`` or its JSON form) as a new version; its number. Pending until a
    different person approves it (``approve_authority_rules``); the ``system`` role's is in force at once.

    The version number is the register's (the next after the newest saved, or 2 after the unsaved
    default), whatever ``rules.version`` says. Refused with ``ValidationFailed`` naming each bad field.
    """
    authorize(store, actor, Permission.RULES_EDIT, entity_type="authority_rules")
    problems: list[Problem] = []
    try:
        data = rules.model_dump(mode="json") if isinstance(rules, AuthorityRules) else rules
        parsed = authority_rules_from_dict(data)
    except AuthorityRulesError as error:
        problems.append(Problem(None, "rules", str(error)))
        parsed = None
    if not _text(reason):
        problems.append(Problem(None, "reason", "say why the authority rules change"))
    if problems or parsed is None:
        raise ValidationFailed(problems)

    at_once = actor.role == SYSTEM_ROLE  # the default is in force before any save: a person's waits

    def fn(tx: Transaction) -> Change:
        previous = tx.one(f"SELECT version, params FROM authority_rule_versions v WHERE {_RULES_NOT_PENDING} "
                          "ORDER BY version DESC LIMIT 1")
        if previous is None:
            before = default_authority_rules().model_dump(mode="json", exclude={"name", "version"})
        else:
            before = json.loads(previous["params"]) if isinstance(previous["params"], str) else previous["params"]
        # version 1 is the default, in force until a first save: the first saved one is 2
        version = int(tx.scalar("SELECT coalesce(max(version), 1) + 1 FROM authority_rule_versions"))
        params = parsed.model_dump(mode="json", exclude={"name", "version"})
        tx.execute("INSERT INTO authority_rule_versions (version, name, params, fingerprint, created_at, created_by, "
                   "reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [version, parsed.name, json.dumps(params), parsed.fingerprint(), utc_now(), actor.name,
                    reason.strip()])
        if not at_once:
            version_approvals.record_proposal(tx, AUTHORITY_RULES, version, actor)
        return Change("authority_rules", str(version), before, params, result=version)

    version: int = store.write(actor, "authority_rules.publish" if at_once else "authority_rules.propose", fn)
    if at_once:  # in force now: every answer with a sourced claim is decided again (register.scoring.redecide)
        from register.scoring.redecide import redecide_all_sourced
        redecide_all_sourced(store, actor, f"authority-rules:v{version}")
    return version
