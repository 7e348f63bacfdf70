"""The overview's median, 95th percentile and score histogram, read without sorting or rounding every score.

Both figures are exact: the same numbers as DuckDB's ``quantile_cont`` over every score, and as the bins' CASE
(``round(score, 9) <= upper``) applied to every score. They are found in two steps:

1. the scores are counted in narrow groups, ``floor(score * 1024)`` (at most 102,400 groups over 0-100), each
   with its count, lowest and highest score -- one cheap pass, no sort and no rounding per row;
2. only what the groups cannot settle is read row by row. A quantile is the score at a rank (two ranks when it
   interpolates): the running counts name the group holding each rank; a group whose scores are all equal gives
   the value at once, any other has its scores sorted -- one group of scores, not all of them. A histogram bin is a
   monotone function of the score, so a group whose lowest and highest score fall in one bin lies wholly in it;
   only the few groups that straddle a bin bound have their rows binned one by one.

In two steps the quantiles and the bins take about half the time of sorting and rounding every score (the
figures: docs/performance.md, "Figures behind the code").

The interpolation between the two scores at a quantile's ranks is left to DuckDB's own ``quantile_cont``, applied
to the two scores (``interpolate``): its floating-point arithmetic is the build's own (a fused multiply-add on
some), so any other formula could differ in the last bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hri_core.profile import SCORE_DECIMALS
from register.db.sql import Params
from register.db.store import Store

__all__ = ["GROUP_KEY", "MAX_BINS", "QUANTILES", "histogram_part", "interpolate", "quantile_ends_select",
           "quantiles_from_ends"]

QUANTILES = (0.5, 0.95)  # the overview's median and 95th percentile
MAX_BINS = 1000
GROUP_KEY = "floor(score * 1024)::BIGINT"  # a score's group: 1/1024 of a point wide
# the groups of the scored rows with claims (responses without claims have no score to place) of ``fr``
_GROUPS = (f"SELECT {GROUP_KEY} AS k, count(*) AS n, min(score) AS lo, max(score) AS hi "
           "FROM fr WHERE NOT no_claims GROUP BY 1")


def quantile_ends_select(p: Params, quantiles: Sequence[float] = QUANTILES) -> str:
    """A scalar SELECT over ``fr`` (the scored rows) of one struct per quantile, in order: ``lo`` and ``hi``, the
    scores at the ranks ``floor`` and ``ceil`` of ``(n - 1) * q`` among the scores of the rows with claims, and
    ``d``, the fraction between them -- as ``quantile_cont`` places them. NULL when no row has claims.
    ``quantiles_from_ends`` turns them into the values."""
    qs = f"{p(list(quantiles))}::DOUBLE[]"
    return f"""(WITH sg AS MATERIALIZED ({_GROUPS}),
        cum AS (SELECT k, n, lo, hi, (sum(n) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING) - n)::BIGINT AS before
                FROM sg),
        rk AS (SELECT i, q, (total - 1)::DOUBLE * q AS rn
               FROM (SELECT sum(n)::BIGINT AS total FROM sg),
                    (SELECT unnest({qs}) AS q, generate_subscripts({qs}, 1) AS i)
               WHERE total > 0),
        ends AS (SELECT x.i, x.rn, x.e, x.r, c.k, c.lo, c.hi, c.before
                 FROM (SELECT i, rn, unnest([0, 1]) AS e, unnest([floor(rn), ceil(rn)])::BIGINT AS r FROM rk) x
                 JOIN cum c ON x.r >= c.before AND x.r < c.before + c.n),
        picked AS (SELECT {GROUP_KEY} AS k, list_sort(list(score)) AS scores FROM fr
                   WHERE NOT no_claims AND {GROUP_KEY} IN (SELECT k FROM ends WHERE lo <> hi) GROUP BY 1),
        valued AS (SELECT i, rn, e, CASE WHEN ends.lo = ends.hi THEN ends.lo ELSE g.scores[r - before + 1] END AS x
                   FROM ends LEFT JOIN picked g USING (k))
        SELECT list({{'lo': lo, 'hi': hi, 'd': rn - floor(rn)}} ORDER BY i) FROM (
            SELECT i, rn, min(x) FILTER (WHERE e = 0) AS lo, min(x) FILTER (WHERE e = 1) AS hi
            FROM valued GROUP BY i, rn))"""


def quantiles_from_ends(store: Store, ends: Any, count: int = len(QUANTILES)) -> list[float | None]:
    """The quantiles' values from ``quantile_ends_select``'s structs (``count`` Nones when there were none)."""
    if ends is None or len(ends) == 0:
        return [None] * count
    return [end["lo"] if end["d"] == 0 else interpolate(store, end["lo"], end["hi"], end["d"]) for end in ends]


def interpolate(store: Store, lo: float, hi: float, d: float) -> float:
    """``quantile_cont``'s value a fraction ``d`` (0 < d < 1) of the way from ``lo`` to ``hi`` (lo <= hi), computed
    by ``quantile_cont`` itself: of the two values, at ``d``, its rank is ``1 * d`` -- the same interpolation."""
    return float(store.scalar("SELECT quantile_cont(x, $d) FROM (SELECT unnest([$lo, $hi]::DOUBLE[]) AS x)",
                              {"d": float(d), "lo": float(lo), "hi": float(hi)}))


def _bin_of(p: Params, bounds: Sequence[float], x: str) -> str:
    """The index of the bin of ``x``: the first upper bound it does not exceed at 9 decimals (as band bounds)."""
    case = " ".join(f"WHEN round({x}, {SCORE_DECIMALS}) <= {p(u)} THEN {i}" for i, u in enumerate(bounds[:-1]))
    return f"CASE {case} ELSE {len(bounds) - 1} END" if case else "0"


def histogram_part(p: Params, uppers: Sequence[float]) -> tuple[str, str]:
    """Counts per bin of ``uppers`` (``hri_core.calibration.score_bins``) over ``fr``: bin_start, bin_end, n for
    every bin (zero counts too), and the ORDER BY. A score is in the first bin whose upper bound it does not exceed,
    compared at 9 decimals like band bounds. Responses without claims have no score to place and are left out."""
    bounds = [float(u) for u in uppers]
    if not bounds or len(bounds) > MAX_BINS or any(b <= a for a, b in zip(bounds, bounds[1:], strict=False)) \
            or bounds[0] <= 0 or bounds[-1] != 100.0:
        raise ValueError(f"bins must be 1..{MAX_BINS} increasing upper bounds in (0, 100] ending at 100, "
                         f"got {list(uppers)!r}")
    lowers = [0.0, *bounds[:-1]]
    counted = f"""WITH sg AS MATERIALIZED ({_GROUPS}),
        gb AS (SELECT k, n, {_bin_of(p, bounds, 'lo')} AS b_lo, {_bin_of(p, bounds, 'hi')} AS b_hi FROM sg)
        SELECT bin, sum(n) AS n FROM (
            SELECT b_lo AS bin, n FROM gb WHERE b_lo = b_hi
            UNION ALL
            SELECT {_bin_of(p, bounds, 'score')} AS bin, 1 AS n FROM fr
            WHERE NOT no_claims AND {GROUP_KEY} IN (SELECT k FROM gb WHERE b_lo <> b_hi))
        GROUP BY bin"""
    return (f"""
        SELECT t.bin_start, t.bin_end, coalesce(b.n, 0)::BIGINT AS n
        FROM (SELECT unnest({p(lowers)}::DOUBLE[]) AS bin_start, unnest({p(bounds)}::DOUBLE[]) AS bin_end,
                     generate_subscripts({p(bounds)}::DOUBLE[], 1) - 1 AS i) t
        LEFT JOIN ({counted}) b ON b.bin = t.i""", "bin_start")
