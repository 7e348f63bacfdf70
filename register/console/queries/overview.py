"""The overview page's figures of the filtered set and the filter bar's choices.

The overview's figures exist one function each (``kpis``, ``band_mix_by_week``, ...) and all at once
(``overview``); both run the same statement, the one-figure functions with their figure alone. Timings:
``benchmarks/bench_console.py``. ``filter_options`` lists the filter bar's choices.

Band names, band order, weights and "high or critical" come from the scoring profile (passed in or
read from the register), never from constants here.

Called by ``ui.features.overview`` and ``ui.framework.data`` (cached; warmed before the first visit by
``ui.features.warmup``) and by
``benchmarks/bench_console.py``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pandas as pd

from hri_core import DIMENSIONS
from hri_core.calibration import score_bins
from register.console.queries.filters import (
    DIM_COLUMNS,
    NO_CLAIMS_STATE,
    Filters,
    group_conditions,
    model_rows,
    read_model,
    state_expr,
)
from register.console.queries.queue import age_days_expr, flag_queued
from register.console.score_distribution import histogram_part, quantile_ends_select, quantiles_from_ends
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.readmodels import version_views
from register.readmodels.current_scores import WEEK
from register.scoring.profiles import active_profile, get_profile

__all__ = ["FIGURES", "GROUP_COLUMNS", "band_mix_by_week", "dimension_contributions", "filter_options", "high_share_by",
           "kpis", "overview", "score_histogram"]

GROUP_COLUMNS = {"use_case": "use_case", "model": "model"}  # high_share_by's allow-list


def _band_names(store: Store, bands: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(bands) if bands is not None else tuple(b.name for b in active_profile(store).bands)


def _states(band_names: tuple[str, ...]) -> tuple[str, ...]:
    """The states a response can show: the profile's bands, then "No claims"."""
    return (*band_names, NO_CLAIMS_STATE)


def _bins(store: Store, bins: Sequence[float] | None) -> tuple[float, ...]:
    return tuple(bins) if bins is not None else score_bins([b.upper for b in active_profile(store).bands])


def _none_if_nan(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def filter_options(store: Store) -> dict:
    """Choices for the filter bar: use cases, models, bands (active profile order, then ``NO_CLAIMS_STATE``),
    profile versions that have scores with each one's bands (``version_bands``: an older version may name its
    bands otherwise) and how the console reads each one (``version_reads``: "current", "kept" or "joined",
    ``register.readmodels.version_views.view_states``) with the kept ones oldest first (``kept_versions``), and the
    range of creation dates of the current responses."""
    row = store.row("""
        SELECT list_sort(list(DISTINCT use_case) FILTER (WHERE use_case IS NOT NULL)) AS use_cases,
               list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)) AS models,
               min(created_at)::DATE AS date_min, max(created_at)::DATE AS date_max
        FROM responses WHERE is_current""", what="the filter bar's choices")
    versions = [v for (v,) in store.query(  # with the versions runs scored bound to use cases (migration 056)
        "SELECT DISTINCT v FROM (SELECT profile_version AS v FROM score_runs WHERE responses_scored > 0 UNION ALL "
        "SELECT unnest(bound_profile_versions) FROM score_runs WHERE responses_scored > 0) ORDER BY 1")]
    held = version_views.kept(store)
    return {"use_cases": list(row["use_cases"] or []), "models": list(row["models"] or []),
            "bands": list(_states(_band_names(store, None))), "profile_versions": versions,
            "version_bands": {v: list(_states(tuple(b.name for b in get_profile(store, v).bands))) for v in versions},
            "version_reads": version_views.view_states(store, versions, held), "kept_versions": held,
            "date_min": row["date_min"], "date_max": row["date_max"]}


# Each overview figure is a SELECT over the filtered scored set ``fr`` (``_*_part`` below, each with its ORDER BY
# apart) or, for the read models, over their summary ``sm``; ``_figures`` joins the ones asked for into one statement.


def _kpis_part(p: Params, now: datetime, *, counted: str | None = None) -> str:
    """The headline figures' row. ``counted``: the summary rows (``_summary_rows``) the counts come from instead
    of the scored rows (the quantiles and the queue read the scored rows either way)."""
    oldest = age_days_expr(p, now, "min(coalesce(created_at, imported_at)) FILTER (WHERE queued)")
    scanned = f"""{quantile_ends_select(p)} AS quantile_ends,
               count(*) FILTER (WHERE queued) AS queue_size, {oldest} AS queue_oldest_age_days
        FROM ({flag_queued(p, now=now)}) q"""
    if counted is None:
        return f"""
        SELECT count(*) AS responses, coalesce(sum(claim_count), 0) AS claims,
               count(*) FILTER (WHERE decisive_claim_id IS NOT NULL) AS floors_fired,
               count(*) FILTER (WHERE no_claims) AS no_claims, histogram(band) AS band_histogram, {scanned}"""
    return f"""
        SELECT n.*, q.* FROM (
            SELECT coalesce(sum(responses), 0)::BIGINT AS responses, coalesce(sum(claims), 0)::BIGINT AS claims,
                   coalesce(sum(floors_fired), 0)::BIGINT AS floors_fired,
                   coalesce(sum(responses) FILTER (WHERE no_claims), 0)::BIGINT AS no_claims,
                   (SELECT map_from_entries(list((state, n))) FROM (SELECT state, sum(responses)::BIGINT AS n
                    FROM {counted} GROUP BY state)) AS band_histogram
            FROM {counted}) n, (SELECT {scanned}) q"""


def _summary_rows(f: Filters, p: Params, summary: str = "score_summary") -> str:
    """SELECT of the summary rows (``score_summary``, migration 022) of the current scores ``f`` keeps, with each
    group's ``state`` (its band, or ``NO_CLAIMS_STATE``). ``f`` without a profile version: the summary counts the
    current scores; its groups hold every column the other filters read (the creation day for the dates)."""
    state = state_expr(p)
    cond = []
    if f.date_from is not None:
        cond.append(f"day >= {p(f.date_from)}::DATE")
    if f.date_to is not None:
        cond.append(f"day <= {p(f.date_to)}::DATE")
    cond += group_conditions(f, p, "", state)
    return f"SELECT *, {state} AS state FROM {summary} WHERE {' AND '.join(cond) or 'true'}"


def _summary_dimensions_part(p: Params, by_letter: dict[str, float]) -> str:
    parts = ", ".join(f"sum(sum_{col}) / sum(responses) AS mean_{d}, "
                      f"{p(by_letter[d])} * sum(sum_{col}) / sum(responses) AS weighted_{d}"
                      for d, col in zip((d.value for d in DIMENSIONS), DIM_COLUMNS, strict=True))
    return f"SELECT {parts} FROM sm"


def _summary_share_part(p: Params, by: str, band_names: tuple[str, ...]) -> tuple[str, str]:
    top = band_names[-2:]
    high = f"coalesce(sum(responses) FILTER (WHERE state IN {p.in_list(top)}), 0)"
    return (f"SELECT {by} AS key, sum(responses) AS n, {high} AS high_or_critical, {high} / sum(responses) AS share "
            f"FROM sm GROUP BY 1", "key NULLS LAST")


def _kpis_dict(store: Store, row: dict, band_names: tuple[str, ...]) -> dict:
    counts = dict.fromkeys(_states(band_names), 0)
    for band, n in (row["band_histogram"] or {}).items():
        counts[band] = counts.get(band, 0) + int(n)
    oldest = row["queue_oldest_age_days"]
    median, p95 = quantiles_from_ends(store, row["quantile_ends"])
    return {"responses": int(row["responses"]), "claims": int(row["claims"]), "band_counts": counts,
            "median_score": _none_if_nan(median), "p95_score": _none_if_nan(p95),
            "floors_fired": int(row["floors_fired"]), "no_claims": int(row["no_claims"]),
            "queue_size": int(row["queue_size"]), "queue_oldest_age_days": None if oldest is None else float(oldest)}


def _week_part(p: Params, band_names: tuple[str, ...]) -> tuple[str, str]:
    order = p(list(_states(band_names)))
    return (f"SELECT {WEEK} AS week, band, count(*) AS n FROM fr WHERE created_at IS NOT NULL GROUP BY week, band",
            f"week, coalesce(list_position({order}, band), 1000), band")


def _weights_by_letter(weights: dict) -> dict[str, float]:
    by_letter = {getattr(k, "value", k): float(v) for k, v in weights.items()}
    letters = [d.value for d in DIMENSIONS]
    unknown = sorted(set(by_letter) - set(letters), key=str)
    missing = [d for d in letters if d not in by_letter]
    if unknown or missing:
        raise ValueError(f"weights must name each dimension {', '.join(letters)} once"
                         + (f"; unknown: {', '.join(map(str, unknown))}" if unknown else "")
                         + (f"; missing: {', '.join(missing)}" if missing else ""))
    return by_letter


def _dimensions_part(p: Params, by_letter: dict[str, float]) -> str:
    parts = ", ".join(f"avg({col}) AS mean_{d}, avg({p(by_letter[d])} * {col}) AS weighted_{d}"
                      for d, col in zip((d.value for d in DIMENSIONS), DIM_COLUMNS, strict=True))
    return f"SELECT {parts} FROM fr"


def _dimensions_frame(row: dict, by_letter: dict[str, float]) -> pd.DataFrame:
    letters = [d.value for d in DIMENSIONS]
    return pd.DataFrame({
        "dimension": letters,
        "mean_score": [_none_if_nan(row[f"mean_{d}"]) for d in letters],
        "weight": [by_letter[d] for d in letters],
        "mean_weighted": [_none_if_nan(row[f"weighted_{d}"]) for d in letters],
    })


def _share_part(p: Params, by: str, band_names: tuple[str, ...]) -> tuple[str, str]:
    column = GROUP_COLUMNS.get(by) if isinstance(by, str) else None
    if column is None:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(GROUP_COLUMNS)}")
    top = band_names[-2:]
    if not top:
        raise ValueError("bands must name at least one band")
    high = f"count(*) FILTER (WHERE band IN {p.in_list(top)})"
    return (f"SELECT {column} AS key, count(*) AS n, {high} AS high_or_critical, {high} / count(*) AS share "
            f"FROM fr GROUP BY 1", "key NULLS LAST")


def _weeks_as_dates(frame: pd.DataFrame) -> pd.DataFrame:
    frame["week"] = pd.Series([w.date() if isinstance(w, datetime) else w for w in frame["week"]],
                              index=frame.index, dtype=object)
    return frame


def kpis(store: Store, f: Filters, *, now: datetime | None = None) -> dict:
    """Headline numbers of the filtered set.

    Keys: responses, claims, band_counts {state: n} (every band of the active profile, in its order, then
    ``NO_CLAIMS_STATE``, 0 when none; a band name found only in older scores is appended), median_score,
    p95_score (of the responses with claims; None
    when empty), floors_fired (responses whose HRI a floor set), no_claims, queue_size,
    queue_oldest_age_days (the same numbers as ``queue_stats(store, f)``).
    """
    return _figures(store, f, ("kpis",), now=now)["kpis"]


def band_mix_by_week(store: Store, f: Filters) -> pd.DataFrame:
    """Responses per ISO week (the Monday, a date, by UTC creation time) and band: week, band, n.

    Responses without a creation time have no place on the time axis and are left out. Rows are in
    week order, bands in the active profile's order (other band names last).
    """
    return _figures(store, f, ("band_mix_by_week",))["band_mix_by_week"]


def score_histogram(store: Store, f: Filters, bins: Sequence[float] | None = None) -> pd.DataFrame:
    """Counts of scores per bin over 0-100: bin_start, bin_end, n (every bin, zero counts too).

    ``bins`` are the bins' upper bounds (default: ``hri_core.calibration.score_bins`` of the active
    profile's bands, so no bin straddles a band bound). Bins are read like bands: (start, end], the first
    also takes 0, scores compared at 9 decimals (20.000000000000004 is 20), so a score of exactly 50 is
    counted in the bin ending at 50, in the band ending at 50. Responses without claims are not counted.
    """
    return _figures(store, f, ("score_histogram",), bins=bins)["score_histogram"]


def dimension_contributions(store: Store, f: Filters, weights: dict) -> pd.DataFrame:
    """Per dimension (F, C, U, O, S, P, H): mean_score (mean s_k over the filtered responses), weight
    (w_k as passed in, normally the profile's) and mean_weighted (mean of w_k * s_k)."""
    return _figures(store, f, ("dimension_contributions",), weights=weights)["dimension_contributions"]


def high_share_by(store: Store, f: Filters, by: str, bands: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Per use case or model: key, n, high_or_critical, share.

    "High or critical" is the last two bands of ``bands`` (the profile's band names in order; the
    active profile's when None). ``by`` must be one of ``GROUP_COLUMNS``.
    """
    if not isinstance(by, str) or by not in GROUP_COLUMNS:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(GROUP_COLUMNS)}")
    name = f"high_share_by_{by}"
    return _figures(store, f, (name,), bands=bands)[name]


def overview(store: Store, f: Filters, weights: dict, bands: tuple[str, ...] | None = None, *,
             bins: Sequence[float] | None = None, now: datetime | None = None) -> dict:
    """Every figure of the overview page in one statement.

    Keys: ``kpis``, ``band_mix_by_week``, ``score_histogram``, ``dimension_contributions``,
    ``high_share_by_use_case``, ``high_share_by_model`` -- the same values as the one-figure
    functions, which run the same SQL for their figure alone (a test holds both to an independent recomputation).
    Of the current scores (no profile version chosen) the counts, sums and
    shares come from the read model's summary (``score_summary``, a few thousand rows instead of seven aggregates
    over every response); the queue scans the read model, the quantiles and the histogram count its
    scores in narrow groups and read rows only where a group does not settle them
    (``register.console.score_distribution``: exact, and about half the time; docs/performance.md).
    An older profile version kept as a read model of its own is read the same way (``read_model``); under any other
    version the version's scores are joined once and shared by every figure. ``bands``: the band names, in order, of
    the profile the figures are shown under (the active profile's when None): the states listed and ordered, and
    the two highest for the shares.
    """
    return _figures(store, f, FIGURES, weights=weights, bands=bands, bins=bins, now=now)


FIGURES = ("kpis", "dimension_contributions", "band_mix_by_week", "score_histogram", "high_share_by_use_case",
           "high_share_by_model")
_LIST_COLUMNS = {"band_mix_by_week": ["week", "band", "n"], "score_histogram": ["bin_start", "bin_end", "n"],
                 "high_share_by_use_case": ["key", "n", "high_or_critical", "share"],
                 "high_share_by_model": ["key", "n", "high_or_critical", "share"]}


def _figures(store: Store, f: Filters, names: Sequence[str], *, weights: dict | None = None,
             bands: tuple[str, ...] | None = None, bins: Sequence[float] | None = None,
             now: datetime | None = None) -> dict:
    """The overview's figures ``names`` (of ``FIGURES``) in one statement (``overview``)."""
    f, model = read_model(store, f)
    band_names = _band_names(store, bands)  # the caller's profile's (a chosen version's)
    by_letter = _weights_by_letter(weights or {}) if "dimension_contributions" in names else {}
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise ValueError(f"no overview figure named {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    p = Params()
    wanted = set(names)
    rows: dict[str, str] = {}
    lists: dict[str, tuple[str, str]] = {}
    summary = ""
    shares = [by for by in GROUP_COLUMNS if f"high_share_by_{by}" in wanted]
    if model is not None and not f.decisions:
        # a read model (the current scores, or a kept older version's): what adds up comes from its summary
        # (register.readmodels.current_scores, a few thousand rows); the queue, the quantiles and the histogram read
        # its rows (the last two by groups of scores first)
        summary = f"sm AS ({_summary_rows(f, p, model.summary)}), "
        if "kpis" in wanted:
            rows["kpis"] = _kpis_part(p, now or utc_now(), counted="sm")
        if "dimension_contributions" in wanted:
            rows["dimension_contributions"] = _summary_dimensions_part(p, by_letter)
        if "band_mix_by_week" in wanted:
            lists["band_mix_by_week"] = ("SELECT week, state AS band, sum(responses) AS n FROM sm "
                                         "WHERE week IS NOT NULL GROUP BY week, state", _week_part(p, band_names)[1])
        for by in shares:
            lists[f"high_share_by_{by}"] = _summary_share_part(p, by, band_names)
    else:
        if "kpis" in wanted:
            rows["kpis"] = _kpis_part(p, now or utc_now())
        if "dimension_contributions" in wanted:
            rows["dimension_contributions"] = _dimensions_part(p, by_letter)
        if "band_mix_by_week" in wanted:
            lists["band_mix_by_week"] = _week_part(p, band_names)
        for by in shares:
            lists[f"high_share_by_{by}"] = _share_part(p, by, band_names)
    if "score_histogram" in wanted:
        lists["score_histogram"] = histogram_part(p, _bins(store, bins))
    selects = [f"(SELECT k FROM ({sql}) k) AS {name}" for name, sql in rows.items()]
    selects += [f"(SELECT list(k ORDER BY {order}) FROM ({sql}) k) AS {name}" for name, (sql, order) in lists.items()]
    # the current scores are one narrow table (current_scores): each figure scans it, cheaper than materialising
    # a copy of it to share; a version's scores are a join, worth computing once. The summary has no decision:
    # filtered by decision, every figure reads the rows (above)
    shared = "MATERIALIZED" if model is None else "NOT MATERIALIZED"
    # the rows from the read model the summary came from (resolved once: a write between two lookups could drop
    # a kept view), or the version's score rows joined
    scored = model_rows(store, f, model, p)
    result = store.row(f"WITH {summary}fr AS {shared} ({scored}) SELECT {', '.join(selects)}", p.values,
                       what="the overview's figures")
    out: dict[str, Any] = {name: pd.DataFrame(result[name] or [], columns=cols)
                           for name, cols in _LIST_COLUMNS.items() if name in lists}
    if "band_mix_by_week" in out:
        out["band_mix_by_week"] = _weeks_as_dates(out["band_mix_by_week"])
    if "kpis" in rows:
        out["kpis"] = _kpis_dict(store, result["kpis"], band_names)
    if "dimension_contributions" in rows:
        out["dimension_contributions"] = _dimensions_frame(result["dimension_contributions"], by_letter)
    return out
