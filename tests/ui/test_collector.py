"""The server's garbage collector skips what startup loaded (``ui.framework.collector``, issue 14): the objects
alive at the first page run of the process are frozen once, and garbage made after it is collected as before."""

from __future__ import annotations

import gc
import weakref

import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.helpers.paths import REPO_ROOT
from ui.framework.collector import freeze_startup_objects


class _Node:
    """A weak-referenceable object to build a reference cycle of."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def _cycle() -> weakref.ref:
    """A two-object reference cycle nothing else holds (only the collector can free it); a weak reference to it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_first_call_freezes_what_is_alive_and_later_calls_freeze_nothing_more():
    gc.unfreeze()
    st.cache_resource.clear()
    assert gc.get_freeze_count() == 0
    frozen = freeze_startup_objects()
    assert frozen > 1000  # modules, classes and functions of the loaded libraries
    made_since = [[i] for i in range(5000)]  # tracked containers made after the freeze
    assert freeze_startup_objects() == frozen  # once per process: the first call's count
    # nothing more frozen (frozen objects freed since only lower the count; the 5,000 lists would raise it)
    assert gc.get_freeze_count() <= frozen
    del made_since  # alive until here, so the second call could have frozen them


def test_garbage_made_after_the_freeze_is_still_collected():
    gc.unfreeze()
    st.cache_resource.clear()
    freeze_startup_objects()
    ref = _cycle()
    assert ref() is not None  # a cycle: reference counting alone does not free it
    gc.collect()
    assert ref() is None  # the collector walks what was made since the freeze


def test_a_cycle_alive_at_the_freeze_is_left_alone():
    """What the freeze covers is what it is for: the collector no longer walks those objects (the test is the
    mechanism's own evidence that frozen objects are out of the walk)."""
    gc.unfreeze()
    st.cache_resource.clear()
    ref = _cycle()
    freeze_startup_objects()
    gc.collect()
    assert ref() is not None
    gc.unfreeze()  # back in the walk: collected
    gc.collect()
    assert ref() is None


def test_the_apps_first_run_freezes_the_startup_objects():
    gc.unfreeze()
    st.cache_resource.clear()
    assert gc.get_freeze_count() == 0
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert gc.get_freeze_count() > 1000
