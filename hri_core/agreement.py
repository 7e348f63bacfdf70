"""Inter-annotator agreement on claim labels: Krippendorff's alpha, Cohen's kappa, confusion matrices.

The HRI paper (section V) asks that each claim be "labeled independently by at least two annotators
when feasible" and that "inter-annotator agreement should be measured and reported", because the
index is only as reliable as the labels under it (DOMAIN.md section 8). This module is that
measurement. The annotation pages, the register and ``python -m hri_core agreement`` call it; it
reads no files.

Data: a rating is ``Rating(unit, rater, value)``; a unit is what is judged (a claim, keyed e.g. by
``response_id/claim_id``), a rater is an annotator, a value is a string (nominal) or a number. A rater
who skipped a unit simply has no rating for it. The same (unit, rater) twice with the same value
counts once; with different values it is an error (``AgreementError`` names the unit and rater).

Krippendorff's alpha (K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011), from
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

Why this is not a wrapper around the PyPI ``krippendorff`` package (0.9.0): where the package computes an
alpha it is this one to about 1e-16 (``tests/hri_core/test_agreement_package.py``; it stays the tests'
independent implementation), but it lacks three things this module needs:

* ``D_o`` and ``D_e``: ``krippendorff.alpha`` returns alpha only, while ``AlphaResult`` reports both
  disagreements; getting them means building the coincidence and difference matrices the package builds
  inside, so calling it would compute alpha twice, with two implementations of each difference;
* weighted units: a bootstrap resample weighs each unit by how often it was drawn; the package takes unit
  rows only, so 1,000 resamples would each copy the drawn rows (``np.repeat``) before counting them again;
* undefined alpha: the package raises ``ValueError`` when one value or no pairable unit is left, and
  returns NaN with a ``RuntimeWarning`` when a resample draws only one of several values; here those are
  ``None`` with a ``note`` and resamples counted as ``undefined``.

Cohen's kappa for two raters over the units both rated, values as categories (unweighted, also for
numbers: 2 and 2.0 are one category)::

    kappa = (p_o - p_e) / (1 - p_e),  p_o = share of units with equal values,
    p_e   = sum_c (a_c / n) * (b_c / n)  with a_c, b_c how often each rater chose c

computed from integer counts as ``(n * agree - sum_c a_c b_c) / (n^2 - sum_c a_c b_c)`` and undefined
when ``p_e = 1`` (both raters gave one and the same value throughout) or no unit was rated by both.

Multi-label claims (a claim may carry several HRI labels): ``multilabel_agreement`` gives alpha per
label as a present/absent judgement, and alpha on each rater's *worst* label, worst by a severity
order passed in (``severity_from_contributions`` derives one from a profile's contributions).

Confidence intervals: ``bootstrap_alpha`` / ``bootstrap_kappa`` resample units with replacement
(seeded ``numpy`` generator) and take the percentile interval of the resampled statistic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, NamedTuple, TypeVar

import numpy as np
from numpy.typing import NDArray

from .errors import FieldProblem, HRIError

__all__ = [
    "LEVELS",
    "AgreementError",
    "AlphaResult",
    "BootstrapInterval",
    "ConfusionMatrix",
    "KappaResult",
    "Level",
    "MultiLabelAgreement",
    "PairAgreement",
    "Rating",
    "Value",
    "alpha_by_group",
    "bootstrap_alpha",
    "bootstrap_kappa",
    "cohen_kappa",
    "confusion_matrices",
    "group_ratings",
    "krippendorff_alpha",
    "multilabel_agreement",
    "pairwise_agreement",
    "ratings_by_rater_pair",
    "severity_from_contributions",
]

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")

Value = str | float
"""A rating's value: a category name (nominal) or a number (any level)."""

K = TypeVar("K", bound=Hashable)

# Per-label judgements of a multi-label claim are nominal present/absent values.
PRESENT, ABSENT = "present", "absent"

# Resamples a bootstrap draws unless told otherwise; 1,000 keeps the 2.5 % / 97.5 % percentiles stable
# to about +-0.01 on a few hundred units, and costs milliseconds.
DEFAULT_BOOTSTRAP_SAMPLES = 1000


class Rating(NamedTuple):
    """One annotator's judgement of one unit."""

    unit: str
    rater: str
    value: Value


class AgreementError(HRIError):
    """Ratings that cannot be measured: conflicting duplicates, a value of the wrong kind, ..."""

    title = "Invalid ratings"


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


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of one pair of raters over the units both rated."""

    raters: tuple[str, str]
    alpha: AlphaResult
    kappa: KappaResult
    confusion: ConfusionMatrix


@dataclass(frozen=True)
class BootstrapInterval:
    """Percentile bootstrap interval of a statistic, resampling units.

    ``estimate`` is the statistic on the data as given; ``low``/``high`` the ``(1 - confidence) / 2``
    and ``1 - (1 - confidence) / 2`` quantiles (numpy's default linear interpolation) of the
    ``samples - undefined`` resamples on which the statistic was defined.
    """

    estimate: float | None
    low: float | None
    high: float | None
    confidence: float
    samples: int
    undefined: int
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"estimate": self.estimate, "low": self.low, "high": self.high, "confidence": self.confidence,
                "samples": self.samples, "undefined": self.undefined, "seed": self.seed}


@dataclass(frozen=True)
class MultiLabelAgreement:
    """Alpha per label (present/absent, nominal) and alpha on each rater's worst label."""

    per_label: dict[str, AlphaResult]
    worst: AlphaResult
    severity: tuple[str, ...]


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


# --- grouping -----------------------------------------------------------------------------------------


def group_ratings(ratings: Iterable[Rating], key: Callable[[Rating], K]) -> dict[K, list[Rating]]:
    """Ratings grouped by ``key`` (e.g. ``lambda r: batch_of[r.unit]``, a use case, a category), in order of
    first appearance."""
    groups: dict[K, list[Rating]] = {}
    for rating in ratings:
        groups.setdefault(key(rating), []).append(rating)
    return groups


def alpha_by_group(ratings: Iterable[Rating], key: Callable[[Rating], K], level: Level = "nominal", *,
                   order: Sequence[Value] | None = None) -> dict[K, AlphaResult]:
    """Krippendorff's alpha per group of ``group_ratings(ratings, key)``."""
    return {group: krippendorff_alpha(members, level, order=order)
            for group, members in group_ratings(ratings, key).items()}


def ratings_by_rater_pair(ratings: Iterable[Rating]) -> dict[tuple[str, str], list[Rating]]:
    """For each pair of raters (sorted names), their ratings of the units both rated."""
    table, raters = _by_unit(ratings)
    pairs: dict[tuple[str, str], list[Rating]] = {}
    for first, second in combinations(sorted(raters), 2):
        pairs[(first, second)] = [Rating(unit, rater, row[rater]) for unit, row in table.items()
                                  if first in row and second in row for rater in (first, second)]
    return pairs


def pairwise_agreement(ratings: Iterable[Rating], level: Level = "nominal", *,
                       order: Sequence[Value] | None = None) -> dict[tuple[str, str], PairAgreement]:
    """Alpha, kappa and confusion matrix of every pair of raters over the units the pair both rated."""
    ratings = list(ratings)
    confusion = confusion_matrices(ratings)
    result: dict[tuple[str, str], PairAgreement] = {}
    for pair, members in ratings_by_rater_pair(ratings).items():
        result[pair] = PairAgreement(pair, krippendorff_alpha(members, level, order=order),
                                     cohen_kappa(members, pair), confusion[pair])
    return result


# --- multi-label claims --------------------------------------------------------------------------------


def severity_from_contributions(contributions: Mapping[str, float]) -> tuple[str, ...]:
    """Labels from most to least severe by their contribution (e.g. a profile's ``contributions``);
    ties keep the mapping's order (CONTRADICTED before VALIDATED_NEGATIVE_FEEDBACK in the paper's)."""
    names = list(contributions)
    return tuple(sorted(names, key=lambda name: (-contributions[name], names.index(name))))


def multilabel_agreement(ratings: Iterable[tuple[str, str, Collection[str]]], severity: Sequence[str], *,
                         labels: Sequence[str] | None = None, worst_level: Level = "nominal") -> MultiLabelAgreement:
    """Agreement on multi-label claims: ``ratings`` are ``(unit, rater, labels)`` with one or more labels.

    Per label in ``labels`` (default ``severity``): alpha of the present/absent judgement (nominal).
    Worst label: each rater's most severe label, by ``severity`` listed from most to least severe;
    alpha at ``worst_level`` (``"nominal"``, or ``"ordinal"`` along the severity order). Every label
    given must be in ``severity``; an empty label set is an error (a claim has at least one label).
    """
    severity = tuple(severity)
    rank = {label: i for i, label in enumerate(severity)}
    wanted = tuple(labels) if labels is not None else severity
    problems: list[FieldProblem] = []
    sets: list[tuple[str, str, frozenset[str]]] = []
    for unit, rater, given in ratings:
        where = f"unit {unit!r}, rater {rater!r}"
        chosen = frozenset([given] if isinstance(given, str) else given)  # one label given as a bare string
        if not chosen:
            problems.append(FieldProblem(where, "no label (a claim carries at least one)"))
        unknown = sorted(chosen - set(rank))
        if unknown:
            problems.append(FieldProblem(where, f"label(s) {', '.join(unknown)} not in the severity order"))
        sets.append((unit, rater, chosen))
    if problems:
        raise AgreementError(problems)
    per_label = {label: krippendorff_alpha([Rating(u, r, PRESENT if label in s else ABSENT) for u, r, s in sets])
                 for label in wanted}
    worst = [Rating(u, r, min(s, key=rank.__getitem__)) for u, r, s in sets]
    if worst_level not in ("nominal", "ordinal"):
        raise AgreementError([FieldProblem("worst_level", "must be nominal or ordinal (labels are categories)")])
    # ordinal ranks run lowest first: reverse the most-severe-first order
    order = tuple(reversed(severity)) if worst_level == "ordinal" else None
    return MultiLabelAgreement(per_label, krippendorff_alpha(worst, worst_level, order=order), severity)


# --- bootstrap ------------------------------------------------------------------------------------------


def _percentile_interval(estimate: float | None, draws: list[float], confidence: float, samples: int,
                         seed: int) -> BootstrapInterval:
    if draws:
        tail = (1.0 - confidence) / 2.0
        low, high = (float(q) for q in np.quantile(np.array(draws), [tail, 1.0 - tail]))
        return BootstrapInterval(estimate, low, high, confidence, samples, samples - len(draws), seed)
    return BootstrapInterval(estimate, None, None, confidence, samples, samples, seed)


def _check_bootstrap(samples: int, confidence: float) -> None:
    problems = []
    if samples < 1:
        problems.append(FieldProblem("samples", f"must be at least 1, got {samples}"))
    if not 0.0 < confidence < 1.0:
        problems.append(FieldProblem("confidence", f"must be between 0 and 1, got {confidence}"))
    if problems:
        raise AgreementError(problems)


def _resample_weights(units: int, samples: int, seed: int) -> NDArray[np.float64]:
    """``samples`` x ``units``: how often each unit is drawn in each resample (with replacement)."""
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, units, size=(samples, units))
    weights = np.zeros((samples, units), dtype=np.float64)
    np.add.at(weights, (np.arange(samples)[:, None], drawn), 1.0)
    return weights


def bootstrap_alpha(ratings: Iterable[Rating], level: Level = "nominal", *, samples: int = DEFAULT_BOOTSTRAP_SAMPLES,
                    confidence: float = 0.95, seed: int = 0, order: Sequence[Value] | None = None) -> BootstrapInterval:
    """Percentile bootstrap interval of Krippendorff's alpha, resampling the pairable units.

    Units rated by fewer than two raters carry no pairable value, so only pairable units are drawn;
    a resample on which alpha is undefined (all drawn values equal) is counted in ``undefined``.
    """
    _check_bootstrap(samples, confidence)
    table = _table(ratings, level, order)
    estimate, *_ = _alpha_from_coincidences(level, table.numbers, _coincidences(table.counts))
    pairable_units = table.counts.shape[0]
    if pairable_units == 0:
        return _percentile_interval(estimate, [], confidence, samples, seed)
    draws = []
    for weights in _resample_weights(pairable_units, samples, seed):
        alpha, *_ = _alpha_from_coincidences(level, table.numbers, _coincidences(table.counts, weights))
        if alpha is not None:
            draws.append(alpha)
    return _percentile_interval(estimate, draws, confidence, samples, seed)


def bootstrap_kappa(ratings: Iterable[Rating], raters: tuple[str, str] | None = None, *,
                    samples: int = DEFAULT_BOOTSTRAP_SAMPLES, confidence: float = 0.95,
                    seed: int = 0) -> BootstrapInterval:
    """Percentile bootstrap interval of Cohen's kappa, resampling the units both raters rated."""
    _check_bootstrap(samples, confidence)
    ratings = list(ratings)
    estimate = cohen_kappa(ratings, raters).kappa
    table, seen = _by_unit(ratings)
    pairs = _paired_values(table, _two_raters(seen, raters))
    if not pairs:
        return _percentile_interval(estimate, [], confidence, samples, seed)
    categories = sorted({v for p in pairs for v in p}, key=_sort_key)
    index = {value: i for i, value in enumerate(categories)}
    first = np.eye(len(categories))[[index[x] for x, _ in pairs]]
    second = np.eye(len(categories))[[index[y] for _, y in pairs]]
    agrees = np.array([float(x == y) for x, y in pairs])
    weights = _resample_weights(len(pairs), samples, seed)
    a_counts, b_counts, agree_counts = weights @ first, weights @ second, weights @ agrees
    draws = []
    for a, b, agree in zip(a_counts, b_counts, agree_counts, strict=True):
        kappa, _, _ = _kappa_from_counts(float(agree), a, b)
        if kappa is not None:
            draws.append(kappa)
    return _percentile_interval(estimate, draws, confidence, samples, seed)


# --- reading rating rows (the CLI's CSV) -------------------------------------------------------------------

REQUIRED_COLUMNS: tuple[str, ...] = ("unit", "rater", "value")


def ratings_from_rows(header: Sequence[str] | None, rows: Iterable[tuple[int, Mapping[str | None, Any]]],
                      level: Level) -> tuple[list[Rating], list[str]]:
    """Ratings from CSV rows ``(row number, {column: text})`` with columns ``unit, rater, value``.

    Text is stripped; column names match case-insensitively; extra columns are ignored. Values stay strings
    at the nominal level and must be finite numbers at the others (ordinal ranks by numeric value). A
    row repeating an earlier (unit, rater) with the same value is dropped with a warning; with a
    different value it is an error.
    Returns ``(ratings, warnings)``; raises ``AgreementError`` listing every bad row and field
    (``loc`` is ``"row N: field"``, the header being row 1).
    """
    if header is None:
        expected = ", ".join(REQUIRED_COLUMNS)
        raise AgreementError([FieldProblem("header", f"empty file: expected the columns {expected}")])
    names = {(name or "").strip().lstrip("\ufeff").lower(): name for name in header}
    missing = [column for column in REQUIRED_COLUMNS if column not in names]
    if missing:
        raise AgreementError([FieldProblem("header", f"missing column(s) {', '.join(missing)} "
                                                     f"(found: {', '.join(str(n) for n in header)})")])
    ratings: list[Rating] = []
    warnings: list[str] = []
    problems: list[FieldProblem] = []
    first_seen: dict[tuple[str, str], tuple[int, Value, str]] = {}
    for number, row in rows:
        fields = {column: str(row.get(names[column]) or "").strip() for column in REQUIRED_COLUMNS}
        bad = [FieldProblem(f"row {number}: {column}", "empty value") for column in REQUIRED_COLUMNS
               if not fields[column]]
        value: Value = fields["value"]
        if not bad and level != "nominal":
            try:
                value = float(fields["value"])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                bad.append(FieldProblem(f"row {number}: value",
                                        f"{fields['value']!r} is not a finite number ({level} level)"))
            elif level == "ratio" and value < 0:
                bad.append(FieldProblem(f"row {number}: value", f"{fields['value']!r} is negative (ratio level)"))
        if bad:
            problems.extend(bad)
            continue
        key = (fields["unit"], fields["rater"])
        if key in first_seen:
            earlier, earlier_value, earlier_text = first_seen[key]
            if earlier_value == value:
                warnings.append(f"row {number}: duplicate of row {earlier} (same unit, rater and value), counted once")
            else:
                problems.append(FieldProblem(
                    f"row {number}: value",
                    f"rater {key[1]!r} already rated unit {key[0]!r} as {earlier_text!r} in row {earlier}; "
                    f"conflicting value {fields['value']!r}"))
            continue
        first_seen[key] = (number, value, fields["value"])
        ratings.append(Rating(fields["unit"], fields["rater"], value))
    if problems:
        raise AgreementError(problems)
    return ratings, warnings
