"""Cohen's kappa for two raters over the units both rated, values as categories (unweighted, also for
numbers: 2 and 2.0 are one category)::

    kappa = (p_o - p_e) / (1 - p_e),  p_o = share of units with equal values,
    p_e   = sum_c (a_c / n) * (b_c / n)  with a_c, b_c how often each rater chose c

computed from integer counts as ``(n * agree - sum_c a_c b_c) / (n^2 - sum_c a_c b_c)`` and undefined
when ``p_e = 1`` (both raters gave one and the same value throughout) or no unit was rated by both.

Confusion matrices count, for each pair of raters, the values each gave over the units both rated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import FieldProblem
from .ratings import AgreementError, Rating, Value, _by_unit, _sort_key

__all__ = ["ConfusionMatrix", "KappaResult", "cohen_kappa", "confusion_matrices"]


@dataclass(frozen=True)
class KappaResult:
    """Cohen's kappa of two raters over the ``units`` both rated, with p_o and p_e."""

    kappa: float | None
    raters: tuple[str, str]
    units: int
    observed: float | None
    expected: float | None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "kappa": self.kappa, "raters": list(self.raters), "units": self.units,
            "observed": self.observed, "expected": self.expected, "note": self.note,
        }


@dataclass(frozen=True)
class ConfusionMatrix:
    """Counts of (first rater's value, second rater's value) over the units both rated.

    ``counts[i][j]``: units the first rater put in ``categories[i]`` and the second in ``categories[j]``.
    """

    raters: tuple[str, str]
    categories: tuple[Value, ...]
    counts: tuple[tuple[int, ...], ...]

    @property
    def units(self) -> int:
        """How many units both raters rated."""
        return sum(sum(row) for row in self.counts)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"raters": list(self.raters), "categories": list(self.categories),
                "counts": [list(row) for row in self.counts]}


# --- Cohen's kappa and confusion matrices ----------------------------------------------------------


def _two_raters(raters: set[str], pair: tuple[str, str] | None) -> tuple[str, str]:
    if pair is not None:
        return pair
    if len(raters) != 2:
        raise AgreementError([FieldProblem("raters", f"Cohen's kappa needs exactly two raters, got {len(raters)}"
                                                     f" ({', '.join(sorted(raters))})")])
    first, second = sorted(raters)
    return first, second


def _paired_values(table: Mapping[str, Mapping[str, Value]], pair: tuple[str, str]) -> list[tuple[Value, Value]]:
    first, second = pair
    return [(row[first], row[second]) for row in table.values() if first in row and second in row]


def _kappa_from_counts(agree: float, a: NDArray[np.float64],
                       b: NDArray[np.float64]) -> tuple[float | None, float | None, float | None]:
    """(kappa, p_o, p_e) from the (weighted) number of agreements and each rater's category counts."""
    n = float(a.sum())
    if n == 0.0:
        return None, None, None
    chance = float(a @ b)
    denominator = n * n - chance
    p_o, p_e = agree / n, chance / (n * n)
    if denominator <= 0.0:
        return None, p_o, p_e
    return (n * agree - chance) / denominator, p_o, p_e


def cohen_kappa(ratings: Iterable[Rating], raters: tuple[str, str] | None = None) -> KappaResult:
    """Cohen's (unweighted) kappa of two raters over the units both rated.

    ``raters`` picks the pair; without it the ratings must come from exactly two raters.
    """
    table, seen = _by_unit(ratings)
    pair = _two_raters(seen, raters)
    pairs = _paired_values(table, pair)
    if not pairs:
        return KappaResult(None, pair, 0, None, None, "no unit was rated by both raters")
    categories = sorted({v for p in pairs for v in p}, key=_sort_key)
    index = {value: i for i, value in enumerate(categories)}
    a = np.bincount([index[x] for x, _ in pairs], minlength=len(categories)).astype(np.float64)
    b = np.bincount([index[y] for _, y in pairs], minlength=len(categories)).astype(np.float64)
    agree = float(sum(1 for x, y in pairs if x == y))
    kappa, p_o, p_e = _kappa_from_counts(agree, a, b)
    note = None if kappa is not None else ("chance agreement is 1 (both raters gave one and the same value "
                                           "to every unit): kappa is undefined")
    return KappaResult(kappa, pair, len(pairs), p_o, p_e, note)


def confusion_matrices(ratings: Iterable[Rating],
                       categories: Sequence[Value] | None = None) -> dict[tuple[str, str], ConfusionMatrix]:
    """One confusion matrix per pair of raters (sorted names, first < second) over the units both rated.

    Every matrix uses the same ``categories`` (default: every value seen, numbers then strings) so that
    matrices of different pairs line up.
    """
    table, raters = _by_unit(ratings)
    if categories is None:
        categories = sorted({v for row in table.values() for v in row.values()}, key=_sort_key)
    index = {value: i for i, value in enumerate(categories)}
    result: dict[tuple[str, str], ConfusionMatrix] = {}
    for pair in combinations(sorted(raters), 2):
        counts = [[0] * len(categories) for _ in categories]
        for x, y in _paired_values(table, pair):
            if x not in index or y not in index:
                missing = x if x not in index else y
                raise AgreementError([FieldProblem("categories", f"value {missing!r} is not among the categories")])
            counts[index[x]][index[y]] += 1
        result[pair] = ConfusionMatrix(pair, tuple(categories), tuple(tuple(row) for row in counts))
    return result
