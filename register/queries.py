"""Read queries for the console pages (overview, response explorer, detail) and reports.

Called by ``ui`` helpers (cached) and by ``register.review``; pages never hold SQL. Every query is
built from one fragment, ``scored_set``: the current responses joined to the score selected by the
``Filters`` (the current score, or the latest score under one profile version), restricted by the
filters. Every filter value is a bound parameter; the only identifiers taken from callers (sort
column, group-by column) come from allow-lists. Aggregations run in DuckDB: a query returns the
aggregate, never the table.

Band names, band order, weights and "high or critical" come from the scoring profile (passed in or
read from the register), never from constants here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any

import pandas as pd

from hri_core import DIMENSIONS

from .profiles import active_profile
from .store import Store, utc_now

__all__ = [
    "EXPORT_COLUMNS", "Filters", "GROUP_COLUMNS", "PAGE_COLUMNS", "QUEUE_ACTIONS", "SORT_COLUMNS",
    "band_counts", "band_mix_by_week", "dimension_contributions", "export_rows", "filter_options",
    "high_share_by", "kpis", "queue_stats", "response_detail", "responses_page", "score_histogram",
    "scored_responses", "scored_set", "search_keys", "totals",
]

# Actions that put a response in the review queue (a response with no claims is queued too). These
# are the action vocabulary of ``hri_core.profile.ACTIONS``; which score maps to which action is the
# profile's business.
QUEUE_ACTIONS = ("review", "block")

PAGE_COLUMNS = ("response_id", "revision", "use_case", "model", "created_at", "score", "band", "action", "hri_add",
                "hri", "floors_fired", "decisive_claim_id", "no_claims", "claim_count", "profile_version", "as_of")
EXPORT_COLUMNS = PAGE_COLUMNS + ("question", "answer")

# sort key -> SQL expression over the scored set (allow-list: nothing else reaches ORDER BY).
# Bands sort by score: within a profile the bands are score ranges, so that is their risk order.
SORT_COLUMNS = {
    "score": "score", "hri": "hri", "hri_add": "hri_add", "band": "score", "action": "action",
    "created_at": "created_at", "response_id": "response_id", "revision": "revision", "use_case": "use_case",
    "model": "model", "floors_fired": "floors_fired", "claim_count": "claim_count", "no_claims": "no_claims",
    "decisive_claim_id": "decisive_claim_id", "profile_version": "profile_version", "as_of": "as_of",
}
GROUP_COLUMNS = {"use_case": "use_case", "model": "model"}  # high_share_by's allow-list

_DIM_COLUMNS = tuple(f"s_{d.value.lower()}" for d in DIMENSIONS)
_MAX_BINS = 1000
# The Monday (UTC) of a TIMESTAMPTZ's ISO week by integer arithmetic from Monday 1970-01-05: equal to
# date_trunc('week', ...) in UTC and about 20x cheaper (date_trunc on TIMESTAMPTZ goes through the
# ICU calendar, row by row).
_WEEK = ("(DATE '1970-01-05' + 7 * (floor((epoch_us(created_at) - 345600000000) / 604800000000.0))::INTEGER)")


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


class _Params:
    """Collects bound parameters under generated names (``$q1``, ``$q2`` ...)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def __call__(self, value: Any) -> str:
        name = f"q{len(self.values) + 1}"
        self.values[name] = value
        return f"${name}"

    def in_list(self, values) -> str:
        return "(" + ", ".join(self(v) for v in values) + ")"


def search_keys(search: str | None, p: _Params) -> str | None:
    """SELECT of the response_key of every current response whose question, answer or any claim's
    text contains ``search`` (case-insensitive, literal); None when there is nothing to search.

    ``contains(lower(x), lower(needle))`` rather than ``ILIKE '%..%' ESCAPE '\\'``: the text is a bound
    parameter and a plain substring test has no wildcards to escape (``%``, ``_`` and ``\\`` are
    literal by construction). It is also what DuckDB runs fastest: ``ILIKE ... ESCAPE`` goes through a
    generic matcher that cannot work on dictionary-compressed text (measured 15-30x slower on the
    claims table at 6M claims; see benchmarks/bench_console.py).
    """
    if search is None or not search.strip():
        return None
    needle = f"lower({p(search.strip())})"
    return (f"SELECT response_key FROM claims WHERE is_current AND contains(lower(text), {needle}) "
            f"UNION SELECT response_key FROM responses WHERE is_current "
            f"AND (contains(lower(question), {needle}) OR contains(lower(answer), {needle}))")


def _utc_midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.utc)


def scored_set(f: Filters, p: _Params, *, keys: str | None = None, text_columns: bool = False,
               single_run: int | None = None) -> str:
    """SELECT of the filtered current responses with their selected score (one row per response).

    Columns: response_id, revision, response_key, use_case, model, created_at, imported_at, claim_count,
    run_id, profile_version, as_of, s_f..s_h, hri_add, hri, score, band, action, no_claims,
    floors_fired, decisive_claim_id, decisive_rule_id (+ question, answer with ``text_columns``).
    ``keys``, when given, is a SELECT of response_key values (``search_keys``) the set is limited to.
    ``single_run``: the profile version's only score run, when it has one (``filtered_scores`` looks it
    up): a run scores a response once, so its rows need no latest-per-response window.
    """
    if f.profile_version is None:
        scores = "scores"
        score_cond = ["s.is_current"]
    elif single_run is not None:
        scores = "scores"
        score_cond = [f"s.run_id = {p(int(single_run))}", f"s.profile_version = {p(int(f.profile_version))}"]
    else:
        scores = (f"(SELECT * FROM scores WHERE profile_version = {p(int(f.profile_version))} "
                  "QUALIFY row_number() OVER (PARTITION BY response_id, revision ORDER BY run_id DESC) = 1)")
        score_cond = []
    cond = ["r.is_current", *score_cond]
    if f.date_from is not None:
        cond.append(f"r.created_at >= {p(_utc_midnight(f.date_from))}")
    if f.date_to is not None:
        cond.append(f"r.created_at < {p(_utc_midnight(f.date_to + timedelta(days=1)))}")
    if f.use_cases:
        cond.append(f"r.use_case IN {p.in_list(f.use_cases)}")
    if f.models:
        cond.append(f"r.model IN {p.in_list(f.models)}")
    if f.bands:
        cond.append(f"s.band IN {p.in_list(f.bands)}")
    if keys is not None:
        cond.append(f"r.response_key IN ({keys})")
    text = ", r.question, r.answer" if text_columns else ""
    return f"""
    SELECT r.response_id, r.revision, r.response_key, r.use_case, r.model, r.created_at, r.imported_at,
           r.claim_count, s.run_id, s.profile_version, s.as_of, {', '.join('s.' + c for c in _DIM_COLUMNS)},
           s.hri_add, s.hri, s.score, s.band, s.action, s.no_claims, s.floors_fired, s.decisive_claim_id,
           s.decisive_rule_id{text}
    FROM responses r JOIN {scores} s ON s.response_id = r.response_id AND s.revision = r.revision
    WHERE {' AND '.join(cond)}"""


def filtered_scores(store: Store, f: Filters, p: _Params, *, keys: str | None = None,
                    text_columns: bool = False) -> str:
    """``scored_set`` for ``f``, with the profile version's score runs looked up first.

    Under a profile version scored in one run (the usual case: a version is published, everything
    is rescored once) the latest score of each response is simply that run's row; a version with
    several runs takes the latest per response with a window, about 0.1 s more per query at 1M.
    """
    single_run = None
    if f.profile_version is not None:
        runs = store.query("SELECT run_id FROM score_runs WHERE profile_version = ?", [int(f.profile_version)])
        single_run = runs[0][0] if len(runs) == 1 else None
    return scored_set(f, p, keys=keys, text_columns=text_columns, single_run=single_run)


def flag_queued(p: _Params, source: str = "fr") -> str:
    """The rows of ``source`` (a ``scored_set``) with a boolean ``queued``: the review queue's one
    definition, shared by ``kpis``, ``queue_stats`` and ``register.review.review_queue`` so that their
    numbers always agree. Queued: the action asks for a person (``QUEUE_ACTIONS``) or the response has
    no claims, and nobody has decided on that revision yet.

    A LEFT JOIN on the (small) decisions table rather than a correlated NOT EXISTS: DuckDB turns the
    latter into a mark join over every row, about 3x slower at 1M responses.
    """
    return (f"SELECT {source}.*, ({source}.action IN {p.in_list(QUEUE_ACTIONS)} OR {source}.no_claims) "
            f"AND d.decision_id IS NULL AS queued FROM {source} LEFT JOIN review_decisions d "
            f"ON d.response_id = {source}.response_id AND d.revision = {source}.revision")


def age_days_expr(p: _Params, now: datetime, column: str) -> str:
    """Days from ``column`` to ``now`` (fractional)."""
    return f"(epoch_us({p(now)}::TIMESTAMPTZ) - epoch_us({column})) / 86400000000.0"


def queue_stats(store: Store, f: Filters | None = None, *, now: datetime | None = None) -> dict:
    """Size of the review queue and the age in days of its oldest response (None when empty).

    Queue age counts from the creation time, or the import time when a response has none.
    """
    p = _Params()
    oldest = age_days_expr(p, now or utc_now(), "min(coalesce(created_at, imported_at))")
    row = store.query_one(
        f"WITH fr AS ({filtered_scores(store, f or Filters(), p)}), q AS ({flag_queued(p)}) "
        f"SELECT count(*), {oldest} FROM q WHERE queued", p.values)
    return {"size": int(row[0]), "oldest_age_days": None if row[1] is None else float(row[1])}


def _band_names(store: Store, bands: tuple[str, ...] | None) -> tuple[str, ...]:
    return tuple(bands) if bands is not None else tuple(b.name for b in active_profile(store).bands)


def _as_list(value: Any) -> list | None:
    """A DuckDB list cell (numpy array) as a Python list; a missing one as None."""
    return None if value is None or isinstance(value, (float, type(pd.NA))) else [str(v) for v in value]


def _none_if_nan(value: Any) -> Any:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


# --- overview ---------------------------------------------------------------------------------------


def filter_options(store: Store) -> dict:
    """Choices for the filter bar: use cases, models, bands (active profile order), profile versions
    that have scores, and the range of creation dates of the current responses."""
    row = store.query_one("""
        SELECT list_sort(list(DISTINCT use_case) FILTER (WHERE use_case IS NOT NULL)),
               list_sort(list(DISTINCT model) FILTER (WHERE model IS NOT NULL)),
               min(created_at)::DATE, max(created_at)::DATE
        FROM responses WHERE is_current""")
    versions = [v for (v,) in store.query(
        "SELECT DISTINCT profile_version FROM score_runs WHERE responses_scored > 0 ORDER BY 1")]
    return {"use_cases": list(row[0] or []), "models": list(row[1] or []),
            "bands": list(_band_names(store, None)), "profile_versions": versions,
            "date_min": row[2], "date_max": row[3]}


def kpis(store: Store, f: Filters, *, now: datetime | None = None) -> dict:
    """Headline numbers of the filtered set.

    Keys: responses, claims, band_counts {band: n} (every band of the active profile, in its order, 0
    when none; a band name found only in older scores is appended), median_score, p95_score (None
    when empty), floors_fired (responses whose HRI a floor set), no_claims, queue_size,
    queue_oldest_age_days (the same numbers as ``queue_stats(store, f)``).
    """
    p = _Params()
    oldest = age_days_expr(p, now or utc_now(), "min(coalesce(created_at, imported_at)) FILTER (WHERE queued)")
    row = store.query_one(f"""
        WITH fr AS ({filtered_scores(store, f, p)}), q AS ({flag_queued(p)})
        SELECT count(*), coalesce(sum(claim_count), 0), quantile_cont(score, 0.5), quantile_cont(score, 0.95),
               count(*) FILTER (WHERE decisive_claim_id IS NOT NULL), count(*) FILTER (WHERE no_claims),
               histogram(band), count(*) FILTER (WHERE queued), {oldest}
        FROM q""", p.values)
    counts = {name: 0 for name in _band_names(store, None)}
    for band, n in (row[6] or {}).items():
        counts[band] = counts.get(band, 0) + int(n)
    return {"responses": int(row[0]), "claims": int(row[1]), "band_counts": counts,
            "median_score": _none_if_nan(row[2]), "p95_score": _none_if_nan(row[3]),
            "floors_fired": int(row[4]), "no_claims": int(row[5]),
            "queue_size": int(row[7]), "queue_oldest_age_days": None if row[8] is None else float(row[8])}


def band_mix_by_week(store: Store, f: Filters) -> pd.DataFrame:
    """Responses per ISO week (the Monday, a date, by UTC creation time) and band: week, band, n.

    Responses without a creation time have no place on the time axis and are left out. Rows are in
    week order, bands in the active profile's order (other band names last).
    """
    p = _Params()
    order = p(list(_band_names(store, None)))
    frame = store.query_df(f"""
        WITH fr AS ({filtered_scores(store, f, p)})
        SELECT {_WEEK} AS week, band, count(*) AS n
        FROM fr WHERE created_at IS NOT NULL
        GROUP BY week, band
        ORDER BY week, coalesce(list_position({order}, band), 1000), band""", p.values)
    frame["week"] = pd.Series([w.date() for w in frame["week"]], index=frame.index, dtype=object)
    return frame


def score_histogram(store: Store, f: Filters, bin_width: float = 5.0) -> pd.DataFrame:
    """Counts of scores in fixed bins over 0-100: bin_start, bin_end, n (every bin, zero counts too).

    Bins are [start, end); a score of exactly 100 goes in the last bin. Scores are compared rounded
    to 9 decimals, like band bounds (20.000000000000004 is 20).
    """
    if not (isinstance(bin_width, (int, float)) and 0 < bin_width <= 100) or isinstance(bin_width, bool):
        raise ValueError(f"bin_width must be a number in (0, 100], got {bin_width!r}")
    bins = math.ceil(100.0 / bin_width - 1e-9)
    if bins > _MAX_BINS:
        raise ValueError(f"bin_width {bin_width} gives {bins} bins; at most {_MAX_BINS} are allowed")
    p = _Params()
    w, nb = p(float(bin_width)), p(bins)
    return store.query_df(f"""
        WITH fr AS ({filtered_scores(store, f, p)}),
        b AS (SELECT least(floor(round(score, 9) / {w}), {nb} - 1)::INTEGER AS bin, count(*) AS n FROM fr GROUP BY 1)
        SELECT round(t.i * {w}, 9) AS bin_start, least(round((t.i + 1) * {w}, 9), 100.0) AS bin_end,
               coalesce(b.n, 0) AS n
        FROM range({nb}) t(i) LEFT JOIN b ON b.bin = t.i
        ORDER BY t.i""", p.values)


def dimension_contributions(store: Store, f: Filters, weights: dict) -> pd.DataFrame:
    """Per dimension (F, C, U, O, S, P, H): mean_score (mean s_k over the filtered responses), weight
    (w_k as passed in, normally the profile's) and mean_weighted (mean of w_k * s_k)."""
    by_letter = {getattr(k, "value", k): float(v) for k, v in weights.items()}
    letters = [d.value for d in DIMENSIONS]
    unknown = sorted(set(by_letter) - set(letters))
    missing = [d for d in letters if d not in by_letter]
    if unknown or missing:
        raise ValueError(f"weights must name each dimension {', '.join(letters)} once"
                         + (f"; unknown: {', '.join(map(str, unknown))}" if unknown else "")
                         + (f"; missing: {', '.join(missing)}" if missing else ""))
    p = _Params()
    parts = ", ".join(f"avg({col}), avg({p(by_letter[d])} * {col})" for d, col in zip(letters, _DIM_COLUMNS))
    row = store.query_one(f"WITH fr AS ({filtered_scores(store, f, p)}) SELECT {parts} FROM fr", p.values)
    return pd.DataFrame({
        "dimension": letters,
        "mean_score": [_none_if_nan(row[2 * i]) for i in range(len(letters))],
        "weight": [by_letter[d] for d in letters],
        "mean_weighted": [_none_if_nan(row[2 * i + 1]) for i in range(len(letters))],
    })


def high_share_by(store: Store, f: Filters, by: str, bands: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Per use case or model: key, n, high_or_critical, share.

    "High or critical" is the last two bands of ``bands`` (the profile's band names in order; the
    active profile's when None). ``by`` must be one of ``GROUP_COLUMNS``.
    """
    column = GROUP_COLUMNS.get(by) if isinstance(by, str) else None
    if column is None:
        raise ValueError(f"cannot group by {by!r}; choose one of {', '.join(GROUP_COLUMNS)}")
    top = _band_names(store, bands)[-2:]
    if not top:
        raise ValueError("bands must name at least one band")
    p = _Params()
    return store.query_df(f"""
        WITH fr AS ({filtered_scores(store, f, p)})
        SELECT {column} AS key, count(*) AS n, count(*) FILTER (WHERE band IN {p.in_list(top)}) AS high_or_critical,
               count(*) FILTER (WHERE band IN {p.in_list(top)}) / count(*) AS share
        FROM fr GROUP BY 1 ORDER BY 1 NULLS LAST""", p.values)


# --- response explorer ------------------------------------------------------------------------------


def _order_by(sort_by: str, descending: bool) -> str:
    expr = SORT_COLUMNS.get(sort_by) if isinstance(sort_by, str) else None
    if expr is None:
        raise ValueError(f"cannot sort by {sort_by!r}; choose one of {', '.join(SORT_COLUMNS)}")
    direction = "DESC" if descending else "ASC"
    return f"{expr} {direction} NULLS LAST, response_id, revision"  # a stable order for paging


def _check_window(limit: int, offset: int) -> None:
    for name, value in (("limit", limit), ("offset", offset)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be an integer >= 0, got {value!r}")


def responses_page(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                   descending: bool = True, limit: int = 50, offset: int = 0) -> tuple[pd.DataFrame, int]:
    """One page of the filtered responses (``PAGE_COLUMNS``) and the size of the whole filtered set.

    ``search`` is a case-insensitive literal substring of the question, the answer or any claim's
    text (``search_keys``). ``sort_by`` must be one of ``SORT_COLUMNS``.
    """
    order = _order_by(sort_by, descending)
    _check_window(limit, offset)
    p = _Params()
    keys = search_keys(search, p)
    columns = ", ".join(PAGE_COLUMNS)
    if keys is None:
        # two statements: a top-N over the join and a bare count are cheaper than one statement
        # that shares the join between them (measured at 1M responses)
        frame = store.query_df(f"WITH fr AS ({filtered_scores(store, f, p)}) SELECT {columns} FROM fr "
                               f"ORDER BY {order} LIMIT {p(limit)} OFFSET {p(offset)}", p.values)
        p2 = _Params()
        total = store.query_one(f"SELECT count(*) FROM ({filtered_scores(store, f, p2)})", p2.values)[0]
        return frame, int(total)
    # searching: the text scan is the cost, so it runs once (materialised keys) for page and total;
    # the LEFT JOIN keeps the total when the page is past the end
    frame = store.query_df(f"""
        WITH m AS MATERIALIZED ({keys}),
        fr AS NOT MATERIALIZED ({filtered_scores(store, f, p, keys="SELECT response_key FROM m")}),
        total AS (SELECT count(*) AS _total FROM fr),
        page AS (SELECT {columns} FROM fr ORDER BY {order} LIMIT {p(limit)} OFFSET {p(offset)})
        SELECT page.*, total._total FROM total LEFT JOIN page ON true
        ORDER BY {order}""", p.values)
    total = int(frame["_total"].iloc[0])
    frame = frame[frame["response_id"].notna()].drop(columns="_total").reset_index(drop=True)
    return frame, total


def export_rows(store: Store, f: Filters, *, search: str | None = None, sort_by: str = "score",
                descending: bool = True, limit: int = 100_000) -> pd.DataFrame:
    """The filtered view for CSV/Excel export: ``EXPORT_COLUMNS`` (the page's plus question, answer)."""
    order = _order_by(sort_by, descending)
    _check_window(limit, 0)
    p = _Params()
    keys = search_keys(search, p)
    return store.query_df(
        f"WITH fr AS ({filtered_scores(store, f, p, keys=keys, text_columns=True)}) "
        f"SELECT {', '.join(EXPORT_COLUMNS)} FROM fr ORDER BY {order} LIMIT {p(limit)}", p.values)


# --- one response -----------------------------------------------------------------------------------

_RESPONSE_FIELDS = ("response_id", "revision", "response_key", "is_current", "content_hash", "batch_id",
                    "imported_at", "use_case", "model", "created_at", "question", "answer", "stakes", "claim_count")
_SCORE_FIELDS = ("run_id", "response_id", "revision", "profile_version", "as_of", "is_current", *_DIM_COLUMNS,
                 "hri_add", "hri", "score", "band", "action", "no_claims", "total_criticality", "floors_fired",
                 "decisive_claim_id", "decisive_rule_id")


def response_detail(store: Store, response_id: str, revision: int | None = None) -> dict | None:
    """Everything the detail view shows about one response (its current revision unless ``revision``).

    None when the response (or that revision) is unknown. Keys: ``response`` (dict), ``score`` (dict of
    the revision's current score, or its latest when it is no longer current; None when unscored),
    ``claims``, ``floors`` (the floors that fired in that score's run), ``history`` (every score of
    the response, every revision and run, oldest run first), ``revisions`` (list of ints),
    ``decisions`` (review decisions, oldest first).
    """
    if revision is None:
        cond, params = "response_id = ? AND is_current", [response_id]
    else:
        cond, params = "response_id = ? AND revision = ?", [response_id, int(revision)]
    row = store.query_one(f"SELECT {', '.join(_RESPONSE_FIELDS)} FROM responses WHERE {cond}", params)
    if row is None:
        return None
    response = dict(zip(_RESPONSE_FIELDS, row))
    rev, key = response["revision"], response.pop("response_key")
    score_row = store.query_one(
        f"SELECT {', '.join(_SCORE_FIELDS)} FROM scores WHERE response_id = ? AND revision = ? "
        "ORDER BY is_current DESC, run_id DESC LIMIT 1", [response_id, rev])
    score = None if score_row is None else dict(zip(_SCORE_FIELDS, score_row))
    claims = store.query_df(
        "SELECT claim_idx, claim_id, text, labels, dimensions, criticality, source_id, span, feedback_at, "
        "feedback_count, feedback_resolved FROM claims WHERE response_key = ? ORDER BY claim_idx", [key])
    claims["labels"] = pd.Series([_as_list(v) for v in claims["labels"]], index=claims.index, dtype=object)
    claims["dimensions"] = pd.Series([_as_list(v) for v in claims["dimensions"]], index=claims.index, dtype=object)
    floors = store.query_df(
        "SELECT claim_id, rule_id, label, criticality, value FROM score_floors "
        "WHERE run_id = ? AND response_id = ? AND revision = ? ORDER BY claim_idx, rule_id",
        [None if score is None else score["run_id"], response_id, rev])
    history = store.query_df(
        "SELECT run_id, revision, profile_version, as_of, score, band, action, hri_add, is_current FROM scores "
        "WHERE response_id = ? ORDER BY run_id, revision", [response_id])
    revisions = [r for (r,) in store.query(
        "SELECT revision FROM responses WHERE response_id = ? ORDER BY revision", [response_id])]
    decisions = store.query_df(
        "SELECT decision_id, revision, decision, reason, decided_by, decided_role, decided_at, score_at_decision, "
        "band_at_decision, action_at_decision, profile_version FROM review_decisions WHERE response_id = ? "
        "ORDER BY decided_at, decision_id", [response_id])
    return {"response": response, "score": score, "claims": claims, "floors": floors, "history": history,
            "revisions": revisions, "decisions": decisions}


# --- foundation view (app.py) -------------------------------------------------------------------------


def scored_responses(store: Store, *, limit: int = 200, offset: int = 0) -> pd.DataFrame:
    """Current responses with their current score, riskiest first (DataFrame)."""
    frame, _ = responses_page(store, Filters(), limit=limit, offset=offset)
    return frame


def band_counts(store: Store) -> dict[str, int]:
    """Number of current responses per band of their current score."""
    p = _Params()
    return dict(store.query(f"SELECT band, count(*) FROM ({scored_set(Filters(), p)}) GROUP BY band", p.values))


def totals(store: Store) -> dict[str, int]:
    """Headline counts: responses, claims, scored responses, open quarantine, no-claims responses."""
    row = store.query_one("""
        SELECT (SELECT count(*) FROM responses WHERE is_current),
               (SELECT coalesce(sum(claim_count), 0) FROM responses WHERE is_current),
               (SELECT count(*) FROM scores WHERE is_current),
               (SELECT count(*) FROM quarantine WHERE status = 'open'),
               (SELECT count(*) FROM scores WHERE is_current AND no_claims)
    """)
    keys = ("responses", "claims", "scored", "quarantined", "no_claims")
    return dict(zip(keys, (int(v) for v in row)))
