"""A one-admin install names its second admin from the console, once, without weakening four eyes afterwards.

Granting the admin role needs two admins (``register.access.identity.request_admin`` then ``approve_admin``), so
an install with a single admin had no way to a second but the command line's ``system`` role. Here that admin
names one, from the Users page, while all of this holds (``exception_problem`` says which does not):

- the one naming is a person holding the admin role now (re-read), not the ``system`` role (which sets roles
  directly) and not naming their own account;
- theirs is the only account with the admin role (enabled or disabled: a disabled admin is enabled, not
  replaced);
- no admin grant was ever approved in this register (by a second admin, or by this exception): the install has
  never had a second admin through the console, so the exception is used at most once;
- the account named is an enabled local account without the admin role (an oidc account's role comes from
  ``config/roles.toml`` at each login; a demo account is never an admin).

It is recorded as an approved ``role_grants`` row flagged ``named_while_sole_admin`` (migration 046; a pending
request for the account is the row approved) and audited as ``user.admin_named_while_sole_admin``, with the
reason; ``namings`` lists them for the Users and Audit trail pages. Afterwards two admins exist and the flagged
row stays: every later grant needs two admins again.
"""

from __future__ import annotations

from typing import Any

from register.access.permissions import SYSTEM_ROLE, Permission, authorize, deny
from register.db.store import Actor, Change, Store, Transaction, account_problem, utc_now
from register.errors import FourEyesViolation, InvalidAccount, NotFound

__all__ = ["EVENT", "exception_problem", "may_name_second_admin", "name_second_admin", "namings"]

ADMIN = "admin"
EVENT = "user.admin_named_while_sole_admin"  # the audit event's action: the flag in the trail
MAX_REASON = 500


def exception_problem(reader: Any, actor: Actor) -> str | None:
    """Why ``actor`` may not name a second admin as the sole admin now, or None when they may (``reader``: a store
    or a write's transaction). Reads only: the account's own state is ``account_problem``'s."""
    if actor.role == SYSTEM_ROLE:
        return "the command line's system role sets the admin role directly (python -m register users set-role)"
    if actor.role != ADMIN:
        return f"{actor.name} ({actor.role}) is not an admin"
    admins = [row[0] for row in reader.query("SELECT username FROM users WHERE role = ? ORDER BY username", [ADMIN])]
    if admins != [actor.name]:
        others = ", ".join(name for name in admins if name != actor.name)
        return (f"{actor.name} is not the only admin account ({others} also holds the admin role; enable a disabled "
                "one instead): granting the admin role needs two admins -- request it, another admin approves it")
    if reader.scalar("SELECT count(*) FROM role_grants WHERE status = 'approved'"):
        return ("this register has granted the admin role before: a sole admin names a second admin once, and "
                "every later grant needs two admins (request it, another admin approves it)")
    return None


def may_name_second_admin(store: Store, actor: Actor) -> bool:
    """Whether ``actor``'s account, as it is now, may name a second admin (for the pages: nothing is written)."""
    return account_problem(store, actor) is None and exception_problem(store, actor) is None


def _named_problem(tx: Transaction, username: str) -> None:
    """Refuse an account that cannot be named (``NotFound``, ``InvalidAccount``): it must be someone else's
    enabled local account without the admin role."""
    row = tx.one("SELECT role, disabled, kind FROM users WHERE username = ?", [username])
    if row is None:
        raise NotFound(f"user {username!r} does not exist")
    if row["role"] == ADMIN:
        raise InvalidAccount(f"{username} is already an admin")
    if row["disabled"]:
        raise InvalidAccount(f"{username} is disabled: enable the account first")
    if row["kind"] != "local":
        raise InvalidAccount(f"{username} is a {row['kind']} account: its role comes from its login "
                             "(config/roles.toml for company accounts), not from this page")


def name_second_admin(store: Store, actor: Actor, username: str, reason: str) -> int:
    """The sole admin makes ``username`` the second admin (the rules: module docstring); returns the grant's id.

    Refused and audited (``FourEyesViolation``, after ``PermissionDenied`` for anyone without
    ``Permission.USERS_MANAGE``) when the exception does not apply or the admin names their own account; refused
    with ``InvalidAccount`` without a reason or for an account that cannot be named."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    username = (username or "").strip()
    if username == actor.name:
        deny(store, actor, Permission.USERS_MANAGE, "user", username,
             f"{actor.name} cannot name their own account a second admin: the second admin is another person",
             FourEyesViolation)
    if (problem := exception_problem(store, actor)) is not None:
        deny(store, actor, Permission.USERS_MANAGE, "user", username, problem, FourEyesViolation)
    reason = (reason or "").strip()[:MAX_REASON]
    if not reason:
        raise InvalidAccount("a reason is required to name a second admin (it is kept in the audit trail)")

    def fn(tx: Transaction) -> Change:
        if (problem := exception_problem(tx, actor)) is not None:  # changed since the check: a second tab, the CLI
            raise FourEyesViolation(problem)
        _named_problem(tx, username)
        before = tx.one("SELECT * EXCLUDE (password_hash) FROM users WHERE username = ?", [username])
        now = utc_now()
        pending = tx.scalar("SELECT min(grant_id) FROM role_grants WHERE username = ? AND status = 'pending'",
                            [username])
        if pending is None:
            grant_id = tx.scalar("SELECT nextval('seq_role_grant')")
            tx.execute("INSERT INTO role_grants (grant_id, username, role, requested_by, requested_at, reason, status, "
                       "decided_by, decided_at, named_while_sole_admin) "
                       "VALUES (?, ?, ?, ?, ?, ?, 'approved', ?, ?, true)",
                       [grant_id, username, ADMIN, actor.name, now, reason, actor.name, now])
        else:  # the request made when the account was added (or later) is the one this decides
            grant_id = pending
            tx.execute("UPDATE role_grants SET status = 'approved', decided_by = ?, decided_at = ?, "
                       "reason = coalesce(reason || '; ', '') || ?, named_while_sole_admin = true WHERE grant_id = ?",
                       [actor.name, now, reason, grant_id])
        tx.execute("UPDATE users SET role = ?, updated_at = ?, updated_by = ?, row_version = row_version + 1, "
                   "session_generation = coalesce(session_generation, 0) + 1 "  # a role change ends the sessions
                   "WHERE username = ?", [ADMIN, now, actor.name, username])
        after = tx.row("SELECT * EXCLUDE (password_hash) FROM users WHERE username = ?", [username],
                       what=f"user {username!r}")
        return Change("user", username, before,
                      {**after, "grant_id": grant_id, "named_while_sole_admin": True, "named_by": actor.name,
                       "reason": reason}, result=grant_id)

    return int(store.write(actor, EVENT, fn))


def namings(store: Store) -> list[dict[str, Any]]:
    """Every admin named while sole admin (at most one per register), newest first: grant_id, username, named_by,
    named_at, reason, created_by (who made the named account: a sole admin naming an account they made
    themselves is named here for a reviewer to judge)."""
    return store.dicts("SELECT g.grant_id, g.username, g.decided_by AS named_by, g.decided_at AS named_at, g.reason, "
                       "u.created_by FROM role_grants g LEFT JOIN users u USING (username) "
                       "WHERE coalesce(g.named_while_sole_admin, false) ORDER BY g.grant_id DESC")
