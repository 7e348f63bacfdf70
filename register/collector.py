"""The cyclic garbage collector paused for a bulk pass of Python over many records.

A pass that decodes or decides hundreds of thousands of records allocates lists, tuples and dicts that the cyclic
collector tracks; it then runs again and again during the pass, each time walking every object still alive -- in a
process holding a large heap, that doubled the import's compiled check and half again the decision's Python pass
(docs/performance.md). Such a pass makes no reference cycle worth collecting while it runs: what it allocates is
freed by reference counting, and anything else is collected as usual once the collector runs again.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Disable the cyclic garbage collector for the block and restore it as it was (nested use is safe: the
    outermost block turns it back on)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
