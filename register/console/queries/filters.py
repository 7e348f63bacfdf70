"""The filtered scored set every console query reads, and where its scores are read from.

``Filters`` is what the console's filter bar selects (and the key of the cached reads in ``ui``).
``scored_set`` is the one fragment every query is built from: the current responses joined to the score
selected by the filters (the current score, or the latest score under one profile version: ``version_runs``),
restricted by them; every filter value is a bound parameter. ``read_model`` says where a view's scores are
read (the current read model, a kept older version's, or the version's score rows joined) and
``filtered_scores`` builds the set from there. ``state_expr``, ``group_conditions``, ``model_rows``,
``DIM_COLUMNS`` and ``RESPONSE_COLUMNS`` are the SQL pieces the other query modules share.

Called by the other modules of ``register.console.queries``, by ``register.console.review``,
``register.console.rag`` and ``register.console.exports``, and by ``ui`` and the pages (``Filters``,
``NO_CLAIMS_STATE``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from hri_core import DIMENSIONS
from register.db.sql import Params
from register.db.store import Store
from register.readmodels import version_views
from register.scoring.scorer import SCOPE_ALL, SCOPE_BATCH_PREFIX

__all__ = ["CURRENT", "DIM_COLUMNS", "NO_CLAIMS_STATE", "RESPONSE_COLUMNS", "Filters", "ReadModel", "VersionRuns",
           "as_current", "covers_every_current", "filtered_scores", "group_conditions", "model_rows", "read_model",
           "same_set_unversioned", "scored_set", "state_expr", "version_runs"]

# The state shown instead of a band for a response without claims: it was never judged, so its score
# (0) and the band that score falls in mean nothing. Every console query reports it in the ``band``
# column, the band filter selects it, and the overview counts it apart from the bands.
NO_CLAIMS_STATE = "No claims"

# the score columns of the dimensions (s_f .. s_h), in ``hri_core.DIMENSIONS``' order
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
    decisions: tuple[str, ...] = ()  # the answer's one decision (release, caution, review, block)

    def __post_init__(self) -> None:
        # lists from widgets become tuples, so that Filters stays hashable (cache keys)
        for name in ("use_cases", "models", "bands", "decisions"):
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
    scored rows' and the summary's alike (the dates differ: a creation time there, a creation day here). The
    decisions are the scored rows' only (``decision_condition``): the summary has no decision."""
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
    step: answer / revise / ask / abstain / escalate and its one sentence), decision and decision_reasons (the one
    decision on the answer and why: ``register.scoring.decision``) (+ question, answer with ``text_columns``).
    ``band`` is the response's state: its band, or ``NO_CLAIMS_STATE`` when it has no
    claims (the band filter reads the same state).
    ``responses`` names the relation read as the responses table (``searched`` passes the matching
    subset); it needs the columns ``RESPONSE_COLUMNS`` (+ question, answer with ``text_columns``).
    ``runs``: under a profile version, the score runs that can hold a response's latest score under it
    (``version_runs`` looks them up). ``table``: without a profile version, the read model read (the current one,
    or a kept version's: ``read_model``).
    """
    if f.profile_version is None:
        # the current scores: the read model (register.readmodels.current_scores) holds the join of current
        # responses and current scores, so the responses are joined only when a subset of them is asked for
        # (``responses``: a search's matches) or their text is
        source = f"{table} s"
        rows = "s"  # the alias the response columns are read from
        cond: list[str] = []
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
    if f.decisions:
        cond.append(f"s.decision IN {p.in_list(f.decisions)}")
    text = ", r.question, r.answer" if text_columns else ""
    return f"""
    SELECT {rows}.response_id, {rows}.revision, {rows}.response_key, {rows}.use_case, {rows}.model, {rows}.created_at,
           {rows}.imported_at, {rows}.claim_count, s.run_id, s.profile_version, s.as_of,
           {', '.join('s.' + c for c in DIM_COLUMNS)},
           s.hri_add, s.hri, s.score, {state} AS band, s.action, s.no_claims, s.floors_fired,
           s.decisive_claim_id, s.decisive_rule_id, s.scoring_failure, s.action_floor_rule_id,
           s.mitigation_action, s.mitigation_reason, s.decision, s.decision_reasons{text}
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
    version: int | None = None  # the version whose rows are read (a run under a lens holds others' too)
    bound: bool = False  # the base run scored the version for the use cases a lens binds to it, not every answer


# the runs that hold a version's rows: its own, and those under a lens binding it to use cases (migration 056)
RUNS_OF_VERSION = ("SELECT run_id, scope, profile_version <> $v AS bound FROM score_runs WHERE profile_version = $v "
                   "OR list_contains(coalesce(bound_profile_versions, []::INTEGER[]), $v) ORDER BY run_id")


def version_runs(store: Store, version: int) -> VersionRuns:
    """The ``VersionRuns`` of profile ``version`` (see there), from its score runs' scopes: the runs under it and
    those that scored it as a version bound to use cases (``score_runs.bound_profile_versions``)."""
    found = store.query(RUNS_OF_VERSION, {"v": int(version)})
    rows = [(run_id, scope) for run_id, scope, _ in found]
    bound_in = {run_id for run_id, _, bound in found if bound}
    last_full = max((i for i, (_, scope) in enumerate(rows) if scope == SCOPE_ALL), default=None)
    base = None if last_full is None else int(rows[last_full][0])
    after = rows if last_full is None else rows[last_full + 1:]
    last_of = {scope: int(run_id) for run_id, scope in after}  # rows are in run order: the last run of each scope
    overlapping = any(not scope.startswith(SCOPE_BATCH_PREFIX) for scope in last_of)
    later = [int(run_id) for run_id, _ in after] if overlapping else sorted(last_of.values())
    return VersionRuns(base, tuple(later), overlapping, int(version), base in bound_in)


def _latest_scores(runs: VersionRuns, p: Params) -> str:
    """SELECT of each response revision's latest score row among ``runs`` (see ``VersionRuns``).

    Not a window over the rows (latest per revision): the window was most of the filter's time (docs/performance.md,
    "Figures behind the code"). The
    later runs are disjoint (one per batch) and replace the base run's rows for their revisions: an anti-join
    whose build side is their few rows.
    """
    # a run under a lens holds the rows of several versions: only the version's are read
    def mine(alias: str = "") -> str:  # bound where used (Params reuses it): no unused parameter without runs
        return "" if runs.version is None else f" AND {alias}profile_version = {p(int(runs.version))}"

    if runs.overlapping:  # any run may replace any earlier one: the latest per revision, by anti-join
        ids = ((runs.base,) if runs.base is not None else ()) + runs.later
        latest = f"SELECT s0.* FROM scores s0 WHERE s0.run_id IN {p.in_list(ids)}{mine('s0.')}"
        if len(ids) > 1:
            latest += (f" AND NOT EXISTS (SELECT 1 FROM scores s1 WHERE s1.run_id IN {p.in_list(ids[1:])} "
                       f"AND s1.run_id > s0.run_id AND s1.response_key = s0.response_key{mine('s1.')})")
        return latest
    parts = []
    if runs.later:
        parts.append(f"SELECT * FROM scores WHERE run_id IN {p.in_list(runs.later)}{mine()}")
    if runs.base is not None:
        replaced = (f" AND response_key NOT IN (SELECT response_key FROM scores WHERE run_id IN "
                    f"{p.in_list(runs.later)}{mine()})" if runs.later else "")
        parts.append(f"SELECT * FROM scores WHERE run_id = {p(runs.base)}{mine()}{replaced}")
    return " UNION ALL ".join(parts) or "SELECT * FROM scores WHERE false"


def as_current(store: Store, f: Filters) -> Filters:
    """``f`` without its profile version when every current score is under that version, else ``f``.

    Then the two views are the same rows: a response's current score is its latest score of all, so when it is
    under the version it is the latest under the version too; and a response without a current score is in
    neither. The current view reads the read model (and the overview its summary) instead of joining the
    version's score rows to it (seconds for the overview's figures under the version that was just published and
    run over everything; docs/performance.md). The test reads zone maps: after a full run every row group holds one
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
    whose view is kept (``register.readmodels.version_views``) covers them when its view has as many rows as there
    are current responses (the view holds current responses only, each once)."""
    if version in version_views.kept(store):
        scores_table, _ = version_views.tables(version)
        return bool(store.scalar(f"SELECT (SELECT count(*) FROM {scores_table}) = "
                                 "(SELECT count(*) FROM responses WHERE is_current)"))
    runs = version_runs(store, version)
    base = runs.base
    if base is None or runs.bound:  # a bound version scored the answers of its use cases only
        return False
    return bool(store.scalar("SELECT (SELECT max(response_key) FROM responses WHERE is_current) <= "
                             "(SELECT max(response_key) FROM scores WHERE run_id = ?)", [base]))


def same_set_unversioned(store: Store, f: Filters) -> Filters:
    """``f`` without its profile version where that leaves the filtered *set* of responses unchanged: no band is
    chosen (a band is read under the version) and the version covers every current response
    (``covers_every_current``); else ``f`` as it is. For figures that read the set and not its scores (the
    Authority figures judge each answer at its current score's as-of time under any version)."""
    f = as_current(store, f)
    if f.profile_version is None or f.bands or f.decisions or not covers_every_current(store, f.profile_version):
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
    the current one (``as_current``) or a kept older version's (``register.readmodels.version_views``) -- or ``f``
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
    assert f.profile_version is not None  # read_model leaves no read model only under a profile version
    return scored_set(f, p, runs=version_runs(store, f.profile_version), **kwargs)


# the columns ``scored_set`` reads from a relation given as its ``responses`` (``search.searched``,
# ``register.console.rag``)
RESPONSE_COLUMNS = ("response_id, revision, response_key, is_current, use_case, model, created_at, imported_at, "
                    "claim_count")
