"""``ui.framework.data``'s ``cached(read)`` and ``write(fn, ...)``: a register read as a cached call that supplies
the store, one cache per read, cleared by what a write changed; a write that supplies the store and clears.

The store is replaced by a marker object (``data.get_store`` is looked up on every call), so these run without a
database; the reads below are this module's functions, counted in ``CALLS``.
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import date

import pytest

from register.console.queries.filters import Filters
from ui.framework import data

STORE = object()
CALLS: Counter[str] = Counter()


@pytest.fixture(autouse=True)
def _marker_store(monkeypatch):
    CALLS.clear()
    monkeypatch.setattr(data, "get_store", lambda: STORE)


def read_a(store, x, y=1):
    assert store is STORE
    CALLS["a"] += 1
    return ("a", x, y)


def read_b(store, x, y=1):  # the same signature and arguments as read_a: must not share its cache
    assert store is STORE
    CALLS["b"] += 1
    return ("b", x, y)


def read_keyword(store, f: Filters, *, limit: int = 10, offset: int = 0):
    CALLS["keyword"] += 1
    return (f, limit, offset)


def read_account(store):
    CALLS["account"] += 1
    return ["event"]


def read_object(store):
    CALLS["object"] += 1
    return {"unpicklable": lambda: None}


def test_a_cached_read_supplies_the_store_and_is_computed_once_per_arguments():
    a = data.cached(read_a)
    assert a(1) == ("a", 1, 1) and a(1) == ("a", 1, 1)
    assert CALLS["a"] == 1
    assert a(2, y=3) == ("a", 2, 3)
    assert CALLS["a"] == 2


def test_two_reads_never_share_a_cache():
    a, b = data.cached(read_a), data.cached(read_b)
    assert a(1) == ("a", 1, 1)
    assert b(1) == ("b", 1, 1)
    assert CALLS == {"a": 1, "b": 1}


def test_two_local_reads_with_one_name_and_source_never_share_a_cache():
    def make(value):
        def read(store):
            return value
        return read

    first, second = data.cached(make("first")), data.cached(make("second"))
    assert (first(), second()) == ("first", "second")


def test_the_same_read_gives_the_same_wrapper_and_cache():
    """What a call site does (``data.cached(registers.list_sources)(role=role)``, on every run)."""
    assert data.cached(read_a) is data.cached(read_a)
    data.cached(read_a)(5)
    data.cached(read_a)(5)
    assert CALLS["a"] == 1
    assert data.cached(read_a, scope="account") is not data.cached(read_a)


def test_positional_keyword_and_default_arguments_share_an_entry():
    a = data.cached(read_a)
    a(1)
    a(x=1)
    a(1, 1)
    a(1, y=1)
    assert CALLS["a"] == 1


def test_a_filters_argument_keys_the_cache_like_any_other():
    keyword = data.cached(read_keyword)
    f = Filters(date_from=date(2025, 1, 1), use_cases=("hr",))
    assert keyword(f, limit=5) == (f, 5, 0)
    keyword(Filters(date_from=date(2025, 1, 1), use_cases=("hr",)), offset=0, limit=5)
    assert CALLS["keyword"] == 1
    keyword(Filters(use_cases=("hr",)), limit=5)
    assert CALLS["keyword"] == 2
    with pytest.raises(TypeError):
        keyword(f, 5)  # keyword-only in the read: refused as the read itself would refuse it


def test_a_record_write_clears_every_read_an_account_write_only_the_account_reads():
    a, account = data.cached(read_a), data.cached(read_account, scope="account")
    a(1), account()
    data.after_account_write()
    a(1), account()
    assert CALLS == {"a": 1, "account": 2}
    data.after_write()
    a(1), account()
    assert CALLS == {"a": 2, "account": 3}


def test_a_resource_read_is_shared_not_copied_and_cleared_by_a_write():
    shared = data.cached(read_object, resource=True)
    assert shared() is shared()
    assert CALLS["object"] == 1
    data.after_write()
    shared()
    assert CALLS["object"] == 2


def test_a_replaced_read_is_the_one_called(monkeypatch):
    """As a forwarder calling ``module.read(store, ...)`` did: a test counting the register's reads replaces the
    function in its module, after the wrapper was made."""
    a = data.cached(read_a)
    monkeypatch.setattr(sys.modules[__name__], "read_a", lambda store, x, y=1: ("replaced", x))
    assert a(7) == ("replaced", 7)


def test_a_decorated_read_shapes_what_it_reads():
    @data.cached(scope="account")
    def shaped(store, n: int) -> list[int]:
        assert store is STORE
        CALLS["shaped"] += 1
        return list(range(n))

    assert shaped(3) == [0, 1, 2] and shaped(n=3) == [0, 1, 2]
    assert CALLS["shaped"] == 1
    data.after_account_write()
    shaped(3)
    assert CALLS["shaped"] == 2


def test_a_write_supplies_the_store_returns_its_result_and_clears():
    a, account = data.cached(read_a), data.cached(read_account, scope="account")
    a(1), account()

    def save(store, value, *, twice=False):
        assert store is STORE
        return value * (2 if twice else 1)

    assert data.write(save, 21, twice=True) == 42
    a(1), account()
    assert CALLS == {"a": 2, "account": 2}


def test_a_refused_write_raises_and_still_clears():
    a = data.cached(read_a)
    a(1)

    def refuse(store):
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        data.write(refuse)
    a(1)
    assert CALLS["a"] == 2


def test_an_account_write_clears_only_the_account_reads():
    a, account = data.cached(read_a), data.cached(read_account, scope="account")
    a(1), account()

    def sign_in(store, name):
        return name

    assert data.account_write(sign_in, "ann") == "ann"
    with pytest.raises(KeyError):
        data.account_write(lambda store: {}["missing"])
    a(1), account()
    assert CALLS == {"a": 1, "account": 2}
