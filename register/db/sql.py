"""The one builder of bound SQL parameters.

Statements whose shape is generated (the bulk scorer, the impact preview, the console's filtered
queries, the checklist's checks) collect their values in a ``Params``: each value becomes a named
placeholder (``$p1``, ``$p2`` ...) and the values travel beside the SQL, never inside it. Several
generated fragments that share one ``Params`` can be joined into one statement without renaming
anything (the impact preview joins two scorer SELECTs this way).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from os import PathLike
from typing import Any

__all__ = ["Params", "file_literal"]

_REUSABLE = (bool, int, float, str, date, datetime)


class Params:
    """Bound parameters of one statement under generated names (``$p1``, ``$p2`` ...).

    ``p(value)`` returns the placeholder to write into the SQL; ``p.values`` is the mapping to pass to
    the store with it. An equal scalar of the same type reuses its placeholder (a profile's weights
    often repeat; the statement stays shorter), lists always get their own.
    """

    def __init__(self, marker: str = "$") -> None:
        self.marker = marker  # "$name" in DuckDB; ":name" in Spark SQL (see register.scoring.scorer.Dialect)
        self.values: dict[str, Any] = {}
        self._names: dict[tuple[type, Any], str] = {}

    def __call__(self, value: Any) -> str:
        """The placeholder of ``value``."""
        key = (type(value), value) if isinstance(value, _REUSABLE) else None
        if key is not None and key in self._names:
            return f"{self.marker}{self._names[key]}"
        name = f"p{len(self.values) + 1}"
        self.values[name] = value
        if key is not None:
            self._names[key] = name
        return f"{self.marker}{name}"

    def in_list(self, values: Iterable[Any]) -> str:
        """``($p1, $p2, ...)`` for ``x IN (...)``: one placeholder per value."""
        return "(" + ", ".join(self(v) for v in values) + ")"


def file_literal(path: str | PathLike[str]) -> str:
    """``path`` as an SQL string literal, for the one place SQL takes no parameter: the file of a ``COPY``
    (quotes doubled; a NUL refused, as no file name holds one)."""
    text = str(path)
    if "\x00" in text:
        raise ValueError("a file name cannot hold NUL")
    return "'" + text.replace("'", "''") + "'"


def multiset_differences(store: Any, expected: str, stored: str, params: Any = ()) -> tuple[int, int]:
    """How many rows of the SELECT ``expected`` are missing from the SELECT ``stored``, and how many rows of
    ``stored`` are extra, as multisets (``EXCEPT ALL`` both ways); ``store`` is a Store or a Transaction. The
    checks of derived tables (the search index, ``response_ids``) compare themselves with their definition so."""
    missing = store.scalar(f"SELECT count(*) FROM ({expected} EXCEPT ALL {stored})", params)
    extra = store.scalar(f"SELECT count(*) FROM ({stored} EXCEPT ALL {expected})", params)
    return int(missing or 0), int(extra or 0)
