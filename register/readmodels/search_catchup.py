"""The search index caught up in the background: one thread per store, in the console's process.

Every write of revisions ends in ``hub.revisions_committed``. On the command line that catches the index up before
the command returns (scripts read the index after an import). In the console a person or a pipeline waits for the
import's report, and indexing costs about as much CPU as storing (docs/performance.md, "The search index off the
import's path"). So the console runs a ``BackgroundIndexer`` per store (``start_indexer``, from
``ui.features.search_status.ensure_search_indexer``, started like the inbox watcher): while one runs, the hub hands
the catch-up to it (``hand_over``: the thread is woken) and the write returns at once. The thread catches the index
up in slices of ``BACKGROUND_SLICE_KEYS`` response keys, each slice one ``Store.write`` of its own (audited
``search.indexed`` as ``INDEX_ACTOR``), so it never holds the write lock long: an import, a label, a score run takes
its turn between two slices. It also looks every ``poll_seconds`` whether the index is behind (behind when the
console started, or left behind by ``python -m register import --defer-index``); a look that finds nothing to do
reads two numbers.

Search never waits for it: the revisions above the index's mark are scanned (``search_index``), so a search finds
the same before and after the catch-up, only more slowly meanwhile; the Responses page says how far behind the index
is (``search_index.lag``).
"""

from __future__ import annotations

import logging
import threading

from register.access.permissions import SYSTEM_ROLE
from register.db.store import Actor, Store
from register.readmodels import search_index

__all__ = ["BACKGROUND_SLICE_KEYS", "INDEX_ACTOR", "BackgroundIndexer", "hand_over", "running_indexer",
           "start_indexer"]

log = logging.getLogger(__name__)

INDEX_ACTOR = Actor("search-index", SYSTEM_ROLE)  # who the background catch-up's slices are audited as
# Response keys per slice of the background catch-up, which bounds how long it holds the write lock: at six claims
# an answer about 0.8 CPU-s a slice, 0.8-1.3 s wall on two shared cores at load 5-7, where 20,000 keys took 1.3-2.4 s
# and 250,000 (SLICE_KEYS) the whole catch-up of 100,000 answers (7-13 s); the catch-up's CPU in all the same within
# the noise (about 3x read_json's; docs/performance.md, "The search index off the import's path"). Each slice also
# reads the whole vocabulary once: on a register of millions of distinct words, smaller slices would cost more.
BACKGROUND_SLICE_KEYS = 10_000

_INDEXERS: dict[int, BackgroundIndexer] = {}  # the indexer of each store (by identity) in this process
_INDEXERS_LOCK = threading.Lock()


class BackgroundIndexer:
    """A thread catching the search index of ``store`` up whenever woken (``wake``) and every ``poll_seconds``,
    ``slice_keys`` keys per transaction, until ``stop``.

    ``catch_up_once`` is one pass (called by the thread, or directly). ``indexed`` counts the revisions it indexed,
    ``last_error`` the last pass's failure (logged; the next pass tries again: the index is never wrong, only
    behind, as a pass commits whole slices)."""

    def __init__(self, store: Store, *, poll_seconds: float, slice_keys: int = BACKGROUND_SLICE_KEYS,
                 actor: Actor = INDEX_ACTOR):
        if poll_seconds <= 0:
            raise ValueError(f"poll_seconds must be > 0, got {poll_seconds}")
        if slice_keys < 1:
            raise ValueError(f"slice_keys must be >= 1, got {slice_keys}")
        self.store = store
        self.poll_seconds = poll_seconds
        self.slice_keys = slice_keys
        self.actor = actor
        self.indexed = 0
        self.passes = 0
        self.last_error: str | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        # ``wake`` counts the requests; a pass records the count it started after (``wait_caught_up``)
        self._state = threading.Condition()
        self._asked = 0
        self._served = 0

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> BackgroundIndexer:
        if not self.running:
            self._stop.clear()
            with self._state:  # its first pass is asked for: the index may be behind already
                self._asked += 1
            self._thread = threading.Thread(target=self._run, name=f"hri-search-index:{self.store.path.name}",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> None:
        """Stop after the slice being written (a transaction is never cut short; what it did not reach stays above
        the mark, searched by a scan, for the next catch-up)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        with self._state:
            self._state.notify_all()

    def wake(self) -> None:
        """Catch up now rather than at the next look (a write of revisions has committed)."""
        with self._state:
            self._asked += 1
            self._wake.set()

    def wait_caught_up(self, timeout: float | None = None) -> bool:
        """Wait until a pass that started after every ``wake`` (and ``start``) so far has ended (or the thread has
        stopped); True when one has. For tests and callers that need the index at the head (a search needs nothing
        of it)."""
        with self._state:
            target = self._asked
            return self._state.wait_for(lambda: self._served >= target or not self.running, timeout) \
                and self._served >= target

    def catch_up_once(self) -> int:
        """One pass: every revision above the mark indexed, a slice per transaction (stopping between slices when
        ``stop`` is called); returns how many were indexed."""
        done = search_index.catch_up(self.store, self.actor, slice_keys=self.slice_keys, stopping=self._stop.is_set)
        self.indexed += done
        return done

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._state:
                asked = self._asked
                self._wake.clear()
            try:
                self.catch_up_once()
                self.last_error = None
            except Exception as error:  # noqa: BLE001 - logged; the next pass tries again
                self.last_error = f"{type(error).__name__}: {error}"
                log.warning("search index: the background catch-up failed (%s); the next pass tries again",
                            self.last_error)
            self.passes += 1
            with self._state:
                self._served = asked
                self._state.notify_all()
            self._wake.wait(self.poll_seconds)


def start_indexer(store: Store, *, poll_seconds: float, slice_keys: int = BACKGROUND_SLICE_KEYS
                  ) -> BackgroundIndexer:
    """The running indexer of ``store`` in this process, started if there is none (thread-safe: two sessions asking
    at once get the same one)."""
    with _INDEXERS_LOCK:
        indexer = _INDEXERS.get(id(store))
        if indexer is None or indexer.store is not store or indexer.poll_seconds != poll_seconds \
                or indexer.slice_keys != slice_keys:
            if indexer is not None:
                indexer.stop()
            indexer = BackgroundIndexer(store, poll_seconds=poll_seconds, slice_keys=slice_keys)
            _INDEXERS[id(store)] = indexer
        return indexer.start()


def running_indexer(store: Store) -> BackgroundIndexer | None:
    """The indexer running for ``store`` in this process, or None."""
    with _INDEXERS_LOCK:
        indexer = _INDEXERS.get(id(store))
    return indexer if indexer is not None and indexer.store is store and indexer.running else None


def hand_over(store: Store) -> bool:
    """Wake the indexer running for ``store``: True when one runs (it catches the index up), False when the caller
    must (or leaves it for later)."""
    indexer = running_indexer(store)
    if indexer is None:
        return False
    indexer.wake()
    return True
