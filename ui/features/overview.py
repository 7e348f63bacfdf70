"""The Overview page's figures: one cached query under the shared filters, and the arguments it takes under a
profile (``overview_arguments``: one function for the page and the warm-up, ``ui.features.warmup``)."""

from __future__ import annotations

from hri_core.calibration import score_bins
from register import Store
from register.console.queries import overview as overview_queries
from register.console.queries import scope as scope_queries
from register.console.queries.filters import Filters
from register.scoring import lenses
from register.scoring.profiles import get_profile
from ui.framework import data


@data.cached
def overview(store: Store, f: Filters, weights: tuple[tuple[str, float], ...], bands: tuple[str, ...],
             bins: tuple[float, ...]) -> dict:
    """Every figure of the overview page (KPIs and the five charts' data) from one query. The weights come as
    (dimension, weight) pairs in the profile's order (``overview_arguments``), one cache key for the page and the
    warm-up; the query takes them as a mapping."""
    return overview_queries.overview(store, f, dict(weights), bands, bins=bins)


@data.cached
def bound_with_other_bands(store: Store, profile_version: int) -> dict[str, int]:
    """``{use case: profile version}`` of the use cases scored by a bound profile whose band bounds differ from
    version ``profile_version``'s (the histogram colours its bars by that version's bands)."""
    return lenses.bound_with_other_bands(store, get_profile(store, profile_version))


# the filtered answers per scope status against the approved-use-case register (empty while it lists none)
scope = data.cached(scope_queries.scope_overview)


def overview_arguments(profile) -> tuple[tuple[tuple[str, float], ...], tuple[str, ...], tuple[float, ...]]:
    """What ``overview`` takes besides the filters, under ``profile``: its weights, its band names, and the
    histogram's bins (which never straddle a band bound and are read like bands, as the calibration page bins).
    One function for the page and the warm-up (``ui.features.warmup``), so both ask the cache for the same entry."""
    weights = tuple((d.value, w) for d, w in profile.weights.items())
    return weights, tuple(b.name for b in profile.bands), score_bins([b.upper for b in profile.bands])
