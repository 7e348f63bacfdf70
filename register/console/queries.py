"""Read queries for the console pages (overview, response explorer, detail) and reports.

Called by ``ui`` helpers (cached) and by ``register.console.review``; pages never hold SQL. Every query is
built from one fragment, ``scored_set``: the current responses joined to the score selected by the
``Filters`` (the current score, or the latest score under one profile version), restricted by the
filters. Every filter value is a bound parameter; the only identifiers taken from callers (sort
column, group-by column) come from allow-lists. Aggregations run in DuckDB: a query returns the
aggregate, never the table.

The overview's figures exist one function each (``kpis``, ``band_mix_by_week``, ...) and all at once
(``overview``); both run the same statement, the one-figure functions with their figure alone. Timings:
``benchmarks/bench_console.py``.

Band names, band order, weights and "high or critical" come from the scoring profile (passed in or
read from the register), never from constants here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pandas as pd

from hri_core import DIMENSIONS
from hri_core.calibration import score_bins
from register.console.score_distribution import histogram_part, quantile_ends_select, quantiles_from_ends
from register.db import response_ids
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.ingest.search_index import SLICE_KEYS, Lookup, lookup, search_select
from register.scoring import version_views
from register.scoring.authority import FILTERS as AUTHORITY_FILTERS
from register.scoring.authority import PROBLEMS as AUTHORITY_PROBLEMS
from register.scoring.authority import (
    claim_checks,
    claim_checks_select,
    dated_source_cited,
    response_authority_select,
    review_keys_select,
)
from register.scoring.authority_rules import authority_rules, requester_roles
from register.scoring.current_scores import WEEK
from register.scoring.profiles import active_profile, get_profile
from register.scoring.scorer import SCOPE_ALL, SCOPE_BATCH_PREFIX

__all__ = [
    "AUTHORITY_FILTERS",
    "EXPORT_COLUMNS",
    "EXPORT_LIMIT",
    "GROUP_COLUMNS",
    "NO_CLAIMS_STATE",
    "PAGE_COLUMNS",
    "QUEUE_ACTIONS",
    "SORT_COLUMNS",
    "CURRENT",
    "Filters",
    "ReadModel",
    "VersionRuns",
    "as_current",
    "authority_overview",
    "covers_every_current",
    "filtered_scores",
    "band_mix_by_week",
    "dimension_contributions",
    "export_rows",
    "export_select",
    "filter_options",
    "high_share_by",
    "kpis",
    "overview",
    "queue_stats",
    "read_model",
    "response_detail",
    "responses_page",
    "score_histogram",
    "same_set_unversioned",
    "scored_set",
    "version_runs",
]

# The state shown instead of a band for a response without claims: it was never judged, so its score
# (0) and the band that score falls in mean nothing. Every console query reports it in the ``band``
# column, the band filter selects it, and the overview counts it apart from the bands.
NO_CLAIMS_STATE = "No claims"

# Actions that put a response in the review queue (a response with no claims is queued too). These
# are the action vocabulary of ``hri_core.profile.ACTIONS``; which score maps to which action is the
# profile's business.
QUEUE_ACTIONS = ("review", "block")

PAGE_COLUMNS = ("response_id", "revision", "use_case", "model", "created_at", "score", "band", "action",
                "mitigation_action", "mitigation_reason", "hri_add", "hri", "floors_fired", "decisive_claim_id",
                "no_claims", "claim_count", "profile_version", "as_of", "authority")
EXPORT_COLUMNS = PAGE_COLUMNS + ("question", "answer")
EXPORT_LIMIT = 100_000  # rows of one export of the response explorer

# sort key -> SQL expression over the scored set (allow-list: nothing else reaches ORDER BY).
# Bands sort by score: within a profile the bands are score ranges, so that is their risk order.
SORT_COLUMNS = {
    "score": "score", "hri": "hri", "hri_add": "hri_add", "band": "score", "action": "action",
    "created_at": "created_at", "response_id": "response_id", "revision": "revision", "use_case": "use_case",
    "model": "model", "floors_fired": "floors_fired", "claim_count": "claim_count", "no_claims": "no_claims",
    "decisive_claim_id": "decisive_claim_id", "profile_version": "profile_version", "as_of": "as_of",
    "mitigation_action": "mitigation_action",
}
GROUP_COLUMNS = {"use_case": "use_case", "model": "model"}  # high_share_by's allow-list

DIM_COLUMNS = tuple(f"s_{d.value.lower()}" for d in DIMENSIONS)


@dataclass(frozen=True)
class Filters:
    """What the console's filter bar selects. Empty tuples and None mean "all".

    ``date_from``/``date_to`` are inclusive UTC dates on ``responses.created_at`` (a response without a
    creation time is excluded as soon as either bound is set). ``profile_version`` None means the
    current scores; a version number means the latest score of each current response under that
    version (responses never scored under it drop out).
    """

    date_from: date | None = None
    date_to: date | None = None
    use_cases: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    bands: tuple[str, ...] = ()
    profile_version: int | None = None

    def __post_init__(self) -> None:
        # lists from widgets become tuples, so that Filters stays hashable (cache keys)
        for name in ("use_cases", "models", "bands"):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(value or ()))
        for name in ("date_from", "date_to"):
            value = getattr(self, name)
            if isinstance(value, datetime):
                object.__setattr__(self, name, value.date())


def state_expr(p: Params, prefix: str = "") -> str:
    """A scored row's state: its band, or ``NO_CLAIMS_STATE`` when it has no claims (the band filter reads it)."""
    return f"CASE WHEN {prefix}no_claims THEN {p(NO_CLAIMS_STATE)} ELSE {prefix}band END"


def group_conditions(f: Filters, p: Params, prefix: str, state: str) -> list[str]:
    """The conditions of ``f``'s use cases, models and bands (``state``) on columns named with ``prefix``: the
    scored rows' and the summary's alike (the dates differ: a creation time there, a creation day here)."""
    cond = []
    if f.use_cases:
        cond.append(f"{prefix}use_case IN {p.in_list(f.use_cases)}")
    if f.models:
        cond.append(f"{prefix}model IN {p.in_list(f.models)}")
    if f.bands:
        cond.append(f"{state} IN {p.in_list(f.bands)}")
    return cond


def _utc_midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def scored_set(f: Filters, p: Params, *, responses: str = "responses", text_columns: bool = False,
               runs: VersionRuns | None = None, table: str = "current_scores") -> str:
    """SELECT of the filtered current responses with their selected score (one row per response).

    Columns: response_id, revision, response_key, use_case, model, created_at, imported_at, claim_count,
    run_id, profile_version, as_of, s_f..s_h, hri_add, hri, score, band, action, no_claims,
    floors_fired, decisive_claim_id, decisive_rule_id, scoring_failure, action_floor_rule_id (the floor whose
    minimum action raised the band's action), mitigation_action, mitigation_reason (CLAIM's Mitigation
    step: answer / revise / ask / abstain / escalate and its one sentence) (+ question, answer with
    ``text_columns``). ``band`` is the response's state: its band, or ``NO_CLAIMS_STATE`` when it has no
    claims (the band filter reads the same state).
    ``responses`` names the relation read as the responses table (``searched`` passes the matching
    subset); it needs the columns ``RESPONSE_COLUMNS`` (+ question, answer with ``text_columns``).
    ``runs``: under a profile version, the score runs that can hold a response's latest score under it
    (``version_runs`` looks them up). ``table``: without a profile version, the read model read (the current one,
    or a kept version's: ``read_model``).
    """
    if f.profile_version is None:
        # the current scores: the read model (register.scoring.current_scores) holds the join of current
        # responses and current scores, so the responses are joined only when a subset of them is asked for
        # (``responses``: a search's matches) or their text is
        source = f"{table} s"
        rows = "s"  # the alias the response columns are read from
        cond = []
    else:
        # the read model has every scored current response (a response scored under any version has a current
        # score) with its columns; the scores under the version join it on the integer key
        latest = _latest_scores(runs or VersionRuns(), p)
        source = f"current_scores c JOIN ({latest}) s ON s.response_key = c.response_key"
        rows = "c"
        cond = []
    if responses != "responses" or text_columns:
        source += f" JOIN {responses} r ON r.response_key = {rows}.response_key"
    if f.date_from is not None:
        cond.append(f"{rows}.created_at >= {p(_utc_midnight(f.date_from))}")
    if f.date_to is not None:
        cond.append(f"{rows}.created_at < {p(_utc_midnight(f.date_to + timedelta(days=1)))}")
    state = state_expr(p, "s.")
    cond += group_conditions(f, p, f"{rows}.", state)
    text = ", r.question, r.answer" if text_columns else ""
    return f"""
    SELECT {rows}.response_id, {rows}.revision, {rows}.response_key, {rows}.use_case, {rows}.model, {rows}.created_at,
           {rows}.imported_at, {rows}.claim_count, s.run_id, s.profile_version, s.as_of,
           {', '.join('s.' + c for c in DIM_COLUMNS)},
           s.hri_add, s.hri, s.score, {state} AS band, s.action, s.no_claims, s.floors_fired,
           s.decisive_claim_id, s.decisive_rule_id, s.scoring_failure, s.action_floor_rule_id,
           s.mitigation_action, s.mitigation_reason{text}
    FROM {source}
    WHERE {' AND '.join(cond) or 'true'}"""


@dataclass(frozen=True)
class VersionRuns:
    """The score runs of one profile version that can hold a current response's latest score under it.

    ``base``: the version's last run that scored every current response (None without one): a response
    revision stops being current and never becomes current again, so one current now was current at that run,
    which scored it again; the runs before it cannot hold a latest score. ``later``: the runs after it, only the
    last of each import batch (a batch run scores the batch's current revisions, and a batch gains none after
    its import: the last run covers every current one). ``overlapping``: some of ``later`` may score the same
    revisions (a Spark import scores any set), so the latest must be picked per revision.
    """

    base: int | None = None
    later: tuple[int, ...] = ()
    overlapping: bool = False


def version_runs(store: Store, version: int) -> VersionRuns:
    """The ``VersionRuns`` of profile ``version`` (see there), from its score runs' scopes."""
    rows = store.query("SELECT run_id, scope FROM score_runs WHERE profile_version = ? ORDER BY run_id",
                       [int(version)])
    last_full = max((i for i, (_, scope) in enumerate(rows) if scope == SCOPE_ALL), default=None)
    base = None if last_full is None else int(rows[last_full][0])
    after = rows if last_full is None else rows[last_full + 1:]
    last_of = {scope: int(run_id) for run_id, scope in after}  # rows are in run order: the last run of each scope
    overlapping = any(not scope.startswith(SCOPE_BATCH_PREFIX) for scope in last_of)
    later = [int(run_id) for run_id, _ in after] if overlapping else sorted(last_of.values())
    return VersionRuns(base, tuple(later), overlapping)


def _latest_scores(runs: VersionRuns, p: Params) -> str:
    """SELECT of each response revision's latest score row among ``runs`` (see ``VersionRuns``).

    Not a window over the rows (latest per revision): at 10M the window was most of the filter's 50 s. The
    later runs are disjoint (one per batch) and replace the base run's rows for their revisions: an anti-join
    whose build side is their few rows.
    """
    if runs.overlapping:  # any run may replace any earlier one: the latest per revision, by anti-join
        ids = ((runs.base,) if runs.base is not None else ()) + runs.later
        latest = f"SELECT s0.* FROM scores s0 WHERE s0.run_id IN {p.in_list(ids)}"
        if len(ids) > 1:
            latest += (f" AND NOT EXISTS (SELECT 1 FROM scores s1 WHERE s1.run_id IN {p.in_list(ids[1:])} "
                       "AND s1.run_id > s0.run_id AND s1.response_key = s0.response_key)")
        return latest
    parts = []
    if runs.later:
        parts.append(f"SELECT * FROM scores WHERE run_id IN {p.in_list(runs.later)}")
    if runs.base is not None:
        replaced = (f" AND response_key NOT IN (SELECT response_key FROM scores WHERE run_id IN "
                    f"{p.in_list(runs.later)})" if runs.later else "")
        parts.append(f"SELECT * FROM scores WHERE run_id = {p(runs.base)}{replaced}")
    return " UNION ALL ".join(parts) or "SELECT * FROM scores WHERE false"


def as_current(store: Store, f: Filters) -> Filters:
    """``f`` without its profile version when every current score is under that version, else ``f``.

    Then the two views are the same rows: a response's current score is its latest score of all, so when it is
    under the version it is the latest under the version too; and a response without a current score is in
    neither. The current view reads the read model (and the overview its summary) instead of joining the
    version's score rows to it (at 10M: about 6 s for the overview's figures under the version that was just
    published and run over everything). The test reads zone maps: after a full run every row group holds one
    version, and none is scanned.
    """
    if f.profile_version is None:
        return f
    other = store.scalar("SELECT count(*) FROM current_scores WHERE profile_version <> ?", [int(f.profile_version)])
    return replace(f, profile_version=None) if not other else f


def covers_every_current(store: Store, version: int) -> bool:
    """Whether every current response has a score under profile ``version`` (its view then holds every current
    response, only with other scores).

    True when the version has a run over everything (``VersionRuns.base``) and no current response is newer than
    that run: response keys come from one sequence and only grow, and writes are serialised, so a current response
    with a key up to the highest the run scored existed then; it was current then (a revision never becomes
    current again), so the run scored it. A later run under the version only replaces rows of the same set. One
    look at the run's rows (they sit together: zone maps skip the rest) and one at the current keys. A version
    whose view is kept (``register.scoring.version_views``) covers them when its view has as many rows as there
    are current responses (the view holds current responses only, each once)."""
    if version in version_views.kept(store):
        scores_table, _ = version_views.tables(version)
        return bool(store.scalar(f"SELECT (SELECT count(*) FROM {scores_table}) = "
                                 "(SELECT count(*) FROM responses WHERE is_current)"))
    base = version_runs(store, version).base
    if base is None:
        return False
    return bool(store.scalar("SELECT (SELECT max(response_key) FROM responses WHERE is_current) <= "
                             "(SELECT max(response_key) FROM scores WHERE run_id = ?)", [base]))


def same_set_unversioned(store: Store, f: Filters) -> Filters:
    """``f`` without its profile version where that leaves the filtered *set* of responses unchanged: no band is
    chosen (a band is read under the version) and the version covers every current response
    (``covers_every_current``); else ``f`` as it is. For figures that read the set and not its scores (the
    Authority figures judge each answer at its current score's as-of time under any version)."""
    f = as_current(store, f)
    if f.profile_version is None or f.bands or not covers_every_current(store, f.profile_version):
        return f
    return replace(f, profile_version=None)


@dataclass(frozen=True)
class ReadModel:
    """A read model of one version's view: the table of its rows (``current_scores``' columns) and its summary
    (``score_summary``'s)."""

    scores: str
    summary: str


CURRENT = ReadModel("current_scores", "score_summary")


def read_model(store: Store, f: Filters) -> tuple[Filters, ReadModel | None]:
    """Where the scores of ``f`` are read: ``f`` without a profile version and the read model holding its view --
    the current one (``as_current``) or a kept older version's (``register.scoring.version_views``) -- or ``f``
    and None when the version's score rows must be joined."""
    f = as_current(store, f)
    if f.profile_version is None:
        return f, CURRENT
    if f.profile_version in version_views.kept(store):
        return replace(f, profile_version=None), ReadModel(*version_views.tables(f.profile_version))
    return f, None


def filtered_scores(store: Store, f: Filters, p: Params, *, responses: str = "responses",
                    text_columns: bool = False) -> str:
    """``scored_set`` for ``f``, from the read model of its view where there is one (``read_model``), else with the
    profile version's score runs looked up first (``version_runs``)."""
    return model_rows(store, *read_model(store, f), p, responses=responses, text_columns=text_columns)


def model_rows(store: Store, f: Filters, model: ReadModel | None, p: Params, **kwargs: Any) -> str:
    """``scored_set`` for ``f`` as ``read_model`` resolved it: from ``model``, or by the version's score runs."""
    if model is not None:
        return scored_set(f, p, table=model.scores, **kwargs)
    return scored_set(f, p, runs=version_runs(store, f.profile_version), **kwargs)


RESPONSE_COLUMNS = ("response_id, revision, response_key, is_current, use_case, model, created_at, imported_at, "
                    "claim_count")


# A search whose index lookup names at least one revision in BITMAP_SHARE of the register's keys reads its matches as
# a bitmap of response keys (``_Matches``); fewer, as a set of keys.
BITMAP_SHARE = 4
_BITMAP_KEYS = 2**31 - 1  # get_bit takes an INTEGER position: beyond it, the set of keys
# the variable a searched page's cursor holds its bitmap in (each read has a cursor, a connection, of its own)
_MATCHES_VARIABLE = "hri_search_matches"


@dataclass(frozen=True)
class _Matches:
    """A search's matches: ``keys``, the SELECT of their response keys (its values bound in the statement's
    ``Params``), read as a set; or, with ``prepare`` (a statement and its values, run first on the statement's cursor),
    a bitmap of the keys up to ``upto`` that ``prepare`` stores in the cursor's variable ``_MATCHES_VARIABLE``, with
    the list of any keys above it."""

    keys: str
    prepare: tuple[str, dict] | None = None
    upto: int = 0


def search_matches(store: Store, search: str | None, p: Params, *, bitmap: bool = False) -> _Matches | None:
    """The matches of ``search`` (None when there is nothing to search); read as a bitmap (``bitmap`` allowing) when
    they are many.

    For a text found in millions of answers the set of keys was most of a search's cost: made distinct (a word held
    by nearly every answer, ``the``: 13M postings, 9.7M answers) and built into the hash table that narrows the read
    model to them (1.3-1.8 s at 10M). A bitmap of the keys (``bitstring_agg``) takes the lookup's rows as they come,
    repeats included, and the read model's scan tests one bit per row (0.5-0.6 s). That test is paid for every row of
    the read model (about 0.2 s at 10M for a word found once), so a lookup read from the index alone
    (``search_index.Lookup.exact``) with at most a catch-up slice of revisions above the index's mark (scanned) is
    counted first, and only one naming at least one key in ``BITMAP_SHARE`` of the register's is read as a bitmap:
    the count reads no text beyond that slice (a register whose index is far behind searches by keys, uncounted).
    The bitmap is computed by a statement of its own into a variable of the cursor: as a scalar subquery of the
    page's statement DuckDB sometimes joined it to every row (30 s for a letter found in 2% of the answers at 10M).
    """
    if search is None or not search.strip():
        return None
    if bitmap:
        counted = Params()
        found = lookup(store, search, counted)
        if found is None:
            return None
        top = response_ids.largest_key(store)
        if found.exact and top - found.indexed_through <= SLICE_KEYS:
            rows = int(store.scalar(f"SELECT count(*) FROM ({found.sql})", counted.values) or 0)
            if 0 < top <= _BITMAP_KEYS and rows * BITMAP_SHARE >= top:
                return _bitmap(found, counted, top)
    keys = search_select(store, search, p)
    return None if keys is None else _Matches(keys)


def _bitmap(found: Lookup, p: Params, upto: int) -> _Matches:
    """``_Matches`` read as a bitmap of the keys up to ``upto`` of the lookup ``found`` (the one counted: its values
    bound in ``p``, which the bitmap's statement binds; not looked up again): keys above it (revisions imported since
    it was read) are listed beside it, none as a rule, and never lost when there are."""
    bound = p(upto)
    prepare = (f"SET VARIABLE {_MATCHES_VARIABLE} = (SELECT {{"
               f"'bits': bitstring_agg(response_key, 0, {bound}) FILTER (WHERE response_key <= {bound}), "
               f"'above': list(response_key) FILTER (WHERE response_key > {bound})}} FROM ({found.sql}))")
    return _Matches(found.sql, (prepare, p.values), upto)


def _matched(matches: _Matches, p: Params) -> tuple[str, str]:
    """(WITH-clause items, condition on ``response_key``): whether a revision is one of the matches -- the keys
    materialised as ``m``, or the bitmap in the cursor's variable (``_Matches.prepare`` run first)."""
    if matches.prepare is None:
        return f"m AS MATERIALIZED ({matches.keys}), ", "response_key IN (SELECT response_key FROM m)"
    upto, found = p(matches.upto), f"getvariable('{_MATCHES_VARIABLE}')"
    return "", (f"CASE WHEN response_key <= {upto} "
                f"THEN coalesce(get_bit({found}.bits, response_key::INTEGER) = 1, false) "
                f"ELSE coalesce(list_contains({found}.above, response_key), false) END")


def searched(store: Store, resolved: tuple[Filters, ReadModel | None], p: Params, matches: _Matches, *,
              text_columns: bool = False) -> str:
    """WITH-clause items ending in ``fr``: the filtered scored set of the responses matching a search, ``resolved``
    being where its scores are read (``read_model``).

    The matches are materialised first (a CTE barrier, or the bitmap's statement of its own: ``_matched``), so the
    scored set is narrowed to them whatever the optimiser estimates (with score history in the table it otherwise
    joined all responses first and filtered after: 0.87 s instead of 0.56 s at 1M responses, 2M score rows). The
    read model holds the response columns and only current revisions, so the page narrows it by the keys without
    reading ``responses``; the export, which needs the texts, reads the matching current responses first.
    """
    items, matched = _matched(matches, p)
    if not text_columns:
        return f"{items}fr AS NOT MATERIALIZED (SELECT * FROM ({model_rows(store, *resolved, p)}) WHERE {matched})"
    return (f"{items}"
            f"rm AS MATERIALIZED (SELECT {RESPONSE_COLUMNS}, question, answer FROM responses "
            f"WHERE is_current AND {matched}), "
            f"fr AS NOT MATERIALIZED ({model_rows(store, *resolved, p, responses='rm', text_columns=True)})")


def flag_queued(p: Params, source: str = "fr", authority_keys: str | None = None) -> str:
    """The rows of ``source`` (a ``scored_set``) with a boolean ``queued``: the review queue's one
    definition, shared by ``kpis``, ``queue_stats`` and ``register.console.review.review_queue`` so that their
    numbers always agree. Queued: the action asks for a person (``QUEUE_ACTIONS``), the response has
    no claims, or (``authority_keys``, a SELECT of response keys: ``register.scoring.authority.
    review_keys_select``) a SUPPORTED claim of it has a proposed label from the Authority checks -- and
    nobody has decided on that revision yet.

    A LEFT JOIN on the (small) decisions table rather than a correlated NOT EXISTS: DuckDB turns the
    latter into a mark join over every row, about 3x slower at 1M responses; on the integer key (migration 021),
    not the (response_id, revision) strings: 0.02 s instead of 0.25 s at 10M.
    """
    authority = f" OR {source}.response_key IN ({authority_keys})" if authority_keys else ""
    return (f"SELECT {source}.*, ({source}.action IN {p.in_list(QUEUE_ACTIONS)} OR {source}.no_claims{authority}) "
            f"AND d.decision_id IS NULL AS queued FROM {source} LEFT JOIN review_decisions d "
            f"ON d.response_key = {source}.response_key")


def age_days_expr(p: Params, now: datetime, column: str) -> str:
    """Days from ``column`` to ``now`` (fractional)."""
    return f"(epoch_us({p(now)}::TIMESTAMPTZ) - epoch_us({column})) / 86400000000.0"


def queue_stats(store: Store, f: Filters | None = None, *, now: datetime | None = None) -> dict:
    """Size of the review queue and the age in days of its oldest response (None when empty).

    Queue age counts from the creation time, or the import time when a response has none.
    """
    p = Params()
    oldest = age_days_expr(p, now or utc_now(), "min(coalesce(created_at, imported_at))")
    keys = review_keys_select(store, p, use_cases=(f or Filters()).use_cases)
    row = store.one(
        f"WITH fr AS ({filtered_scores(store, f or Filters(), p)}), q AS ({flag_queued(p, authority_keys=keys)}) "
        f"SELECT count(*) AS size, {oldest} AS oldest FROM q WHERE queued", p.values)
    return {"size": int(row["size"]), "oldest_age_days": None if row["oldest"] is None else float(row["oldest"])}


def _band_names(store: Store, bands: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(bands) if bands is not None else tuple(b.name for b in active_profile(store).bands)


def _states(band_names: tuple[str, ...]) -> tuple[str, ...]:
    """The states a response can show: the profile's bands, then "No claims"."""
    return (*band_names, NO_CLAIMS_STATE)


def _bins(store: Store, bins: Sequence[float] | None) -> tuple[float, ...]:
    return tuple(bins) if bins is not None else score_bins([b.upper for b in active_profile(store).bands])


def _as_list(value: Any) -> list | None:
    """A DuckDB list cell (numpy array) as a Python list; a missing one as None."""
    return None if value is None or isinstance(value, (float, type(pd.NA))) else [str(v) for v in value]


def _none_if_nan(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


# --- overview ---------------------------------------------------------------------------------------


def filter_options(store: Store) -> dict:
    """Choices for the filter bar: use cases, models, bands (active profile order, then ``NO_CLAIMS_STATE``),
    profile versions that have scores with each one's bands (``version_bands``: an older version may name its
    bands otherwise) and how the console reads each one (``version_reads``: "current", "kept" or "joined",
    ``register.scoring.version_views.view_states``) with the kept ones oldest first (``kept_versions``), and the
    range of creation dates of the current responses."""
    row = store.one("""
        SELECT list_sort(list(DISTINCT use_case) FILTER (WHERE use_case IS NOT NULL)) AS use_cases,
               list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)) AS models,
               min(created_at)::DATE AS date_min, max(created_at)::DATE AS date_max
        FROM responses WHERE is_current""")
    versions = [v for (v,) in store.query(
        "SELECT DISTINCT profile_version FROM score_runs WHERE responses_scored > 0 ORDER BY 1")]
    held = version_views.kept(store)
    return {"use_cases": list(row["use_cases"] or []), "models": list(row["models"] or []),
            "bands": list(_states(_band_names(store, None))), "profile_versions": versions,
            "version_bands": {v: list(_states(tuple(b.name for b in get_profile(store, v).bands))) for v in versions},
            "version_reads": version_views.view_states(store, versions, held), "kept_versions": held,
            "date_min": row["date_min"], "date_max": row["date_max"]}


# Each overview figure is a SELECT over the filtered scored set ``fr`` (``_*_part`` below, each with its ORDER BY
# apart) or, for the read models, over their summary ``sm``; ``_figures`` joins the ones asked for into one statement.


def _kpis_part(p: Params, now: datetime, authority_keys: str, *, counted: str | None = None) -> str:
    """The headline figures' row. ``counted``: the summary rows (``_summary_rows``) the counts come from instead
    of the scored rows (the quantiles and the queue read the scored rows either way)."""
    oldest = age_days_expr(p, now, "min(coalesce(created_at, imported_at)) FILTER (WHERE queued)")
    scanned = f"""{quantile_ends_select(p)} AS quantile_ends,
               count(*) FILTER (WHERE queued) AS queue_size, {oldest} AS queue_oldest_age_days
        FROM ({flag_queued(p, authority_keys=authority_keys)}) q"""
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
    shares come from the read model's summary (``score_summary``, 5,634 rows at 10M responses instead of
    seven aggregates over 10 million); the queue scans the read model, the quantiles and the histogram count its
    scores in narrow groups and read rows only where a group does not settle them
    (``register.console.score_distribution``: exact, 0.34-0.40 s for the overview at 10M instead of 0.79-0.83 s).
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
    by_letter = _weights_by_letter(weights) if "dimension_contributions" in names else {}
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        raise ValueError(f"no overview figure named {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    p = Params()
    wanted = set(names)
    rows: dict[str, str] = {}
    lists: dict[str, tuple[str, str]] = {}
    summary = ""
    shares = [by for by in GROUP_COLUMNS if f"high_share_by_{by}" in wanted]
    if model is not None:
        # a read model (the current scores, or a kept older version's): what adds up comes from its summary
        # (register.scoring.current_scores, 5,634 rows at 10M); the queue, the quantiles and the histogram read
        # its rows (the last two by groups of scores first)
        summary = f"sm AS ({_summary_rows(f, p, model.summary)}), "
        if "kpis" in wanted:
            keys = review_keys_select(store, p, use_cases=f.use_cases)
            rows["kpis"] = _kpis_part(p, now or utc_now(), keys, counted="sm")
        if "dimension_contributions" in wanted:
            rows["dimension_contributions"] = _summary_dimensions_part(p, by_letter)
        if "band_mix_by_week" in wanted:
            lists["band_mix_by_week"] = ("SELECT week, state AS band, sum(responses) AS n FROM sm "
                                         "WHERE week IS NOT NULL GROUP BY week, state", _week_part(p, band_names)[1])
        for by in shares:
            lists[f"high_share_by_{by}"] = _summary_share_part(p, by, band_names)
    else:
        if "kpis" in wanted:
            rows["kpis"] = _kpis_part(p, now or utc_now(), review_keys_select(store, p, use_cases=f.use_cases))
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
    # a copy of it to share; a version's scores are a join, worth computing once
    shared = "MATERIALIZED" if model is None else "NOT MATERIALIZED"
    # the rows from the read model the summary came from (resolved once: a write between two lookups could drop
    # a kept view), or the version's score rows joined
    scored = model_rows(store, f, model, p)
    result = store.one(f"WITH {summary}fr AS {shared} ({scored}) SELECT {', '.join(selects)}", p.values)
    out: dict[str, Any] = {name: pd.DataFrame(result[name] or [], columns=cols)
                           for name, cols in _LIST_COLUMNS.items() if name in lists}
    if "band_mix_by_week" in out:
        out["band_mix_by_week"] = _weeks_as_dates(out["band_mix_by_week"])
    if "kpis" in rows:
        out["kpis"] = _kpis_dict(store, result["kpis"], band_names)
    if "dimension_contributions" in rows:
        out["dimension_contributions"] = _dimensions_frame(result["dimension_contributions"], by_letter)
    return out


# --- response explorer ------------------------------------------------------------------------------


def _sort_key(sort_by: str) -> str:
    """The SQL expression of an allow-listed sort key (``SORT_COLUMNS``); ValueError for anything else."""
    expr = SORT_COLUMNS.get(sort_by) if isinstance(sort_by, str) else None
    if expr is None:
        raise ValueError(f"cannot sort by {sort_by!r}; choose one of {', '.join(SORT_COLUMNS)}")
    return expr


def _order_by(sort_by: str, descending: bool, *, key: str | None = None) -> str:
    """ORDER BY ``sort_by`` (or the column ``key`` holding its value), then the stable order for paging."""
    direction = "DESC" if descending else "ASC"
    return f"{key or _sort_key(sort_by)} {direction} NULLS LAST, response_id, revision"


def check_window(limit: int, offset: int) -> None:
    for name, value in (("limit", limit), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def _authority_view(p: Params, store: Store, authority: str | None) -> str:
    """WITH-clause items after ``fr``: ``fa``, the rows of ``fr`` kept by the Authority filter -- None (all),
    "any finding", "proposed label" or one of ``authority.PROBLEMS`` -- with the responses' ``authority`` line
    when the filter needed it (NULL otherwise: ``_paged_authority`` adds it to the page's rows only)."""
    if authority is None:
        return "fa AS (SELECT fr.*, NULL::VARCHAR AS authority FROM fr)"
    if authority == "any finding":
        cond = "au.response_key IS NOT NULL"
    elif authority == "proposed label":
        cond = "coalesce(au.proposals, 0) > 0"
    elif authority in AUTHORITY_PROBLEMS:
        cond = f"list_contains(au.problems, {p(authority)})"
    else:
        raise ValueError(f"authority filter {authority!r} is not one of: {', '.join(AUTHORITY_FILTERS)}")
    return (f"au AS ({response_authority_select(store, p)}), "
            f"fa AS (SELECT fr.*, au.authority FROM fr LEFT JOIN au ON au.response_key = fr.response_key "
            f"WHERE {cond})")


def _paged_authority(store: Store, p: Params, page: str, columns: tuple[str, ...], order: str) -> str:
    """WITH item ``pa`` (the Authority lines of the responses in ``page``, a CTE with response_key and
    authority) and the final SELECT of ``columns`` from ``page``: the checks run for the page's rows only
    (the whole set's checks cost ~10x the page query)."""
    picked = ", ".join("coalesce(pg.authority, pa.authority) AS authority" if c == "authority" else f"pg.{c}"
                       for c in columns)
    keys = f"SELECT response_key FROM {page}"
    return (f"pa AS ({response_authority_select(store, p, keys=keys)}) "
            f"SELECT {picked} FROM {page} pg LEFT JOIN pa ON pa.response_key = pg.response_key ORDER BY {order}")


def responses_page(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                   descending: bool = True, limit: int = 50, offset: int = 0,
                   authority: str | None = None) -> tuple[pd.DataFrame, int]:
    """One page of the filtered responses (``PAGE_COLUMNS``) and the size of the whole filtered set.

    ``search`` is a case-insensitive literal substring of the question, the answer or any claim's
    text (``register.ingest.search_index.search_select``: looked up in the search index). ``sort_by`` must be one
    of ``SORT_COLUMNS``. ``authority`` keeps the
    responses with an Authority finding (``AUTHORITY_FILTERS``: any, a proposed label, or one problem);
    the ``authority`` column is the Authority line of each response on the page (NULL: no finding).
    """
    order = _order_by(sort_by, descending)
    check_window(limit, offset)
    p = Params()
    matches = search_matches(store, search, p, bitmap=True)
    columns = ", ".join((*PAGE_COLUMNS, "response_key"))
    if matches is None:
        # two statements: a top-N over the join and a bare count are cheaper than one statement
        # that shares the join between them (measured at 1M responses)
        frame = store.frame(f"WITH fr AS ({filtered_scores(store, f, p)}), {_authority_view(p, store, authority)}, "
                            f"page AS MATERIALIZED (SELECT {columns} FROM fa ORDER BY {order} "
                            f"LIMIT {p(limit)} OFFSET {p(offset)}), "
                            f"{_paged_authority(store, p, 'page', PAGE_COLUMNS, order)}", p.values)
        p2 = Params()
        if authority is None:
            total = store.scalar(f"SELECT count(*) FROM ({filtered_scores(store, f, p2)})", p2.values)
        else:
            total = store.scalar(f"WITH fr AS ({filtered_scores(store, f, p2)}), "
                                 f"{_authority_view(p2, store, authority)} SELECT count(*) FROM fa", p2.values)
        return frame, int(total)
    # searching: the matches are found once (materialised keys); their sort keys are read once into ``hits``, which
    # gives the total and the page's keys, and only the page's rows are read whole (a search that matches a sixth
    # of 10M answers: one pass over the read model, not one per consumer carrying every column). The page's rows
    # are the view's rows of the page's keys, read by those keys alone: read through the matches again, under a
    # use-case filter DuckDB built its hash table on every filtered row with every column (it misjudges how many
    # keys match) -- at 10M, `notice period` in the largest use case took 0.59 s instead of 0.21 s, load 1.
    # The LEFT JOIN keeps the total when the page is past the end.
    hit_order = _order_by(sort_by, descending, key="_sort")
    resolved = read_model(store, f)  # once: the matches and the page's rows read the same source
    page_sql = f"""
        WITH {searched(store, resolved, p, matches)}, {_authority_view(p, store, authority)},
        hits AS MATERIALIZED (SELECT response_key, {_sort_key(sort_by)} AS _sort, response_id, revision FROM fa),
        total AS (SELECT count(*) AS _total FROM hits),
        top AS MATERIALIZED (SELECT response_key FROM hits ORDER BY {hit_order} LIMIT {p(limit)} OFFSET {p(offset)}),
        page AS MATERIALIZED (SELECT {columns}
                              FROM ({model_rows(store, *resolved, p, responses='top')}) CROSS JOIN
                                   (SELECT NULL::VARCHAR AS authority)),
        rows AS (WITH {_paged_authority(store, p, 'page', PAGE_COLUMNS, order)})
        SELECT rows.*, total._total FROM total LEFT JOIN rows ON true
        ORDER BY {order}"""
    with store.cursor() as cur:
        if matches.prepare is not None:
            cur.execute(*matches.prepare)
        frame = cur.frame(page_sql, p.values)
    total = int(frame["_total"].iloc[0])
    frame = frame[frame["response_id"].notna()].drop(columns="_total").reset_index(drop=True)
    return frame, total


def export_select(store: Store, f: Filters, p: Params, *, search: str | None = None, sort_by: str = "score",
                  descending: bool = True, limit: int = EXPORT_LIMIT, authority: str | None = None) -> str:
    """The SELECT of the export view (``EXPORT_COLUMNS``, at most ``limit`` rows in the page's order), its
    values bound in ``p``: ``export_rows`` reads it into a frame, ``register.console.exports`` copies it to a
    file."""
    order = _order_by(sort_by, descending)
    check_window(limit, 0)
    matches = search_matches(store, search, p)
    scored = (searched(store, read_model(store, f), p, matches, text_columns=True) if matches
              else f"fr AS ({filtered_scores(store, f, p, text_columns=True)})")
    columns = ", ".join((*EXPORT_COLUMNS, "response_key"))
    return (f"WITH {scored}, {_authority_view(p, store, authority)}, "
            f"rows AS MATERIALIZED (SELECT {columns} FROM fa ORDER BY {order} LIMIT {p(limit)}), "
            f"{_paged_authority(store, p, 'rows', EXPORT_COLUMNS, order)}")


def export_rows(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                descending: bool = True, limit: int = EXPORT_LIMIT, authority: str | None = None) -> pd.DataFrame:
    """The filtered view for CSV/Excel export: ``EXPORT_COLUMNS`` (the page's plus question, answer)."""
    p = Params()
    sql = export_select(store, f, p, search=search, sort_by=sort_by, descending=descending, limit=limit,
                        authority=authority)
    return store.frame(sql, p.values)


def _every_current(store: Store, f: Filters) -> bool:
    """Whether the filtered set of ``f`` is every current response of its use cases and models (all of them when
    it names none): no other filter narrows it, and every current response has a current score (the read model
    holds one row per scored current response)."""
    if replace(as_current(store, f), use_cases=(), models=()) != Filters():
        return False
    return bool(store.scalar("SELECT (SELECT count(*) FROM responses WHERE is_current) = "
                             "(SELECT count(*) FROM current_scores)"))


def authority_overview(store: Store, f: Filters) -> dict:
    """Supported claims resting on stale or unauthoritative sources, in the filtered set.

    Keys: ``supported_sourced`` (SUPPORTED claims with a ``source_id``), ``flagged`` (those resting on a
    forbidden, stale or insufficiently authoritative source, with a proposed label: the review queue takes
    them), ``responses`` (answers with such a claim) and ``by_problem`` (DataFrame problem, claims: SUPPORTED
    claims per ``authority.PROBLEMS``, every problem listed, 0 when none).

    The claim counts come from the checks counted over their distinct inputs (``claim_checks_select``'s
    ``grouped_over``: at 10M answers, 43M such claims citing a few hundred sources, 54 s listed against a few
    seconds counted); the answers are counted from the claims on sources that can fail a check only, as the
    review queue reads them, and only when a claim is flagged.
    """
    f = same_set_unversioned(store, f)  # an older version over every answer: the counts, not a join of its scores
    p = Params()
    rules, roles = authority_rules(store), requester_roles(store)
    now = utc_now()
    # the as-of time of each response's *current* score (the time of an answer without a creation time): the
    # selected score's under no version filter, else the read model's
    fg = ("SELECT response_key, use_case, created_at, as_of FROM fr" if f.profile_version is None else
          "SELECT fr.response_key, fr.use_case, fr.created_at, cs.as_of FROM fr "
          "LEFT JOIN current_scores cs ON cs.response_key = fr.response_key")
    every = _every_current(store, f)
    counted = claim_checks_select(p, rules, roles, now, supported_only=True, grouped_over="fg",
                                  over_every_current=every, use_cases=f.use_cases, models=f.models,
                                  any_dated=not every or dated_source_cited(store, untimed=True))
    answers = ("WITH fr AS {materialized} (SELECT response_key, use_case, created_at, as_of FROM ({filtered})), "
               f"fg AS ({fg})")
    row = store.one(f"""
        {answers.format(materialized="MATERIALIZED", filtered=filtered_scores(store, f, p))},
        ch AS ({counted})
        SELECT coalesce(sum(n), 0) AS supported_sourced, coalesce(sum(n) FILTER (WHERE to_review), 0) AS flagged,
               (SELECT map_from_entries(list((x, k))) FROM
                   (SELECT x, sum(n) AS k FROM (SELECT unnest(problems) AS x, n FROM ch) GROUP BY x)) AS by_problem
        FROM ch""", p.values)
    # the answers with a failed check, listed claim by claim: none to find (and no claim read) while no claim of the
    # filtered answers is flagged (with a dated source cited by 3.6 million claims at 10M, the listing is 1-2 s)
    responses = 0
    if row["flagged"]:
        q = Params()
        failing = claim_checks_select(q, rules, roles, now, failing_only=True, answers="fg")
        # counted as a bitmap of their keys (a hash table of 1.7 million distinct keys cost 0.4 of 2 CPU-s); a key
        # above the bound (imported since it was read) is counted apart
        top = q(response_ids.largest_key(store))
        responses = store.scalar(f"""{answers.format(materialized="", filtered=filtered_scores(store, f, q))}
            SELECT coalesce(bit_count(bitstring_agg(response_key::BIGINT, 0::BIGINT, {top}::BIGINT)
                                      FILTER (WHERE response_key <= {top})), 0)
                   + count(DISTINCT response_key) FILTER (WHERE response_key > {top})
            FROM ({failing}) WHERE to_review""", q.values)
    counts = row["by_problem"] or {}
    return {"supported_sourced": int(row["supported_sourced"]), "flagged": int(row["flagged"]),
            "responses": int(responses),
            "by_problem": pd.DataFrame({"problem": list(AUTHORITY_PROBLEMS),
                                        "claims": [int(counts.get(x, 0)) for x in AUTHORITY_PROBLEMS]})}


# --- one response -----------------------------------------------------------------------------------

_RESPONSE_FIELDS = ("response_id", "revision", "response_key", "is_current", "content_hash", "batch_id",
                    "imported_at", "use_case", "model", "created_at", "question", "answer", "stakes", "claim_count",
                    "query_ambiguous", "gt_answer")
_SCORE_FIELDS = ("run_id", "response_id", "revision", "profile_version", "as_of", "is_current", *DIM_COLUMNS,
                 "hri_add", "hri", "score", "band", "action", "no_claims", "total_criticality", "floors_fired",
                 "decisive_claim_id", "decisive_rule_id", "action_floor_claim_id", "action_floor_rule_id",
                 "mitigation_action", "mitigation_rule", "mitigation_reason", "mitigation_claim_id",
                 "mitigation_policy_version")


_AUTHORITY_FIELDS = ("authority", "allowed", "allowed_reason", "current", "current_reason", "authoritative",
                     "authoritative_reason", "proposals")


def _with_authority(claims: pd.DataFrame, checks: pd.DataFrame) -> pd.DataFrame:
    """The claims with their Authority checks by claim position ("no source" for a claim without one)."""
    checks = checks.set_index("claim_idx")
    out = claims.copy()
    for field in _AUTHORITY_FIELDS:
        values = [checks.at[i, field] if i in checks.index else None for i in out["claim_idx"]]
        out[field] = pd.Series(values, index=out.index, dtype=object)
    for check in ("allowed", "current", "authoritative"):  # True / False / None (undecided), as Python values
        out[check] = pd.Series([None if v is None or pd.isna(v) else bool(v) for v in out[check]], index=out.index,
                               dtype=object)
    out["proposals"] = pd.Series([_as_list(v) or [] for v in out["proposals"]], index=out.index, dtype=object)
    out["authority"] = out["authority"].where(out["authority"].notna(), "no source")
    return out


def response_detail(store: Store, response_id: str, revision: int | None = None) -> dict | None:
    """Everything the detail view shows about one response (its current revision unless ``revision``).

    None when the response (or that revision) is unknown. Keys: ``response`` (dict), ``score`` (dict of
    the revision's current score, or its latest when it is no longer current; None when unscored),
    ``claims`` (with each sourced claim's Authority checks: ``authority``, ``allowed``, ``current``,
    ``authoritative``, their ``*_reason``, ``proposals``; "no source" without one), ``floors`` (the floors
    that fired in that score's run), ``history`` (every score of the response, every revision and run,
    oldest run first), ``revisions`` (list of ints), ``keys`` (each revision's response key, ``{revision: key}``:
    ``register.scoring.reproduce.reproduce`` takes them rather than looking the id up again),
    ``decisions`` (review decisions, oldest first).
    """
    # The response's revisions are found by its id once (a scan of one string column); everything else is read
    # by the revisions' integer keys, which DuckDB's zone maps narrow to a few row groups. By id, every score run
    # scanned every score row's id again: 0.6 s per lookup at 10M responses and five runs, growing with each run.
    known = response_ids.revisions(store, response_id)
    chosen = [key for rev, key, current in known if (current if revision is None else rev == int(revision))]
    if not chosen:
        return None
    key = chosen[0]
    response = store.one(f"SELECT {', '.join(_RESPONSE_FIELDS)} FROM responses WHERE response_key = ?", [key])
    if response is None:
        return None
    response.pop("response_key")
    score = store.one(
        f"SELECT {', '.join(_SCORE_FIELDS)} FROM scores WHERE response_key = ? "
        "ORDER BY is_current DESC, run_id DESC LIMIT 1", [key])
    claims = store.frame(
        "SELECT claim_idx, claim_id, text, labels, dimensions, criticality, source_id, span, feedback_at, "
        "feedback_count, feedback_resolved, category, is_core, contradicted_by FROM claims WHERE response_key = ? "
        "ORDER BY claim_idx", [key])
    claims["labels"] = pd.Series([_as_list(v) for v in claims["labels"]], index=claims.index, dtype=object)
    claims["dimensions"] = pd.Series([_as_list(v) for v in claims["dimensions"]], index=claims.index, dtype=object)
    claims = _with_authority(claims, claim_checks(store, response_key=key))
    floors = store.frame(
        "SELECT claim_id, rule_id, label, criticality, value FROM score_floors "
        "WHERE run_id = ? AND response_key = ? ORDER BY claim_idx, rule_id",
        [None if score is None else score["run_id"], key])
    history = store.frame(
        "SELECT run_id, revision, profile_version, as_of, score, CASE WHEN no_claims THEN ? ELSE band END AS band, "
        "action, mitigation_action, hri_add, is_current FROM scores WHERE list_contains(?, response_key) "
        "ORDER BY run_id, revision", [NO_CLAIMS_STATE, [k for _, k, _ in known]])
    revisions = [r for r, _, _ in known]
    decisions = store.frame(
        "SELECT decision_id, revision, decision, reason, decided_by, decided_role, decided_at, score_at_decision, "
        "band_at_decision, action_at_decision, profile_version FROM review_decisions WHERE response_id = ? "
        "ORDER BY decided_at, decision_id", [response_id])
    return {"response": response, "score": score, "claims": claims, "floors": floors, "history": history,
            "revisions": revisions, "keys": {r: k for r, k, _ in known}, "decisions": decisions}
