"""``register.collector.collector_paused``: the cyclic collector off for a bulk pass, restored as it was."""

from __future__ import annotations

import gc

import pytest

from register.collector import collector_paused


@pytest.fixture(autouse=True)
def collector_back_on():
    yield
    gc.enable()


def test_the_collector_is_off_inside_and_back_on_after():
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_error_inside_still_turns_it_back_on():
    gc.enable()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_nested_blocks_leave_it_off_until_the_outermost_ends():
    gc.enable()
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it off: it leaves it off
    assert gc.isenabled()


def test_a_collector_someone_turned_off_stays_off():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
