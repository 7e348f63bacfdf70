"""Agreement per group of ratings (a batch, a use case, a category) and per pair of raters (alpha, kappa and
confusion matrix over the units the pair both rated)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import TypeVar

from .alpha import AlphaResult, krippendorff_alpha
from .kappa import ConfusionMatrix, KappaResult, cohen_kappa, confusion_matrices
from .ratings import Level, Rating, Value, _by_unit

__all__ = ["PairAgreement", "alpha_by_group", "group_ratings", "pairwise_agreement", "ratings_by_rater_pair"]

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of one pair of raters over the units both rated."""

    raters: tuple[str, str]
    alpha: AlphaResult
    kappa: KappaResult
    confusion: ConfusionMatrix


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
