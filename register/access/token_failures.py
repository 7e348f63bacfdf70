"""Failed API-token authentications, limited per client: audited one by one up to a limit, then one lock-out.

A pipeline presents its token on every request, so a wrong one (a typo, a revoked or expired token left in a job's
configuration, or someone trying tokens) fails on every request. Auditing each failure would let anyone grow the
trail as fast as they can send requests; auditing none would hide them. So, per client (what the caller names it
by: the peer address):

- **Up to ``FAILURES_ALLOWED`` failures in ``WINDOW``** are each answered with ``TokenRejected`` and audited as
  ``api_token.rejected`` (the reason, the client and the token id when the token names one; never the secret).
- **The next failure locks the client out for ``LOCK``**: one ``api_token.locked_out`` event, and
  ``TooManyAttempts`` with ``retry_after`` seconds. Failures during the lock get ``TooManyAttempts`` too and are
  only counted; the count goes into the client's next audited event (``refused_while_locked``). So the trail grows
  by at most ``FAILURES_ALLOWED + 1`` events per client per ``WINDOW + LOCK``, however fast the attempts come.
- **A valid token is still accepted from a locked-out client.** Every process on the console's own machine is the
  same client (127.0.0.1): one misconfigured job must not lock the pipeline beside it out. Nothing is given away: a
  token's secret has 256 random bits and cannot be found by trying; the limit bounds the trail and the work that
  failures cause.

The counts live in this process's memory (the one process that serves the API), per Store (per database file): a
restart forgets them, the trail keeps what was audited. At most ``MAX_CLIENTS`` clients are tracked; the ones
whose window and lock are over go first.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, NoReturn

from register.db.store import Actor, Change, Store
from register.errors import TokenRejected, TooManyAttempts

FAILURES_ALLOWED = 10           # per client per WINDOW, each audited
WINDOW = timedelta(minutes=5)
LOCK = timedelta(minutes=5)     # then: TooManyAttempts, one event for the lock-out
MAX_CLIENTS = 10_000            # clients tracked per database (memory bound)
MAX_CLIENT_CHARS = 100          # a client name longer than this is cut (it is the caller's text)
REJECTED = "api_token.rejected"
LOCKED_OUT = "api_token.locked_out"
ANONYMOUS = Actor("(api token)", "anonymous")  # the actor of failures no account can be named for


@dataclass
class _Client:
    failures: deque[datetime] = field(default_factory=deque)  # the failures of the current window, oldest first
    locked_until: datetime | None = None
    refused_while_locked: int = 0                            # not audited one by one; told in the next event


@dataclass(frozen=True)
class Outcome:
    """What one failure leads to: the audit event to append (``REJECTED``, ``LOCKED_OUT`` or None: counted
    only), the seconds to wait (None: not locked out), the failures of the window so far and the failures refused
    during the client's last lock that no event has told yet."""

    action: str | None
    retry_after: int | None
    failures: int
    refused_while_locked: int


class FailureLimiter:
    """The failures of one database's clients (thread-safe)."""

    def __init__(self) -> None:
        self._clients: dict[str, _Client] = {}
        self._lock = threading.Lock()

    def failed(self, client: str, at: datetime) -> Outcome:
        """Count a failure of ``client`` at ``at`` and say what follows from it."""
        with self._lock:
            state = self._clients.get(client)
            if state is None:
                self._forget_idle(at)
                state = self._clients[client] = _Client()
            if state.locked_until is not None:
                # a clock set back by more than the lock ends it: a lock never lasts longer than LOCK
                if at < state.locked_until and state.locked_until - at <= LOCK:
                    state.refused_while_locked += 1
                    return Outcome(None, _seconds(state.locked_until - at), FAILURES_ALLOWED, 0)
                state.locked_until = None
            while state.failures and state.failures[0] <= at - WINDOW:
                state.failures.popleft()
            state.failures.append(at)
            told, state.refused_while_locked = state.refused_while_locked, 0
            if len(state.failures) <= FAILURES_ALLOWED:
                return Outcome(REJECTED, None, len(state.failures), told)
            state.failures.clear()
            state.locked_until = at + LOCK
            return Outcome(LOCKED_OUT, _seconds(LOCK), FAILURES_ALLOWED + 1, told)

    def _forget_idle(self, at: datetime) -> None:
        """Keep at most ``MAX_CLIENTS - 1`` clients before one more is added: idle ones go first, then the oldest."""
        if len(self._clients) < MAX_CLIENTS:
            return
        for name in [name for name, state in self._clients.items() if _idle(state, at)]:
            del self._clients[name]
        while len(self._clients) >= MAX_CLIENTS:
            del self._clients[next(iter(self._clients))]


def _idle(state: _Client, at: datetime) -> bool:
    return (state.locked_until is None or state.locked_until <= at) and (
        not state.failures or state.failures[-1] <= at - WINDOW)


def _seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


_limiters: weakref.WeakKeyDictionary[Store, FailureLimiter] = weakref.WeakKeyDictionary()
_limiters_lock = threading.Lock()


def limiter(store: Store) -> FailureLimiter:
    """The failure counts of ``store``'s database in this process."""
    with _limiters_lock:
        found = _limiters.get(store)
        if found is None:
            found = _limiters[store] = FailureLimiter()
        return found


def client_name(client: str) -> str:
    """The caller's name for a client as counted and audited: stripped, at most ``MAX_CLIENT_CHARS``."""
    return (str(client or "").strip() or "(unknown client)")[:MAX_CLIENT_CHARS]


def refuse(store: Store, client: str, at: datetime, reason: str, *, actor: Actor = ANONYMOUS,
           token_id: str | None = None) -> NoReturn:
    """Count a failed authentication of ``client``, audit it as the limit says, and raise ``TokenRejected``
    (``TooManyAttempts`` once the client is over the limit). ``reason`` is for the trail only (the caller is told
    nothing about it); ``actor`` is the token's account when the token names one."""
    client = client_name(client)
    outcome = limiter(store).failed(client, at)
    details: dict[str, Any] = {"client": client, "failures_in_window": outcome.failures,
                               "window_seconds": int(WINDOW.total_seconds())}
    if outcome.refused_while_locked:
        details["refused_while_locked"] = outcome.refused_while_locked
    if outcome.action == REJECTED:
        store.write(actor, REJECTED, lambda _tx: Change(
            "api_token", token_id, None, {**details, "reason": reason, "token_id": token_id}), as_account=False)
    elif outcome.action == LOCKED_OUT:
        store.write(ANONYMOUS, LOCKED_OUT, lambda _tx: Change(
            "api_client", client, None, {**details, "locked_seconds": int(LOCK.total_seconds()),
                                         "last_reason": reason, "last_token_id": token_id}), as_account=False)
    if outcome.retry_after is not None:
        raise TooManyAttempts(outcome.retry_after)
    raise TokenRejected()
