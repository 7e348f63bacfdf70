"""Web sessions: the console's logins kept by the register, so that a login survives a browser reload.

A login (``start``) makes a session: a random id (256 bits) that only the browser keeps, in a signed HttpOnly
cookie (``register.access.session_keys``); the table ``web_sessions`` (migration 044) keeps its SHA-256, the
account, the account's ``session_generation`` at the start, when it started, when it was last active and when and
why it ended. ``resolve`` says whether a session may go on, on every page run of the console:

- ended by a **logout** (``end``, audited ``logout``), in this tab or another;
- **idle** for longer than ``HRI_SESSION_MINUTES`` (audited ``session.expired`` when a run finds it so);
- **revoked** (audited ``session.revoked``): the account is disabled or gone, a demo account outside demo mode, or
  its ``session_generation`` moved on since the start: a password reset or a role change
  (``register.access.identity``).

Activity is recorded by ``touch`` at most once a minute (``TOUCH_INTERVAL``): a single-row update outside
``Store.write``, not audited (a time stamp, not an action; auditing it would add an event a minute for every
session in use), so the idle time is measured to within a minute.

Streamlit cannot set a response header from a page run, so the cookie is handed over through a route of the
console's server (``ui.framework.session_cookie``): the page run asks ``COOKIE_NONCES`` for a one-time nonce bound to
the session (``NONCE_LIFETIME``, 60 s, single use, kept in this process's memory only, like the session's id
until then), the page's script posts it, and the route redeems it and answers with the cookie (or, after a
logout, with the cookie cleared).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from register.access import identity
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import InvalidAccount, WriteConflict
from register.settings import settings

METHODS = ("local", "demo", "oidc")  # how the person logged in (the password form, demo mode, the provider)
TOUCH_INTERVAL = timedelta(minutes=1)
NONCE_LIFETIME = timedelta(seconds=60)
MAX_PENDING_NONCES = 10_000  # logged-in page runs issue them; a bound keeps a runaway from growing the process

_FIELDS = ("session_hash", "session_no", "username", "method", "session_generation", "created_at", "last_seen_at",
           "ended_at", "end_action", "end_reason")
_SELECT = f"SELECT {', '.join(_FIELDS)} FROM web_sessions"


@dataclass(frozen=True)
class WebSession:
    """One row of ``web_sessions`` (never the session's id: only its hash is stored)."""

    session_hash: str
    session_no: int
    username: str
    method: str
    session_generation: int
    created_at: datetime
    last_seen_at: datetime
    ended_at: datetime | None
    end_action: str | None  # logout, session.expired or session.revoked
    end_reason: str | None


@dataclass(frozen=True)
class Started:
    """A session just started: ``session_id`` is the secret the browser's cookie carries (shown nowhere else)."""

    session_id: str
    session: WebSession


@dataclass(frozen=True)
class Resolved:
    """What ``resolve`` found: the session, its account as it is now, and why the session is over (None: it may go
    on)."""

    session: WebSession
    user: identity.User | None
    ended: str | None

    @property
    def actor(self) -> Actor:
        if self.user is None:
            raise InvalidAccount(f"session {self.session.session_no} has no account")
        return self.user.actor


def session_hash(session_id: str) -> str:
    """The SHA-256 (hex) under which a session's id is stored: the id has 256 random bits, so a plain hash is
    enough (nobody can test guesses against it), and a copy of the database opens no session."""
    return hashlib.sha256(session_id.encode("ascii", "replace")).hexdigest()


def _idle_limit() -> timedelta:
    return timedelta(minutes=settings().session_minutes)


# --- start, read, touch, end ------------------------------------------------------------------


def start(store: Store, actor: Actor, method: str, *, now: datetime | None = None) -> Started:
    """Start a web session for the account ``actor`` names (just authenticated: ``identity.authenticate`` or
    ``identity.sign_in_external``); audited ``session.start`` with the session's number and method.

    The session records the account's ``session_generation`` read in the write's own transaction, so a password
    reset or a role change that commits before it ends it too. Refused (``PermissionDenied``, audited) when the
    account is disabled or holds another role by then (``Store.write`` re-reads it)."""
    session_id = secrets.token_urlsafe(32)
    digest = session_hash(session_id)
    at = now or utc_now()

    def fn(tx: Transaction) -> Change:  # run after Store.write re-read the account: refused first
        if method not in METHODS:
            raise InvalidAccount(f"{method!r} is not a login method ({', '.join(METHODS)})")
        generation = tx.scalar("SELECT coalesce(session_generation, 0) FROM users WHERE username = ?", [actor.name])
        number = tx.scalar("SELECT nextval('seq_web_session')")
        tx.execute("INSERT INTO web_sessions (session_hash, session_no, username, method, session_generation, "
                   "created_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [digest, number, actor.name, method, generation, at, at])
        return Change("user", actor.name, None, {"session": number, "method": method,
                                                 "session_generation": generation}, result=number)

    store.write(actor, "session.start", fn)
    return Started(session_id, _session(store, digest))


def _session(store: Store, digest: str) -> WebSession:
    return WebSession(**store.row(f"{_SELECT} WHERE session_hash = ?", [digest], what="web session"))


def get(store: Store, digest: str) -> WebSession | None:
    """The session stored under ``digest`` (``session_hash``), or None."""
    row = store.one(f"{_SELECT} WHERE session_hash = ?", [digest])
    return None if row is None else WebSession(**row)


def sessions_of(store: Store, username: str) -> list[WebSession]:
    """Every session of an account, newest first (for administrators and tests)."""
    return [WebSession(**row) for row in store.dicts(f"{_SELECT} WHERE username = ? ORDER BY session_no DESC",
                                                      [username])]


def why_over(session: WebSession, user: identity.User | None, now: datetime,
             idle: timedelta) -> tuple[str, str] | None:
    """(audit action, reason) when a session not yet marked ended is over now; None when it may go on."""
    revoked = identity.session_ended(user, session.session_generation)
    if revoked is None and user is not None and user.kind == "demo" and not settings().demo_mode:
        revoked = "demo mode is off"
    if revoked is not None:
        return "session.revoked", revoked
    if now - session.last_seen_at > idle:
        return "session.expired", f"no activity for more than {idle.total_seconds() / 60:g} minutes"
    return None


def resolve(store: Store, digest: str, *, now: datetime | None = None,
            idle: timedelta | None = None) -> Resolved | None:
    """The session stored under ``digest`` and whether it may go on (``Resolved.ended`` None), or None when there is
    none. A session found over that was not yet marked so is ended now (``session.expired`` or ``session.revoked``,
    audited once: a second run finds it ended)."""
    session = get(store, digest)
    if session is None:
        return None
    user = identity.get_user(store, session.username)
    if session.ended_at is not None:
        return Resolved(session, user, session.end_reason or "ended")
    over = why_over(session, user, now or utc_now(), idle if idle is not None else _idle_limit())
    if over is None:
        return Resolved(session, user, None)
    action, reason = over
    _end(store, session, action, reason, now)
    return Resolved(get(store, digest) or session, user, reason)


def touch(store: Store, session: WebSession, *, now: datetime | None = None) -> bool:
    """Record activity of a session that may go on, at most once per ``TOUCH_INTERVAL`` (True when written).

    One conditional single-row update outside ``Store.write``: a time stamp, not an action, so not audited. A write
    of the same row at the same moment (the session's end) wins: this one is skipped, not retried."""
    at = now or utc_now()
    if at - session.last_seen_at < TOUCH_INTERVAL:
        return False
    try:
        with store.cursor() as cursor:
            written = cursor.execute("UPDATE web_sessions SET last_seen_at = ? WHERE session_hash = ? "
                                     "AND ended_at IS NULL AND last_seen_at < ?",
                                     [at, session.session_hash, at - TOUCH_INTERVAL])
    except WriteConflict:
        return False
    return bool(written)


class _AlreadyEnded(Exception):
    """The session was ended by another write first: nothing to record."""


def _end(store: Store, session: WebSession, action: str, reason: str, now: datetime | None,
         actor: Actor | None = None) -> bool:
    at = now or utc_now()

    def fn(tx: Transaction) -> Change:
        written = tx.execute("UPDATE web_sessions SET ended_at = ?, end_action = ?, end_reason = ? "
                             "WHERE session_hash = ? AND ended_at IS NULL", [at, action, reason, session.session_hash])
        if not written:
            raise _AlreadyEnded()
        return Change("user", session.username, None, {"session": session.session_no, "method": session.method,
                                                       "reason": reason})

    role = actor.role if actor is not None else (store.scalar("SELECT role FROM users WHERE username = ?",
                                                              [session.username]) or "unknown")
    try:
        # what happened to the session, written whatever the account's state (as a failed login is)
        store.write(Actor(session.username, role), action, fn, as_account=False)
    except _AlreadyEnded:
        return False
    return True


def end(store: Store, actor: Actor, digest: str, *, now: datetime | None = None) -> bool:
    """Log out: end the session stored under ``digest`` (audited ``logout``; every tab of it is logged out at its
    next run). ``actor`` must be the session's own account. False (nothing written) when it had ended already."""
    session = get(store, digest)
    if session is None or session.ended_at is not None:
        return False
    if session.username != actor.name:
        raise InvalidAccount(f"session {session.session_no} is not a session of {actor.name}")
    return _end(store, session, "logout", "logout", now, actor)


# --- the cookie's hand-over ---------------------------------------------------------------------


Purpose = Literal["set", "clear"]


@dataclass(frozen=True)
class CookieNonce:
    """What a nonce stands for: set the cookie of a session (with its id, held in memory until then), or clear it
    after a logout; for one database, until ``expires_at``."""

    purpose: Purpose
    session_hash: str
    session_id: str | None
    database: Path
    expires_at: datetime


class CookieNonces:
    """One-time nonces that hand a session's cookie to the browser, in this process's memory (the console's page
    runs issue them; its server's route redeems them: the same process). Each is redeemed once, within
    ``lifetime``, for the purpose and database it was issued for."""

    def __init__(self, lifetime: timedelta = NONCE_LIFETIME) -> None:
        self.lifetime = lifetime
        self._pending: dict[str, CookieNonce] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(nonce: str) -> str:
        return hashlib.sha256(nonce.encode("utf-8", "replace")).hexdigest()

    def issue(self, store: Store, purpose: Purpose, digest: str, session_id: str | None = None, *,
              now: datetime | None = None) -> str:
        """A new nonce for ``purpose`` on the session stored under ``digest`` (``session_id``: for ``set``)."""
        if purpose == "set" and (session_id is None or session_hash(session_id) != digest):
            raise ValueError("setting a cookie needs the session's own id")
        at = now or utc_now()
        nonce = secrets.token_urlsafe(32)
        with self._lock:
            self._pending = {k: v for k, v in self._pending.items() if v.expires_at > at}
            if len(self._pending) >= MAX_PENDING_NONCES:
                self._pending.pop(next(iter(self._pending)))  # the oldest: its page is long gone
            self._pending[self._key(nonce)] = CookieNonce(purpose, digest, session_id if purpose == "set" else None,
                                                          store.path.resolve(), at + self.lifetime)
        return nonce

    def redeem(self, nonce: str, purpose: Purpose, store: Store, *, now: datetime | None = None) -> CookieNonce | None:
        """What ``nonce`` stands for, used up now; None when it is unknown, used, expired, or was issued
        for another purpose or database (it is used up all the same: a nonce is never tried twice)."""
        with self._lock:
            found = self._pending.pop(self._key(nonce), None)
        if found is None or found.purpose != purpose or found.database != store.path.resolve():
            return None
        return found if (now or utc_now()) < found.expires_at else None

    def pending(self, nonce: str, *, now: datetime | None = None) -> bool:
        """Whether ``nonce`` can still be redeemed (the page shows its hand-over until then)."""
        with self._lock:
            found = self._pending.get(self._key(nonce))
        return found is not None and (now or utc_now()) < found.expires_at


COOKIE_NONCES = CookieNonces()  # the process's one set: its page runs issue, its server's routes redeem
