"""Identity: local accounts (the embedded login), login throttling, and roles for company SSO users.

Called by the UI's login gate (``ui.framework.auth``), the users page and ``python -m register users ...``.
Passwords are stored only as argon2id hashes; one a person chooses must pass
``register.access.password_policy`` (length, no control characters, not guessable). A failed login
says only "Invalid username or password" whatever went wrong (unknown name, wrong password, disabled
or locked account) and takes the same time (one argon2 verification on every path); after
``FREE_ATTEMPTS`` failures an account is locked for an exponentially growing time, recorded in the
database and audited. Account management needs ``Permission.USERS_MANAGE`` and is audited; one-time
passwords are returned once and never stored in clear.

Company identity provider (OIDC through ``st.login``): users are not stored here; their role comes
from ``config/roles.toml`` (``role_for_identity``), and a user the file does not map is refused
unless the file sets ``default_role``.
"""

from __future__ import annotations

import re
import secrets
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from register.access import api_tokens, login_failures, password_policy, second_admin
from register.access.permissions import ROLES, SYSTEM_ROLE, Permission, authorize, deny, require_other_person
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import FourEyesViolation, InvalidAccount, LoginFailed, NotFound, StaleEdit
from register.settings import default, settings

FREE_ATTEMPTS = 3            # failures before the first lock
MAX_LOCK_SECONDS = 15 * 60   # the lock doubles per further failure up to this
MIN_PASSWORD_LENGTH = password_policy.MIN_PASSWORD_LENGTH
USERNAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{1,63}$")
DEFAULT_ROLES_FILE = default("roles_file")  # config/roles.toml; HRI_ROLES_FILE overrides it

_hasher = PasswordHasher()
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))  # verify against it for unknown names: same timing

_USER_FIELDS = ("username", "display_name", "role", "disabled", "must_change_password", "failed_attempts",
                "locked_until", "last_login_at", "created_at", "created_by", "updated_at", "updated_by",
                "row_version", "kind", "session_generation")
ACCOUNT_KINDS = ("local", "oidc", "demo")  # local: password login; oidc: company identity provider; demo
_NO_PASSWORD = "!no-local-password"  # oidc and demo accounts: never verifies as a password hash


@dataclass(frozen=True)
class User:
    username: str
    display_name: str
    role: str
    disabled: bool
    must_change_password: bool
    failed_attempts: int
    locked_until: datetime | None
    last_login_at: datetime | None
    created_at: datetime
    created_by: str
    updated_at: datetime
    updated_by: str
    row_version: int
    kind: str = "local"
    # sessions of the account that recorded another generation at login are over (``end_sessions``)
    session_generation: int = 0

    @property
    def actor(self) -> Actor:
        return Actor(self.username, self.role)


# --- passwords ---------------------------------------------------------------------------------


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Whether ``password`` matches the argon2 hash; any text, even one that is not valid UTF-8 (a lone
    surrogate: never a stored password), costs one full verification and never raises."""
    try:
        return _hasher.verify(password_hash, password.encode("utf-8", "surrogatepass"))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def one_time_password() -> str:
    """A random password shown once (96 bits); the user must change it at first login.

    Drawn again in the (astronomically rare) case the password rules would refuse it, so every
    password the console sets meets the rules a person's choice must meet."""
    while True:
        password = secrets.token_urlsafe(12)
        if password_policy.password_problem(password) is None:
            return password


def check_new_password(username: str, password: str, display_name: str = "") -> None:
    """Raise ``InvalidAccount`` with the reason when ``password`` may not be set (``password_policy``)."""
    password_policy.check_new_password(username, password, display_name)


def lock_seconds(failed_attempts: int) -> int:
    """Seconds an account stays locked after this many consecutive failures (0 below the threshold)."""
    if failed_attempts < FREE_ATTEMPTS:
        return 0
    return min(MAX_LOCK_SECONDS, 2 ** (failed_attempts - FREE_ATTEMPTS) * 5)


# --- reads -------------------------------------------------------------------------------------


def get_user(store: Store, username: str) -> User | None:
    """The account, or None when there is none by that name."""
    row = store.one(f"SELECT {', '.join(_USER_FIELDS)} FROM users WHERE username = ?", [username])
    return None if row is None else User(**row)


def _user(store: Store, username: str) -> User:
    """The account of a login just recorded: ``NotFound`` when there is none by that name."""
    return User(**store.row(f"SELECT {', '.join(_USER_FIELDS)} FROM users WHERE username = ?", [username],
                            what=f"user {username!r}"))


def list_users(store: Store) -> list[User]:
    """Every account, by username."""
    return [User(**row) for row in store.dicts(f"SELECT {', '.join(_USER_FIELDS)} FROM users ORDER BY username")]


def count_users(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM users")


def _public(user_row: dict[str, Any]) -> dict[str, Any]:
    """What an audit event records about an account (never the hash)."""
    return {k: v for k, v in user_row.items() if k != "password_hash"}


def _row(tx: Transaction, username: str) -> dict[str, Any] | None:
    return tx.one(f"SELECT {', '.join(_USER_FIELDS)} FROM users WHERE username = ?", [username])


def _written(tx: Transaction, username: str) -> dict[str, Any]:
    """The account's row as the write's own statements left it (``NotFound`` when there is none)."""
    return tx.row(f"SELECT {', '.join(_USER_FIELDS)} FROM users WHERE username = ?", [username],
                  what=f"user {username!r}")


# --- login -------------------------------------------------------------------------------------


def authenticate(store: Store, username: str, password: str, *, now: datetime | None = None) -> User:
    """Check a local login; return the user or raise ``LoginFailed`` (audited either way).

    Every path runs exactly one argon2 verification before anything is decided (against a dummy hash
    when the name is unknown; also for a locked or disabled account), so an unknown name, a wrong
    password, a locked, a disabled account and a success all take the same time: the answer time
    does not tell which names exist or are locked.
    """
    now = now or utc_now()
    username = (username or "").strip()[:100]
    # a name no account can have (every one matches USERNAME_PATTERN) is not looked up: it may not even
    # be valid UTF-8
    row = store.query_one("SELECT password_hash, disabled, locked_until, role FROM users WHERE username = ?",
                          [username]) if USERNAME_PATTERN.match(username) else None
    ok = verify_password(_DUMMY_HASH if row is None else row[0], password or "")
    if row is None:  # counted per window, audited once per window: the name is the visitor's text
        login_failures.record_unknown_name(store, username, now)
        raise LoginFailed()
    _, disabled, locked_until, role = row
    if locked_until is not None and locked_until > now:
        store.write(Actor(username, role), "login.refused_locked", lambda tx: Change(
            "user", username, None, {"locked_until": locked_until.isoformat()}), as_account=False)
        raise LoginFailed()
    if ok and not disabled:
        def success(tx: Transaction) -> Change:
            tx.execute("UPDATE users SET failed_attempts = 0, locked_until = NULL, last_login_at = ? "
                       "WHERE username = ?", [now, username])
            return Change("user", username, None, {"method": "local"})

        store.write(Actor(username, role), "login", success)
        return _user(store, username)

    def failure(tx: Transaction) -> Change:
        attempts = tx.scalar("SELECT failed_attempts + 1 FROM users WHERE username = ?", [username])
        seconds = lock_seconds(attempts)
        until = now + timedelta(seconds=seconds) if seconds else None
        tx.execute("UPDATE users SET failed_attempts = ?, locked_until = ? WHERE username = ?",
                   [attempts, until, username])
        return Change("user", username, None,
                      {"reason": "account disabled" if disabled and ok else "wrong password",
                       "failed_attempts": attempts, "locked_until": until.isoformat() if until else None})

    store.write(Actor(username, role), "login.failed", failure, as_account=False)
    raise LoginFailed()


def record_session_event(store: Store, actor: Actor, action: str, **details: Any) -> None:
    """Audit a session event that changes no row: ``logout``, ``session.expired``, ``session.revoked``...
    (written whatever the account's state: it records what happened to the session)."""
    store.write(actor, action, lambda tx: Change("user", actor.name, None, details or None), as_account=False)


def change_own_password(store: Store, actor: Actor, old_password: str, new_password: str) -> None:
    """A logged-in local user changes their own password (required after a one-time password)."""
    row = store.query_one("SELECT password_hash, display_name FROM users WHERE username = ? AND NOT disabled",
                          [actor.name])
    current_hash, display_name = row if row else (None, "")
    if current_hash is None or not verify_password(current_hash, old_password or ""):
        raise InvalidAccount("the current password is not correct")
    check_new_password(actor.name, new_password, display_name)
    if verify_password(current_hash, new_password):
        raise InvalidAccount("the new password must differ from the current one")
    new_hash = hash_password(new_password)

    def fn(tx: Transaction) -> Change:
        tx.execute("UPDATE users SET password_hash = ?, must_change_password = false, updated_at = ?, "
                   "updated_by = ?, row_version = row_version + 1 WHERE username = ?",
                   [new_hash, utc_now(), actor.name, actor.name])
        return Change("user", actor.name, None, {"password": "changed by the user"})

    store.write(actor, "user.password_change", fn)


def sign_in_external(store: Store, username: str, role: str, *, kind: str, display_name: str | None = None) -> User:
    """Record the login of a user someone else vouched for (the company identity provider, or demo mode)
    and return their account, creating it on the first login.

    Such accounts are rows of ``users`` like local ones (with no usable password), so that every write
    re-reads their current state: an admin can disable one and its next write is refused. The role comes
    from the caller (``config/roles.toml`` for ``oidc``) and is set again at each login. Refused with
    ``LoginFailed`` (audited as ``login.failed``) when the account is disabled, the name belongs to an
    account of another kind (a local one), or a demo login is attempted outside demo mode.
    """
    if kind not in ("oidc", "demo"):
        raise InvalidAccount(f"{kind!r} is not an external account kind (oidc or demo)")
    _check_role(role)
    username = (username or "").strip()[:200]
    existing = get_user(store, username)
    reason = ("demo mode is off" if kind == "demo" and not settings().demo_mode
              else f"the name belongs to a {existing.kind} account" if existing and existing.kind != kind
              else "account disabled" if existing and existing.disabled else None)
    actor = Actor(username, role)
    if reason is not None:
        refusal = Change("user", username, None, {"method": kind, "reason": reason})
        store.write(actor, "login.failed", lambda _tx: refusal, as_account=False)  # whatever the account's state
        raise LoginFailed()
    name = (display_name or "").strip()[:200] or username

    def fn(tx: Transaction) -> Change:
        before, now = _row(tx, username), utc_now()
        if (before is None) != (existing is None) or (before is not None and before["disabled"]):
            raise LoginFailed()  # created, disabled or changed in the moment since the check: log in again
        if before is None:
            tx.execute("INSERT INTO users (username, display_name, role, password_hash, disabled, "
                       "must_change_password, created_at, created_by, updated_at, updated_by, kind, last_login_at) "
                       "VALUES (?, ?, ?, ?, false, false, ?, ?, ?, ?, ?, ?)",
                       [username, name, role, _NO_PASSWORD, now, kind, now, kind, kind, now])
        else:
            # a role the provider's mapping changed ends the account's other sessions, as set_role does
            tx.execute("UPDATE users SET role = ?, display_name = ?, last_login_at = ?, updated_at = ?, "
                       "updated_by = ?, row_version = row_version + 1, session_generation = "
                       "coalesce(session_generation, 0) + CASE WHEN role = ? THEN 0 ELSE 1 END WHERE username = ?",
                       [role, name, now, now, kind, role, username])
        return Change("user", username, None if before is None else _public(before),
                      {**_public(_written(tx, username)), "method": kind})

    store.write(actor, "login", fn, as_account=False)  # the account is being made or brought up to date
    return _user(store, username)


# --- account management (admin) ----------------------------------------------------------------


def _check_username(username: str) -> str:
    username = (username or "").strip()
    if not USERNAME_PATTERN.match(username):
        raise InvalidAccount("a username has 2-64 characters: letters, digits and . _ @ - (starting with a "
                             "letter or digit)")
    return username


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise InvalidAccount(f"{role!r} is not a role; choose one of {', '.join(ROLES)}")
    return role


def create_user(store: Store, actor: Actor, username: str, role: str, display_name: str | None = None) -> str:
    """Add a local account; returns its one-time password (shown once, must be changed at first login).

    The admin role is granted by two admins (``request_admin`` then ``approve_admin``): only the command
    line's ``system`` role (which also makes the first admin) creates an admin account directly."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    username, role = _check_username(username), _check_role(role)
    if role == ADMIN:
        _require_system_to_grant_admin(store, actor, username)
    display_name = (display_name or "").strip()[:200] or username
    password = one_time_password()
    password_hash = hash_password(password)

    def fn(tx: Transaction) -> Change:
        if tx.scalar("SELECT count(*) FROM users WHERE username = ?", [username]):
            raise InvalidAccount(f"the username {username!r} is taken: choose another")
        now = utc_now()
        tx.execute("INSERT INTO users (username, display_name, role, password_hash, disabled, must_change_password, "
                   "created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, false, true, ?, ?, ?, ?)",
                   [username, display_name, role, password_hash, now, actor.name, now, actor.name])
        return Change("user", username, None, _public(_written(tx, username)))

    store.write(actor, "user.create", fn)
    return password


def _update(store: Store, actor: Actor, action: str, username: str, sets: dict[str, Any],
            expected_version: int | None, *, check=None, end_sessions: bool = False,
            revoke_tokens: bool | None = None) -> None:
    """Change one account (the caller authorised ``Permission.USERS_MANAGE`` first); ``end_sessions``: and end every
    session of it (``session_generation`` moves on, in the same audited write) and, unless ``revoke_tokens`` is
    False, revoke its API tokens."""
    def fn(tx: Transaction) -> Change:
        before = _row(tx, username)
        if before is None:
            raise NotFound(f"user {username!r} does not exist")
        if expected_version is not None and before["row_version"] != expected_version:
            raise StaleEdit(f"user {username!r} was changed by {before['updated_by']} at "
                            f"{before['updated_at']:%Y-%m-%d %H:%M:%S} UTC, reload")
        if check:
            check(tx, before)
        assignments = ", ".join(f"{column} = ?" for column in sets)  # columns: this module's own names
        ended = ", session_generation = coalesce(session_generation, 0) + 1" if end_sessions else ""
        tx.execute(f"UPDATE users SET {assignments}{ended}, updated_at = ?, updated_by = ?, "
                   "row_version = row_version + 1 WHERE username = ?",
                   [*sets.values(), utc_now(), actor.name, username])
        change = Change("user", username, _public(before), _public(_written(tx, username)))
        if end_sessions if revoke_tokens is None else revoke_tokens:
            # its API tokens end with its sessions, and do not come back with an enable either
            change.extra_events.extend(api_tokens.end_account_tokens(tx, username, actor.name, action))
        return change

    store.write(actor, action, fn)


def _keep_an_admin(tx: Transaction, before: dict[str, Any]) -> None:
    """Refuse the change that would leave no enabled admin account (nobody could manage users)."""
    if before["role"] == "admin" and not before["disabled"]:
        others = tx.scalar("SELECT count(*) FROM users WHERE role = ? AND NOT disabled AND username <> ?",
                           ["admin", before["username"]])
        if others == 0:
            raise InvalidAccount(f"{before['username']} is the last enabled admin; add another admin first")


def set_role(store: Store, actor: Actor, username: str, role: str, *, expected_version: int | None = None) -> None:
    """Change an account's role. Granting admin needs two admins (``request_admin``, ``approve_admin``);
    only the command line's ``system`` role sets it directly (audited like every change). It ends the account's
    sessions, as a password reset does: the person logs in again under the new role."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    _check_role(role)
    if role == ADMIN:
        _require_system_to_grant_admin(store, actor, username)
    _update(store, actor, "user.set_role", username, {"role": role}, expected_version,
            check=None if role == "admin" else _keep_an_admin, end_sessions=True,
            revoke_tokens=False)  # a token acts under the account's role at each call: the new one applies


def set_disabled(store: Store, actor: Actor, username: str, disabled: bool, *,
                 expected_version: int | None = None) -> None:
    """Disable or enable an account. Disabling ends its sessions: they see the disabled account at their next
    run, and never come back with an enable (``session_generation`` moved on); its API tokens are revoked."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    _update(store, actor, "user.disable" if disabled else "user.enable", username,
            {"disabled": bool(disabled)},
            expected_version, check=_keep_an_admin if disabled else None, end_sessions=bool(disabled))


def reset_password(store: Store, actor: Actor, username: str, *, expected_version: int | None = None) -> str:
    """Give an account a new one-time password (returned once); it also lifts a lock and ends every session of the
    account and revokes its API tokens, as disabling does: whoever held the old password (or a session opened, or a
    token made, with it) is out."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    password = one_time_password()
    _update(store, actor, "user.reset_password", username,
            {"password_hash": hash_password(password), "must_change_password": True, "failed_attempts": 0,
             "locked_until": None}, expected_version, end_sessions=True)
    return password


def session_ended(user: User | None, generation: int | None) -> str | None:
    """Why a session that recorded ``generation`` at login (``User.session_generation``) is over, or None when it
    may go on: the account is gone or disabled, or its sessions were ended since (a password reset, a role change, a
    disable)."""
    if user is None or user.disabled:
        return "account disabled or removed"
    if generation != user.session_generation:
        return SESSIONS_ENDED
    return None


SESSIONS_ENDED = "the account's sessions were ended (password reset or role change)"


# --- granting the admin role: four eyes -------------------------------------------------------


ADMIN = "admin"
_GRANT_FIELDS = ("grant_id", "username", "role", "requested_by", "requested_at", "reason", "status", "decided_by",
                 "decided_at")


def _require_system_to_grant_admin(store: Store, actor: Actor, username: str) -> None:
    """Refuse (audited) a direct grant of the admin role by anyone but the command line's ``system`` role:
    one admin with a second account of their own would otherwise be two admins."""
    if actor.role != SYSTEM_ROLE:
        sole = ("; while the only admin, name one second admin once (Users page, \"Name a second admin\")"
                if second_admin.exception_problem(store, actor) is None else "")
        deny(store, actor, Permission.USERS_MANAGE, "user", username,
             f"granting the admin role needs a second admin: {actor.name} can request it for {username} "
             f"(Users page, \"Request the admin role\") and another admin approves it{sole}", FourEyesViolation)


def request_admin(store: Store, actor: Actor, username: str, reason: str | None = None) -> int:
    """Ask for ``username`` to become an admin; another admin approves (``approve_admin``). Returns the
    request's id. Refused when the account does not exist, is already an admin or has a pending request."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)

    def fn(tx: Transaction) -> Change:
        user = _row(tx, username)
        if user is None:
            raise NotFound(f"user {username!r} does not exist")
        if user["role"] == ADMIN:
            raise InvalidAccount(f"{username} is already an admin")
        if tx.scalar("SELECT count(*) FROM role_grants WHERE username = ? AND status = 'pending'", [username]):
            raise InvalidAccount(f"{username} already has a pending admin request: approve or cancel that one")
        grant_id = tx.scalar("SELECT nextval('seq_role_grant')")
        tx.execute("INSERT INTO role_grants (grant_id, username, role, requested_by, requested_at, reason, status) "
                   "VALUES (?, ?, ?, ?, ?, ?, 'pending')",
                   [grant_id, username, ADMIN, actor.name, utc_now(), (reason or "").strip()[:500] or None])
        return Change("role_grant", str(grant_id), None,
                      {"username": username, "role": ADMIN, "from_role": user["role"], "status": "pending"},
                      result=grant_id)

    return store.write(actor, "user.admin_requested", fn)


def _grant(store: Store, grant_id: int) -> dict[str, Any]:
    grant = store.one(f"SELECT {', '.join(_GRANT_FIELDS)} FROM role_grants WHERE grant_id = ?", [grant_id])
    if grant is None:
        raise NotFound(f"admin request {grant_id} does not exist")
    return grant


def approve_admin(store: Store, actor: Actor, grant_id: int) -> None:
    """A second admin approves a pending admin request: the account becomes an admin. The requester and
    the account itself cannot approve it (``FourEyesViolation``, audited)."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="role_grant", entity_id=grant_id)
    grant = _grant(store, grant_id)
    require_other_person(store, actor, grant["requested_by"], Permission.USERS_MANAGE, entity_type="role_grant",
                         entity_id=grant_id, what=f"the admin request for {grant['username']}")
    if actor.name == grant["username"]:
        deny(store, actor, Permission.USERS_MANAGE, "role_grant", grant_id,
             f"{actor.name} cannot approve an admin role for their own account: another admin must",
             FourEyesViolation)

    def fn(tx: Transaction) -> Change:
        if tx.scalar("SELECT status FROM role_grants WHERE grant_id = ?", [grant_id]) != "pending":
            raise StaleEdit(f"admin request {grant_id} is no longer pending, reload")
        before = _row(tx, grant["username"])
        if before is None:
            raise NotFound(f"user {grant['username']!r} does not exist")
        now = utc_now()
        tx.execute("UPDATE role_grants SET status = 'approved', decided_by = ?, decided_at = ? WHERE grant_id = ?",
                   [actor.name, now, grant_id])
        tx.execute("UPDATE users SET role = ?, updated_at = ?, updated_by = ?, row_version = row_version + 1, "
                   "session_generation = coalesce(session_generation, 0) + 1 "  # a role change ends the sessions
                   "WHERE username = ?", [ADMIN, now, actor.name, grant["username"]])
        return Change("user", grant["username"], _public(before),
                      {**_public(_written(tx, grant["username"])), "grant_id": grant_id,
                       "requested_by": grant["requested_by"]})

    store.write(actor, "user.admin_granted", fn)


def cancel_admin_request(store: Store, actor: Actor, grant_id: int) -> None:
    """Withdraw (the requester) or turn down (another admin) a pending admin request."""
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="role_grant", entity_id=grant_id)

    def fn(tx: Transaction) -> Change:
        if tx.scalar("SELECT status FROM role_grants WHERE grant_id = ?", [grant_id]) != "pending":
            raise StaleEdit(f"admin request {grant_id} is not pending (any more), reload")
        tx.execute("UPDATE role_grants SET status = 'cancelled', decided_by = ?, decided_at = ? WHERE grant_id = ?",
                   [actor.name, utc_now(), grant_id])
        return Change("role_grant", str(grant_id), {"status": "pending"}, {"status": "cancelled"})

    store.write(actor, "user.admin_request_cancelled", fn)


def admin_requests(store: Store, *, pending_only: bool = True) -> list[dict[str, Any]]:
    """Admin requests, newest first (only the pending ones unless ``pending_only`` is False)."""
    where = "WHERE status = 'pending'" if pending_only else ""
    return store.dicts(f"SELECT {', '.join(_GRANT_FIELDS)} FROM role_grants {where} ORDER BY grant_id DESC")


def bootstrap_admin(store: Store, actor: Actor, username: str = "admin") -> str | None:
    """First start: when there is no account at all, create an admin and return its one-time password.

    Returns None (and writes nothing) when any account exists. There is no built-in password: the
    password is random, printed once by the caller, and must be changed at the first login.
    """
    authorize(store, actor, Permission.USERS_MANAGE, entity_type="user", entity_id=username)
    if count_users(store):
        return None
    return create_user(store, actor, username, "admin", "Administrator")


# --- company identity provider (OIDC) ----------------------------------------------------------


def load_roles_config(path: str | Path | None = None) -> dict[str, Any]:
    """``config/roles.toml`` (or ``HRI_ROLES_FILE``); an absent file maps nobody (everyone refused)."""
    path = Path(path or settings().roles_file)
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        config = tomllib.load(handle)
    for where, role in _configured_roles(config):
        if role not in ROLES:
            raise InvalidAccount(f"{path.name}: {where} maps to {role!r}, which is not one of {', '.join(ROLES)}")
    return config


def _configured_roles(config: dict[str, Any]):
    if config.get("default_role"):
        yield "default_role", config["default_role"]
    for section in ("emails", "domains"):
        for key, role in (config.get(section) or {}).items():
            yield f"[{section}] {key}", role
    for claim, values in (config.get("claims") or {}).items():
        for value, role in (values or {}).items():
            yield f"[claims.{claim}] {value}", role


def role_for_identity(claims: dict[str, Any], config: dict[str, Any]) -> str | None:
    """The role of an SSO user from the provider's claims; the highest role any rule grants.

    Rules: ``[emails]`` exact address, ``[domains]`` the address' domain, ``[claims.<name>]`` a claim
    value (a string or any element of a list claim such as ``groups``), then ``default_role``. An
    address counts only when the provider says it is verified (``email_verified`` absent or true).
    None: the user is refused.
    """
    granted: list[str] = []
    email = str(claims.get("email") or "").strip().lower()
    if email and claims.get("email_verified", True) is not False:
        emails = {k.lower(): v for k, v in (config.get("emails") or {}).items()}
        domains = {k.lower(): v for k, v in (config.get("domains") or {}).items()}
        if email in emails:
            granted.append(emails[email])
        if "@" in email and email.rsplit("@", 1)[1] in domains:
            granted.append(domains[email.rsplit("@", 1)[1]])
    for claim, values in (config.get("claims") or {}).items():
        value = claims.get(claim)
        for item in (value if isinstance(value, (list, tuple)) else [value]):
            if item is not None and str(item) in (values or {}):
                granted.append(values[str(item)])
    if not granted and config.get("default_role"):
        granted.append(config["default_role"])
    granted = [r for r in granted if r in ROLES]
    return max(granted, key=ROLES.index) if granted else None
