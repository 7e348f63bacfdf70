"""Ratings and the unit-by-value count table that the measures of ``hri_core.agreement`` start from.

Data: a rating is ``Rating(unit, rater, value)``; a unit is what is judged (a claim, keyed e.g. by
``response_id/claim_id``), a rater is an annotator, a value is a string (nominal) or a number. A rater
who skipped a unit simply has no rating for it. The same (unit, rater) twice with the same value
counts once; with different values it is an error (``AgreementError`` names the unit and rater).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import FieldProblem, HRIError

__all__ = ["LEVELS", "AgreementError", "Level", "Rating", "Value"]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")

Value = str | float
"""A rating's value: a category name (nominal) or a number (any level)."""


class Rating(NamedTuple):
    """One annotator's judgement of one unit."""

    unit: str
    rater: str
    value: Value


class AgreementError(HRIError):
    """Ratings that cannot be measured: conflicting duplicates, a value of the wrong kind, ..."""

    title = "Invalid ratings"



# --- ratings -> a unit-by-value count table ----------------------------------------------------


def _sort_key(value: Value) -> tuple[int, float, str]:
    """Numbers first in numeric order, then strings: a stable order for mixed nominal categories."""
    if isinstance(value, str):
        return (1, 0.0, value)
    return (0, float(value), "")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _by_unit(ratings: Iterable[Rating]) -> tuple[dict[str, dict[str, Value]], set[str]]:
    """unit -> rater -> value, in order of first appearance; identical duplicates collapse, conflicts raise."""
    table: dict[str, dict[str, Value]] = {}
    raters: set[str] = set()
    problems: list[FieldProblem] = []
    for unit, rater, value in ratings:
        row = table.setdefault(unit, {})
        raters.add(rater)
        if rater in row and row[rater] != value:
            problems.append(FieldProblem(
                f"unit {unit!r}, rater {rater!r}",
                f"rated twice with different values: {row[rater]!r} and {value!r}"))
            continue
        row[rater] = value
    if problems:
        raise AgreementError(problems)
    return table, raters


def _checked_values(table: Mapping[str, Mapping[str, Value]], level: Level,
                    order: Sequence[Value] | None) -> dict[Value, float]:
    """The value domain with the number each value stands for (its rank for ``order``-ed ordinals).

    Nominal values stand for themselves (the number is unused); other levels need numbers, except an
    ordinal scale given explicitly as ``order`` (lowest first).
    """
    if level not in LEVELS:
        raise AgreementError([FieldProblem("level", f"must be one of {', '.join(LEVELS)}, got {level!r}")])
    if order is not None and level != "ordinal":
        raise AgreementError([FieldProblem("order", "an explicit order applies to the ordinal level only")])
    rank = {value: float(i) for i, value in enumerate(order)} if order is not None else None
    domain: dict[Value, float] = {}
    problems: list[FieldProblem] = []
    for unit, row in table.items():
        for rater, value in row.items():
            where = f"unit {unit!r}, rater {rater!r}"
            if rank is not None:
                if value not in rank:
                    problems.append(FieldProblem(where, f"value {value!r} is not in the given order"))
                    continue
                domain[value] = rank[value]
            elif level == "nominal":
                domain[value] = 0.0
            elif not _is_number(value):
                problems.append(FieldProblem(where, f"value {value!r} is not a finite number ({level} level)"))
            elif level == "ratio" and float(value) < 0:
                problems.append(FieldProblem(where, f"value {value!r} is negative (ratio level)"))
            else:
                domain[value] = float(value)
    if problems:
        raise AgreementError(problems)
    return domain


@dataclass(frozen=True)
class _Table:
    """Pairable units as a count matrix: ``counts[u, v]`` = how many raters gave unit u value v."""

    values: tuple[Value, ...]  # column order: by the number each value stands for (rank order)
    numbers: NDArray[np.float64]  # the number of each column (interval/ratio distances, ordinal order)
    counts: NDArray[np.float64]  # pairable units x values
    units: int
    raters: int


def _table(ratings: Iterable[Rating], level: Level, order: Sequence[Value] | None) -> _Table:
    table, raters = _by_unit(ratings)
    domain = _checked_values(table, level, order)
    pairable_units = [row for row in table.values() if len(row) >= 2]
    used = {value for row in pairable_units for value in row.values()}
    values = tuple(sorted(used, key=lambda v: (domain[v], _sort_key(v))))
    column = {value: i for i, value in enumerate(values)}
    counts = np.zeros((len(pairable_units), len(values)), dtype=np.float64)
    for u, row in enumerate(pairable_units):
        for value in row.values():
            counts[u, column[value]] += 1.0
    numbers = np.array([domain[v] for v in values], dtype=np.float64)
    return _Table(values, numbers, counts, len(table), len(raters))
