"""Personal API tokens: how a pipeline acts as an account on the HTTP API (``Authorization: Bearer TOKEN``).

A token is ``hri_<token_id>_<secret>``: a recognisable prefix (a secret scanner finds it in a leaked file), the
token's id (12 hex digits: the key of ``api_tokens``, so a request costs one indexed read) and a secret of 256
random bits. The secret is shown once, when the token is made (``create_token``), and never kept: the table
holds its SHA-256, compared in constant time. A plain hash is enough for a random secret of that size (no one can
try enough guesses against it); a password needs argon2 because people choose guessable ones.

A token has no role of its own: ``authenticate`` returns the account's name with the role the account has *now*,
so a role change applies at the next request and a disabled account's tokens fail at once (and every write
re-reads the account again: ``Store.write``). Tokens expire (``HRI_TOKEN_DEFAULT_DAYS``, at most
``HRI_TOKEN_MAX_DAYS``) and can be revoked. Making and revoking one is audited; so is every failed
authentication, within the per-client limit of ``register.access.token_failures``. A successful one is not (it
happens on every request): it refreshes the token's ``last_used_at`` at most once a minute, as bookkeeping outside
the audit trail.

Who may: every signed-in account makes, lists and revokes its own tokens (``Permission.OWN_API_TOKENS``); an admin
(``Permission.USERS_MANAGE``) those of any account, e.g. a service account for a pipeline. Checked here against
the account's current state, whatever a page shows.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import unicodedata
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from register.access import token_failures
from register.access.permissions import Permission, allowed, authorize, deny
from register.db.store import Actor, Change, Store, Transaction, account_problem, utc_now
from register.errors import DatabaseError, InvalidTokenRequest, NotFound, PermissionDenied
from register.settings import settings

__all__ = ["PREFIX", "STATUSES", "IssuedToken", "authenticate", "create_token", "end_account_tokens", "list_tokens",
           "revoke_token"]

PREFIX = "hri_"
TOKEN_PATTERN = re.compile(r"hri_([0-9a-f]{12})_([A-Za-z0-9_-]{43})")  # secrets.token_urlsafe(32): 43 characters
TOKEN_ID_PATTERN = re.compile(r"[0-9a-f]{12}")
MAX_NAME_CHARS = 100
LAST_USED_EVERY = timedelta(minutes=1)  # last_used_at is refreshed at most this often per token
STATUSES = ("active", "expired", "revoked")

_LISTED = ("token_id", "username", "name", "created_at", "created_by", "expires_at", "last_used_at", "revoked_at",
           "revoked_by")
_STATUS_SQL = ("CASE WHEN revoked_at IS NOT NULL THEN 'revoked' WHEN expires_at <= $now THEN 'expired' "
               "ELSE 'active' END AS status")
# the one read of every API request: the token by its key, with its account's role now (NULL: no such account)
_AUTHENTICATION_SQL = ("SELECT t.secret_hash, t.username, u.role, t.expires_at, t.revoked_at, t.last_used_at "
                       "FROM api_tokens t LEFT JOIN users u ON u.username = t.username WHERE t.token_id = ?")
_DUMMY_DIGEST = hashlib.sha256(b"no token has this secret").hexdigest()


@dataclass(frozen=True)
class IssuedToken:
    """A token just made. ``token`` is the secret, shown to its owner once and never stored; the rest is listed."""

    token: str
    token_id: str
    username: str
    created_at: datetime
    expires_at: datetime
    name: str | None = None

    def __repr__(self) -> str:  # a log line or a traceback that prints the object must not print the secret
        return (f"IssuedToken(token_id={self.token_id!r}, username={self.username!r}, "
                f"expires_at={self.expires_at.isoformat()!r}, token='hri_{self.token_id}_…')")


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


# --- who may ---------------------------------------------------------------------------------------


def _require_own_or_admin(store: Store, actor: Actor, username: Any, what: str, entity_id: Any) -> None:
    """Every account acts on its own tokens; only an admin (``USERS_MANAGE``) on another account's. Audited
    refusal (``denied``) either way; the account is re-read first (disabled, role changed: refused)."""
    authorize(store, actor, Permission.OWN_API_TOKENS, entity_type="api_token", entity_id=entity_id)
    if username != actor.name and not allowed(actor.role, Permission.USERS_MANAGE):
        deny(store, actor, Permission.USERS_MANAGE, "api_token", entity_id,
             f"{actor.name} ({actor.role}) may {what} only their own API tokens: an admin may for another account",
             PermissionDenied)


# --- making, listing, revoking -----------------------------------------------------------------------


def _expiry_days(expires_days: int | None) -> int:
    current = settings()
    longest = current.token_max_days
    if expires_days is None:
        if current.token_default_days > longest:
            raise InvalidTokenRequest("expires_days", f"the default expiry HRI_TOKEN_DEFAULT_DAYS="
                                      f"{current.token_default_days} is longer than HRI_TOKEN_MAX_DAYS={longest}: "
                                      "name a shorter one, or fix the settings")
        return current.token_default_days
    if isinstance(expires_days, bool) or not isinstance(expires_days, int):
        raise InvalidTokenRequest("expires_days", f"{expires_days!r} is not a whole number of days")
    if not 1 <= expires_days <= longest:
        raise InvalidTokenRequest("expires_days", f"{expires_days} is not between 1 and {longest} days "
                                  "(HRI_TOKEN_MAX_DAYS)")
    return expires_days


def _token_name(name: str | None) -> str | None:
    """The token's label as given (stripped), None when empty; refused when too long or holding control characters."""
    if name is None:
        return None
    if not isinstance(name, str):
        raise InvalidTokenRequest("name", f"{name!r} is not text")
    name = name.strip()
    if len(name) > MAX_NAME_CHARS:
        raise InvalidTokenRequest("name", f"has {len(name)} characters; at most {MAX_NAME_CHARS}")
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in name):
        raise InvalidTokenRequest("name", "holds a control or formatting character (a line break, a tab, ...)")
    return name or None


def create_token(store: Store, actor: Actor, username: str, *, expires_days: int | None = None,
                 name: str | None = None) -> IssuedToken:
    """Make an API token for the enabled account ``username`` and return it with its secret (shown once; only a
    hash is kept). ``actor`` makes one for itself, or an admin for any account. ``expires_days``: 1 to
    ``HRI_TOKEN_MAX_DAYS`` (default ``HRI_TOKEN_DEFAULT_DAYS``); ``name``: an optional label (what it is for)."""
    username = username.strip() if isinstance(username, str) else username
    _require_own_or_admin(store, actor, username, "create", username)
    if not isinstance(username, str) or not username:
        raise InvalidTokenRequest("username", "name the account the token acts for")
    days, label = _expiry_days(expires_days), _token_name(name)
    secret = secrets.token_urlsafe(32)
    digest = _digest(secret)

    def fn(tx: Transaction) -> Change:
        account = tx.one("SELECT disabled FROM users WHERE username = ?", [username])
        if account is None:
            raise NotFound(f"user {username!r} does not exist")
        if account["disabled"]:
            raise InvalidTokenRequest("username", f"the account {username} is disabled: enable it first")
        token_id = secrets.token_hex(6)
        while tx.scalar("SELECT count(*) FROM api_tokens WHERE token_id = ?", [token_id]):
            token_id = secrets.token_hex(6)  # 48 random bits: a repeat is rare, but the id is a key
        now = utc_now()
        expires_at = now + timedelta(days=days)
        tx.execute("INSERT INTO api_tokens (token_id, username, name, secret_hash, created_at, created_by, "
                   "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [token_id, username, label, digest, now, actor.name, expires_at])
        issued = IssuedToken(f"{PREFIX}{token_id}_{secret}", token_id, username, now, expires_at, label)
        return Change("api_token", token_id, None, {
            "token_id": token_id, "username": username, "name": label, "created_by": actor.name,
            "created_at": now.isoformat(), "expires_at": expires_at.isoformat(), "expires_days": days},
            result=issued)

    return store.write(actor, "api_token.create", fn)


def list_tokens(store: Store, actor: Actor, username: str | None = None) -> list[dict[str, Any]]:
    """Tokens, newest first: token_id, username, name, created_at, created_by, expires_at, last_used_at,
    revoked_at, revoked_by and status (``STATUSES``); never the secret or its hash. ``username`` None: every
    account's for an admin, the actor's own for anyone else; a name: that account's (another's: admins only)."""
    if username is None and allowed(actor.role, Permission.USERS_MANAGE):
        authorize(store, actor, Permission.USERS_MANAGE, entity_type="api_token")
        where, params = "", {}
    else:
        owner = actor.name if username is None else username.strip()
        _require_own_or_admin(store, actor, owner, "list", None)
        where, params = "WHERE username = $username", {"username": owner}
    return store.dicts(f"SELECT {', '.join(_LISTED)}, {_STATUS_SQL} FROM api_tokens {where} "
                       "ORDER BY created_at DESC, token_id", {**params, "now": utc_now()})


def revoke_token(store: Store, actor: Actor, token_id: str) -> None:
    """Revoke a token: it fails from the next request on. The owner revokes their own, an admin any. Audited;
    ``InvalidTokenRequest`` when it is revoked already, ``NotFound`` when there is no such token."""
    authorize(store, actor, Permission.OWN_API_TOKENS, entity_type="api_token", entity_id=token_id)
    token_id = str(token_id).strip()
    owner = store.scalar("SELECT username FROM api_tokens WHERE token_id = ?", [token_id])
    if owner is None:
        raise NotFound(f"API token {token_id!r} does not exist")
    _require_own_or_admin(store, actor, owner, "revoke", token_id)

    def fn(tx: Transaction) -> Change:
        before = tx.row(f"SELECT {', '.join(_LISTED)} FROM api_tokens WHERE token_id = ?", [token_id],
                        what=f"API token {token_id!r}")
        if before["revoked_at"] is not None:
            raise InvalidTokenRequest("token_id", f"API token {token_id} was revoked already, by "
                                      f"{before['revoked_by']} at {before['revoked_at']:%Y-%m-%d %H:%M:%S} UTC: "
                                      "nothing changed")
        now = utc_now()
        tx.execute("UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE token_id = ?",
                   [now, actor.name, token_id])
        return Change("api_token", token_id, {"username": owner, "revoked_at": None},
                      {"username": owner, "revoked_at": now.isoformat(), "revoked_by": actor.name})

    store.write(actor, "api_token.revoke", fn)


AuditEvent = tuple[str, str, str | None, Any, Any]  # an extra event of a Change: action, entity, id, before, after


def end_account_tokens(tx: Transaction, username: str, by: str, why: str) -> list[AuditEvent]:
    """Revoke every unrevoked token of ``username`` inside the caller's write (``identity``: disabling the account or
    resetting its password ends its sessions and its tokens; an enable does not bring them back) and return one
    ``api_token.revoke`` audit event per token, for the caller's ``Change.extra_events``."""
    ended = [token_id for (token_id,) in tx.query(
        "SELECT token_id FROM api_tokens WHERE username = ? AND revoked_at IS NULL ORDER BY token_id", [username])]
    if not ended:
        return []
    now = utc_now()
    tx.execute("UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE username = ? AND revoked_at IS NULL",
               [now, by, username])
    return [("api_token.revoke", "api_token", token_id, {"username": username, "revoked_at": None},
             {"username": username, "revoked_at": now.isoformat(), "revoked_by": by, "why": why})
            for token_id in ended]


# --- every API request -------------------------------------------------------------------------------


def authenticate(store: Store, presented: str, *, client: str, now: datetime | None = None) -> Actor:
    """The account a presented token acts for, with its role now: the token must be well formed, known, match its
    secret, be neither revoked nor expired, and its account enabled (``account_problem``). Otherwise
    ``TokenRejected``, whatever went wrong (the trail records which), or ``TooManyAttempts`` once ``client`` (the
    caller's name for who sent it: the peer address) is over the failure limit (``register.access.token_failures``).

    One indexed read of the token and one of its account; ``last_used_at`` refreshed at most once a minute."""
    now = now or utc_now()
    match = TOKEN_PATTERN.fullmatch(presented) if isinstance(presented, str) else None
    if match is None:
        token_failures.refuse(store, client, now, "not an API token (malformed)")
    token_id, secret = match.groups()
    digest = _digest(secret)
    reason: str | None
    with store.cursor() as cursor:  # one cursor for both reads
        row = cursor.query_one(_AUTHENTICATION_SQL, [token_id])
        if row is None:
            hmac.compare_digest(digest, _DUMMY_DIGEST)  # the same work as for a known token
            reason, owner, last_used_at = "no such token", token_failures.ANONYMOUS, None
        else:
            secret_hash, username, role, expires_at, revoked_at, last_used_at = row
            owner = Actor(username, role) if role is not None else token_failures.ANONYMOUS
            reason = ("wrong secret" if not hmac.compare_digest(secret_hash, digest)
                      else f"revoked at {revoked_at.isoformat()}" if revoked_at is not None
                      else f"expired at {expires_at.isoformat()}" if expires_at <= now
                      else f"the account {username} does not exist" if role is None
                      else account_problem(cursor, owner))  # disabled, a demo account outside demo mode
    if reason is not None:
        token_failures.refuse(store, client, now, reason, actor=owner, token_id=token_id)
    if last_used_at is None or now - last_used_at >= LAST_USED_EVERY:
        _record_use(store, token_id, now)
    return owner


def _record_use(store: Store, token_id: str, now: datetime) -> None:
    """Refresh ``last_used_at``: bookkeeping, not an action of the account (no audit event), so a plain update.
    A write that changes the same row at that instant wins; the next request records the use."""
    with suppress(DatabaseError), store.cursor() as cursor:
        cursor.execute("UPDATE api_tokens SET last_used_at = ? WHERE token_id = ? "
                       "AND (last_used_at IS NULL OR last_used_at <= ?)", [now, token_id, now - LAST_USED_EVERY])
