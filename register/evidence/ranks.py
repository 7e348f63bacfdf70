"""Rank correlation in DuckDB SQL: average ranks (ties share the mean of their positions), as
``scipy.stats.rankdata(method="average")`` gives them, so that Pearson's ``corr()`` over them is Spearman's rho
exactly as ``scipy.stats.spearmanr`` computes it.
"""

from __future__ import annotations

import math

__all__ = ["average_rank", "finite"]


def average_rank(column: str, partition: str = "") -> str:
    """SQL of ``column``'s average rank (1-based) within ``partition`` (comma-separated columns; empty: the whole
    relation): ``rank()`` is the first position of a tie, and a tie of ``k`` rows shares ``rank + (k - 1) / 2``.
    ``column`` and ``partition`` are identifiers chosen by the caller's code, never user text."""
    over = f"PARTITION BY {partition} " if partition else ""
    ties = f"PARTITION BY {partition + ', ' if partition else ''}{column}"
    return (f"(rank() OVER ({over}ORDER BY {column}) "
            f"+ (count(*) OVER ({ties}) - 1) / 2.0)")


def finite(value: object) -> float | None:
    """``value`` as a float, or None when it is missing or not a number (DuckDB's ``corr`` of a constant column is
    NaN: no correlation is defined, which the figures say rather than print NaN)."""
    if value is None:
        return None
    number = float(value)  # type: ignore[arg-type]
    return None if math.isnan(number) else number
