"""Krippendorff's alpha (K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011), from
the coincidence matrix of the *pairable* values (units with ``m_u >= 2`` values; units rated once
contribute nothing)::

    o_ck  = sum_u  n_uc * (n_uk - [c == k]) / (m_u - 1)      coincidences of values c and k
    n_c   = sum_k o_ck,   n = sum_c n_c                       n = number of pairable values
    alpha = 1 - D_o / D_e = 1 - (n - 1) * sum_ck o_ck d2_ck / sum_ck n_c n_k d2_ck

with the squared difference ``d2_ck`` of the level of measurement::

    nominal   d2_ck = 0 if c == k else 1
    ordinal   d2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2  (values in rank order)
    interval  d2_ck = (c - k)^2
    ratio     d2_ck = ((c - k) / (c + k))^2                  (values >= 0)

Alpha is undefined (``None`` with a ``note``, never NaN) when there are no pairable values or when
the expected disagreement ``D_e`` is 0 (every pairable value is the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .ratings import Level, Rating, Value, _table

__all__ = ["AlphaResult", "krippendorff_alpha"]


@dataclass(frozen=True)
class AlphaResult:
    """Krippendorff's alpha with what it was computed from.

    ``units``/``raters`` count everything passed in; ``pairable`` is n, the number of values in units
    with at least two values; ``observed``/``expected`` are the disagreements D_o and D_e.
    """

    alpha: float | None
    level: Level
    units: int
    raters: int
    pairable: int
    observed: float | None
    expected: float | None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``None`` stays ``None``; there is never a NaN)."""
        return {
            "alpha": self.alpha, "level": self.level, "units": self.units, "raters": self.raters,
            "pairable": self.pairable, "observed": self.observed, "expected": self.expected, "note": self.note,
        }


# --- alpha from counts ---------------------------------------------------------------------------


def _coincidences(counts: NDArray[np.float64], weights: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """o_ck = sum_u w_u * n_uc * (n_uk - [c == k]) / (m_u - 1) over pairable units (m_u >= 2)."""
    m = counts.sum(axis=1)
    scale = 1.0 / (m - 1.0)
    if weights is not None:
        scale = scale * weights
    scaled = counts * scale[:, None]
    coincidences: NDArray[np.float64] = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    return coincidences


def _squared_differences(level: Level, numbers: NDArray[np.float64], n_c: NDArray[np.float64]) -> NDArray[np.float64]:
    """The V x V matrix d2_ck of the level (columns in rank order; ordinal needs the marginals n_c)."""
    size = len(numbers)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        # sum_{g=c..k} n_g - (n_c + n_k)/2 = S_k - S_c + (n_c - n_k)/2 for c <= k, with S the cumulative sum
        cumulative = np.cumsum(n_c)
        between = cumulative[None, :] - cumulative[:, None] + (n_c[:, None] - n_c[None, :]) / 2.0
        squared: NDArray[np.float64] = between ** 2
        return squared
    difference = numbers[:, None] - numbers[None, :]
    if level == "interval":
        return difference ** 2
    total = numbers[:, None] + numbers[None, :]
    ratio = np.divide(difference, total, out=np.zeros_like(difference), where=total != 0)
    return ratio ** 2


_AlphaParts = tuple[float | None, float | None, float | None, str | None]  # alpha, D_o, D_e, note


def _alpha_from_coincidences(level: Level, numbers: NDArray[np.float64],
                             coincidences: NDArray[np.float64]) -> _AlphaParts:
    """(alpha, D_o, D_e, note) from a coincidence matrix."""
    n_c = coincidences.sum(axis=1)
    n = float(n_c.sum())
    if n < 2.0:
        return None, None, None, "no pairable values: no unit was rated by two or more raters"
    d2 = _squared_differences(level, numbers, n_c)
    observed_sum = float((coincidences * d2).sum())
    expected_sum = float((n_c[:, None] * n_c[None, :] * d2).sum())
    observed, expected = observed_sum / n, expected_sum / (n * (n - 1.0))
    if expected_sum <= 0.0:
        return None, observed, expected, ("expected disagreement is 0 (every pairable value is the same): "
                                          "alpha is undefined")
    return 1.0 - (n - 1.0) * observed_sum / expected_sum, observed, expected, None


def krippendorff_alpha(ratings: Iterable[Rating], level: Level = "nominal", *,
                       order: Sequence[Value] | None = None) -> AlphaResult:
    """Krippendorff's alpha of ``ratings`` at ``level`` (see the module docstring for the formulas).

    ``order`` (ordinal only) ranks non-numeric values, lowest first; without it ordinal values must be
    numbers and rank by numeric value. Raises ``AgreementError`` for conflicting duplicates and for
    values the level cannot use.
    """
    table = _table(ratings, level, order)
    alpha, observed, expected, note = _alpha_from_coincidences(level, table.numbers, _coincidences(table.counts))
    return AlphaResult(alpha, level, table.units, table.raters, int(table.counts.sum()), observed, expected, note)
