"""The app's one Store per process, its cached reads and its writes.

The Store is a Streamlit resource (one DuckDB read-write connection per process, as DuckDB requires). A page reads
through ``cached(read)``: the register function ``read(store, ...)`` as a Streamlit-cached call that supplies the
store, its results kept per function and arguments (``Filters`` is a frozen dataclass) and cleared by what a write
changed. A page writes through ``write(fn, ...)`` (``account_write`` for accounts and sessions), which calls the
register function with the store and then clears:

- ``after_write`` for a write to the record (every cached read may be stale);
- ``after_account_write`` for a login, logout, failed login or account change: only the reads made with
  ``cached(read, scope="account")`` (the audit trail, the annotators), so that a login never makes every user's next
  view of the data cold.
"""

from __future__ import annotations

import inspect
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, Literal, TypeVar

import streamlit as st

from register import SYSTEM, Store
from register.cli import handoff_server
from register.console.queries import overview as overview_queries
from register.db.store import database_path_from_env
from register.demo import is_empty, seed_demo
from register.labels import rubrics
from register.scoring import profiles
from register.settings import settings

Scope = Literal["record", "account"]
T = TypeVar("T")


@st.cache_resource(show_spinner=False)
def get_store() -> Store:
    """Open (and on first start migrate) the database named by ``HRI_DB``, its DuckDB buffers bounded by
    ``HRI_CONSOLE_MEMORY_LIMIT`` (the server is one process for every user: its memory must stay bounded)."""
    store = Store(database_path_from_env(), memory_limit=settings().console_memory_limit)
    profiles.ensure_default_profile(store, SYSTEM)
    rubrics.ensure_default_rubric(store, SYSTEM)  # the labelling rubric in force (version 1: the shipped file)
    # while this process holds the file, `python -m register` hands its commands here: listen from the moment it
    # does, whoever opened it (a page, the API, the inbox watcher), and clear the cached reads after a command wrote
    handoff_server.ensure_listener(store.path, get_store, on_write=after_write)
    return store


def seed_if_empty(store: Store) -> bool:
    """Load the demo set into an empty database, with a progress bar. Returns True when it seeded.

    Adds ``HRI_DEMO_SYNTHETIC`` synthetic responses, like ``make run`` does. Checked once per session:
    a database that has responses never becomes empty again.
    """
    if st.session_state.get("_seed_checked"):
        return False
    st.session_state["_seed_checked"] = True
    if not is_empty(store):
        return False
    synthetic = settings().demo_synthetic
    bar = st.progress(0.0, text="First start: loading the demo data set...")

    def progress(done, total, message):
        bar.progress(min(1.0, done / total) if total else 0.5, text=message)

    seed_demo(store, SYSTEM, synthetic=synthetic, progress=progress)
    bar.empty()
    after_write()
    return True


def after_write() -> None:
    """A write to the record (responses, scores, registers, labels, profiles): clear every cached read."""
    st.cache_data.clear()
    for read in _RESOURCE_READS:
        read.clear()


def after_account_write() -> None:
    """A write to accounts and the audit trail only (a session event, a password or role change).

    Clears the reads cached with ``scope="account"`` (the audit trail and its approvals, the annotators), which show
    such events, and nothing else: no cached read depends on who is logged in (roles are passed as arguments, and
    service functions check the account's current state uncached).
    """
    for read in _ACCOUNT_READS:
        read.clear()


def write(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(store, *args, **kwargs)`` -- a register write -- then ``after_write``; returns what ``fn`` returns.

    The caches are cleared also when ``fn`` raises (its error propagates): a refused write may have recorded the
    refusal or part of its rows, and a cleared cache costs one read, never a stale view."""
    try:
        return fn(get_store(), *args, **kwargs)
    finally:
        after_write()


def account_write(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``write`` for a write to accounts and sessions only: clears with ``after_account_write`` (a refusal -- a
    failed login, a refused role change -- is audited too, so it clears as well)."""
    try:
        return fn(get_store(), *args, **kwargs)
    finally:
        after_account_write()


# --- cached reads ---------------------------------------------------------------------------------------

_ACCOUNT_READS: list = []  # cleared by after_account_write (and, as every st.cache_data, by after_write)
_RESOURCE_READS: list = []  # st.cache_resource reads: cleared by after_write
_WRAPPERS: dict[tuple, Callable] = {}
_WRAPPERS_LOCK = threading.Lock()


def cached(read: Callable[..., T] | None = None, *, scope: Scope = "record", resource: bool = False,
           max_entries: int | None = None) -> Any:
    """``read(store, ...)`` as a cached call that supplies the process's store: ``cached(read)(*args, **kwargs)`` is
    ``read(get_store(), *args, **kwargs)``, computed once per function and arguments until a write clears it.

    Used on a register function (``filter_options = cached(overview_queries.filter_options)``, or at the call site,
    ``data.cached(registers.list_sources)(role=role)``: the same read gives the same wrapper and cache), or as a
    decorator on a ``ui`` function that takes the store first and shapes what it reads (``@data.cached``).

    - The cache is ``st.cache_data`` (results copied, so they must pickle), cleared by ``after_write``;
      ``scope="account"`` for a read of accounts or the audit trail, cleared by ``after_account_write`` as well.
    - ``resource=True``: ``st.cache_resource`` instead, for a result ``st.cache_data`` cannot pickle (one object
      every session shares: it must not be changed), cleared by ``after_write``; ``max_entries`` bounds either.
    - One cache per read: Streamlit names a cache by its function's module, qualified name and source, which are
      the read's (a read defined inside a function also by its identity, as two may share name and source; a read
      cached with another scope or bound has a cache of its own).
    - Arguments are bound to the read's signature, defaults filled in, before the cache is asked: a call that names
      an argument and one that passes it by position (or leaves it at its default) share an entry, as they must
      for the warm-up (``ui.features.warmup``) to fill the entries the pages ask for.
    - The read is called by its module and name on every call, as a forwarder calling ``module.read(store, ...)``
      did: a function that replaced it there (a test counting the register's reads) is the one called.
    """
    if read is None:
        return partial(cached, scope=scope, resource=resource, max_entries=max_entries)
    key = (read, scope, resource, max_entries)
    with _WRAPPERS_LOCK:
        if key not in _WRAPPERS:
            _WRAPPERS[key] = _wrap(read, scope, resource, max_entries)
        return _WRAPPERS[key]


def _wrap(read: Callable, scope: Scope, resource: bool, max_entries: int | None) -> Callable:
    signature = inspect.signature(read)
    after_store = signature.replace(parameters=list(signature.parameters.values())[1:])

    def call(*args: Any, **kwargs: Any) -> Any:
        return _current(read)(get_store(), *args, **kwargs)

    # the cache's name: Streamlit hashes the function's module, qualified name and source (``inspect.getsource``
    # follows ``__wrapped__`` to the read's); a local read adds its identity, another scope or bound its own suffix
    call.__module__, call.__name__, call.__doc__ = read.__module__, read.__name__, read.__doc__
    call.__qualname__ = read.__qualname__ + ("" if "<locals>" not in read.__qualname__ else f"@{id(read):x}") + \
        ("" if scope == "record" else f"[{scope}]") + ("" if max_entries is None else f"[{max_entries}]")
    call.__wrapped__ = read  # type: ignore[attr-defined]
    call.__signature__ = after_store  # type: ignore[attr-defined]  # the arguments' names, for the cache key
    cache = (st.cache_resource if resource else st.cache_data)(show_spinner=False, max_entries=max_entries)(call)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        bound = after_store.bind(*args, **kwargs)
        bound.apply_defaults()
        return cache(*bound.args, **bound.kwargs)

    wrapper.__module__, wrapper.__name__, wrapper.__qualname__ = read.__module__, read.__name__, read.__qualname__
    wrapper.__doc__ = read.__doc__
    wrapper.__signature__ = after_store  # type: ignore[attr-defined]
    wrapper.clear = cache.clear  # type: ignore[attr-defined]
    wrapper.cached_read = read  # type: ignore[attr-defined]
    if resource:
        _RESOURCE_READS.append(cache)
    if scope == "account":
        _ACCOUNT_READS.append(cache)
    return wrapper


def _current(read: Callable) -> Callable:
    """``read`` as its module names it now, or ``read`` itself when that name holds no plain function (``read`` is
    local, or the name is the wrapper ``cached`` made of a decorated function)."""
    found: Any = sys.modules.get(read.__module__)
    for part in read.__qualname__.split("."):
        found = getattr(found, part, None)
    return found if callable(found) and not hasattr(found, "cached_read") else read


# --- reads every area uses ------------------------------------------------------------------------------

profile = cached(profiles.active_profile)
version_profile = cached(profiles.get_profile)  # its bands, band actions and weights: what scores under it show with
filter_options = cached(overview_queries.filter_options)
