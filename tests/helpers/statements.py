"""The SQL statements a piece of code sends, recorded at the cursor (every read and write of a ``Store`` passes
``Cursor._run``): for tests that hold a query to what it reads, not only to what it returns."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from register.db.store import Cursor


@contextmanager
def recorded_statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A list that holds the text of every statement run inside the ``with`` block, in order."""
    statements: list[str] = []
    run = Cursor._run

    def recorded(self: Cursor, sql: str, params):
        statements.append(sql)
        return run(self, sql, params)

    with monkeypatch.context() as patch:
        patch.setattr(Cursor, "_run", recorded)
        yield statements
