"""The impact preview's fast path: scores recomputed from the stored score rows, without the claims.

A profile that differs from the one that produced the stored scores only in weights, bands or the
no-claims action (``hri_core.profile.rescore_fields`` is empty) scores every response from what its
score row and its fired floors hold: ``hri = max(min(1, sum_k w_k s_k), phi)`` over the stored s_f..s_h
with phi the largest fired floor value (``score_floors``), then the band, the band's action (the
no-claims action without claims, ``review`` for a response that failed closed, whose HRI is 1), raised
by the strictest ``min_action`` among its fired floors. The SQL repeats ``scorer.score_select``'s
expressions in the same order over the same doubles, so the numbers are equal, not merely close.

Exact only when the stored rows are what the full path would compute: every current row scored by the
DuckDB scorer (not imported from Spark, whose arithmetic may differ in the last bit) in runs that
recorded the fingerprint of the stored profile version they name, all at one as-of time, one current
row per current response (of its revision; against the stored scores a response without one is left
out, as the full rescore's join leaves it out) and its floors in step. ``plan`` checks the runs before
anything is computed, ``settle`` the rows after; either says why not, and the caller rescores in full.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from hri_core import DIMENSIONS, ScoringProfile
from hri_core.models import ensure_utc
from hri_core.profile import ACTION_SEVERITY, ACTIONS, RECOMPUTABLE_FIELDS, SCORE_DECIMALS, Band, rescore_fields
from register.db.sql import Params
from register.db.store import Cursor, Store
from register.scoring.profiles import get_profile
from register.scoring.scorer import DIM_COLUMNS, FAILED_ACTION
from register.scoring.spark_exchange import SPARK_SCOPE

__all__ = ["METHOD_FULL", "METHOD_STORED", "Names", "StoredBasis", "plan", "settle", "stored_select"]

METHOD_STORED = "stored dimension scores"
METHOD_FULL = "full rescore"


@dataclass(frozen=True)
class StoredBasis:
    """The one profile and as-of time behind every current stored score, when there is one."""

    profile: ScoringProfile
    as_of: datetime


@dataclass(frozen=True)
class Names:
    """The band and action names a preview's table codes as numbers (1-based positions; 0 never occurs).

    ``actions`` starts with ``ACTIONS`` in order of severity, so that an action's code is its severity + 1.
    ``read`` adds the names stored in the read model, so that every stored band and action has a code."""

    bands: tuple[str, ...]
    actions: tuple[str, ...]

    @classmethod
    def read(cls, cur: Cursor, profiles: Sequence[ScoringProfile | None]) -> Names:
        bands = [b.name for profile in profiles if profile is not None for b in profile.bands]
        # an aggregate without GROUP BY has one row
        stored = cur.row("SELECT list(DISTINCT band) AS bands, list(DISTINCT action) AS actions FROM current_scores",
                         what="the stored bands and actions")
        return cls(tuple(dict.fromkeys([*bands, *sorted(stored["bands"] or [])])),
                   tuple(dict.fromkeys([*ACTIONS, *sorted(stored["actions"] or [])])))

    def action(self, name: str) -> int:
        return self.actions.index(name) + 1

    def band_code_sql(self, column: str, p: Params) -> str:
        return f"list_position({p(list(self.bands))}::VARCHAR[], {column})"

    def action_code_sql(self, column: str, p: Params) -> str:
        return f"list_position({p(list(self.actions))}::VARCHAR[], {column})"


def _runs(store: Store, cur: Cursor) -> ScoringProfile | str:
    """The one stored profile version behind every current score, or why there is none (cheap: reads the
    current scores' run ids, then the few runs)."""
    row = cur.row(  # an aggregate without GROUP BY has one row
        "SELECT count(*) AS runs, min(profile_version) AS v_min, max(profile_version) AS v_max, "
        "count(*) FILTER (scope = $spark) AS spark, count(*) FILTER (profile_fingerprint IS NULL) AS unprinted, "
        "count(DISTINCT profile_fingerprint) AS prints, min(profile_fingerprint) AS print "
        "FROM score_runs WHERE run_id IN (SELECT DISTINCT run_id FROM scores WHERE is_current)",
        {"spark": SPARK_SCOPE}, what="the current scores' runs")
    if not row["runs"]:
        return "no current response has a stored score"
    if row["v_min"] != row["v_max"]:
        return f"the stored scores come from profile versions {row['v_min']} to {row['v_max']}"
    if row["spark"]:
        return "some stored scores were imported from a Spark job"
    if row["unprinted"] or row["prints"] != 1:
        return "some stored scores come from runs that did not record their profile's fingerprint"
    profile = get_profile(store, int(row["v_min"]))
    if profile.fingerprint() != row["print"]:
        return f"the stored scores were computed with parameters other than version {profile.version}'s"
    return profile


def plan(store: Store, cur: Cursor, draft: ScoringProfile, baseline: ScoringProfile | None,
         as_of: datetime | None) -> StoredBasis | str:
    """The stored basis the preview of ``draft`` against ``baseline`` (None: the stored scores) can be
    computed from, or why it must rescore every response. Only the cheap checks: whether the stored rows
    cover the current responses is seen in the recomputed rows themselves (``settle``)."""
    scored = _runs(store, cur)
    if isinstance(scored, str):
        return scored
    for role, profile in (("draft", draft), ("baseline", baseline)):
        changed = rescore_fields(profile, scored) if profile is not None else ()
        if changed:
            return (f"the {role} changes {', '.join(changed)} relative to version {scored.version}, "
                    "which produced the stored scores")
    # every score row carries its run's as-of time: the scores, not the runs, since a run may be partly current
    times = cur.query_row("SELECT min(as_of), max(as_of) FROM scores WHERE is_current",
                          what="the current scores' as-of times")
    if times[0] != times[1]:
        return "the stored scores were computed at different as-of times"
    stored_at = ensure_utc(times[0])
    if as_of is not None and ensure_utc(as_of) != stored_at:
        return f"the preview is as of another time than the stored scores ({stored_at:%Y-%m-%d %H:%M} UTC)"
    return StoredBasis(scored, stored_at)


def settle(cur: Cursor, table: str, with_baseline_profile: bool) -> str:
    """Check the rows ``stored_select`` wrote into ``table``; an empty string when they stand in for a full
    rescore, else why not. A current response without a current score of its revision is not in ``table``:
    against the stored scores a full rescore leaves it out too, against a profile it would be scored.

    ``table`` is an identifier generated by the caller, never user text.
    """
    # the table's keys are the current responses' exactly when the counts and the sums of the keys' hashes agree
    # (a duplicate with a missing response elsewhere keeps the count, not the sum); only when they differ is
    # the exact distinct count needed, to tell a duplicate from a response without a score (the distinct count
    # costs many times the sums: docs/performance.md)
    row = cur.one(f"SELECT count(*) AS n, sum(hash(response_key)::HUGEINT) AS sum_hash, "
                  f"count(*) FILTER (stale) AS stale FROM {table}")
    current = cur.one("SELECT count(*) AS n, sum(hash(response_key)::HUGEINT) AS sum_hash FROM responses "
                      "WHERE is_current")
    assert row is not None and current is not None  # aggregates without GROUP BY have one row
    if row["stale"]:
        return "some stored scores disagree with their recorded floors"
    if (row["n"], row["sum_hash"]) == (current["n"], current["sum_hash"]):
        return ""
    if cur.scalar(f"SELECT count(DISTINCT response_key) FROM {table}") != row["n"]:
        return "some responses have more than one current stored score"
    if with_baseline_profile:
        return "some current responses have no current stored score"
    return ""


def _base_select(basis: StoredBasis, p: Params) -> str:
    """Every current response's current stored row of its revision, with its floors' phi and strictest
    minimum action.

    ``stale`` marks a row whose ``floors_fired`` disagrees with its ``score_floors`` rows (a record
    edited by hand): the caller falls back to a full rescore when any row is stale.
    """
    profile = basis.profile
    dims = ", ".join(f"s.{c}" for c in DIM_COLUMNS.values())
    # the current responses with their current score: the console's read model (register.readmodels.current_scores)
    # holds exactly that join, narrow and without string keys to match (the join was most of this preview's
    # time); a current response without a current score of its revision is not in it
    rows = (f"SELECT s.run_id, s.response_key, {dims}, s.score, s.band, s.action, "
            f"s.no_claims, s.scoring_failure IS NOT NULL AS failed, s.floors_fired FROM current_scores s")
    if not profile.floors:  # nothing can have fired
        return (f"SELECT *, 0.0 AS phi, NULL::BIGINT AS ma_sev, floors_fired <> 0 AS stale FROM ({rows})")
    ma_rules = [r for r in profile.floors if r.min_action is not None]
    ma = ("max(CASE " + " ".join(f"WHEN f.rule_id = {p(r.rule_id)} THEN {p(ACTION_SEVERITY[r.min_action])}"
                                 for r in ma_rules if r.min_action is not None) + " END)::BIGINT"
          if ma_rules else "NULL::BIGINT")
    return f"""
SELECT c.*, coalesce(fl.phi, 0.0) AS phi, fl.ma_sev, c.floors_fired <> coalesce(fl.n, 0) AS stale
FROM ({rows}) c LEFT JOIN (
    SELECT f.run_id, f.response_key, max(f.value) AS phi, {ma} AS ma_sev, count(*) AS n
    FROM score_floors f WHERE f.run_id IN (SELECT DISTINCT run_id FROM current_scores)
    GROUP BY ALL) fl ON fl.run_id = c.run_id AND fl.response_key = c.response_key"""


def _rescored(profile: ScoringProfile, p: Params, prefix: str, names: Names) -> list[str]:
    """Layers of columns (``{prefix}score``, ``{prefix}band``, ``{prefix}action``) that score one stored
    row under ``profile``, written as ``scorer.score_select`` writes them (same operations, same order), the
    band and action as their codes in ``names`` (1-based positions)."""
    x = prefix
    weighted = " + ".join(f"{p(profile.weights[d])} * {DIM_COLUMNS[d]}" for d in DIMENSIONS)
    bands = profile.bands

    def case(code: Callable[[Band], int]) -> str:
        if len(bands) == 1:
            return p(code(bands[0]))
        return ("CASE " + " ".join(f"WHEN {x}score9 <= {p(b.upper)} THEN {p(code(b))}" for b in bands[:-1])
                + f" ELSE {p(code(bands[-1]))} END")
    band_code, action_code = (lambda b: names.bands.index(b.name) + 1), (lambda b: names.actions.index(b.action) + 1)
    # the actions' codes are their severities + 1 (``Names.actions`` starts with ACTIONS in order): a minimum
    # action of severity ma_sev escalates a band action of a lower one to code ma_sev + 1
    return [
        f"CASE WHEN failed THEN 1.0 ELSE greatest(least(1.0, {weighted}), phi) END AS {x}hri",
        f"round(100.0 * {x}hri, {SCORE_DECIMALS}) AS {x}score9, 100.0 * {x}hri AS {x}score",
        f"{case(band_code)} AS {x}band, CASE WHEN failed THEN {p(names.action(FAILED_ACTION))} WHEN no_claims "
        f"THEN {p(names.action(profile.no_claims_action))} ELSE {case(action_code)} END AS {x}band_action",
        f"CASE WHEN NOT failed AND ma_sev IS NOT NULL AND ma_sev > {x}band_action - 1 "
        f"THEN ma_sev + 1 ELSE {x}band_action END AS {x}action",
    ]


def stored_select(basis: StoredBasis, draft: ScoringProfile, baseline: ScoringProfile | None, p: Params,
                  names: Names) -> str:
    """SELECT response_key, old_score, new_score, old_band, new_band, old_action, new_action: ``draft`` (new)
    and ``baseline`` (old; None: the stored score, band and action) recomputed from the stored rows, plus
    ``stale`` (see ``_base_select``; ``settle`` reads it). Bands and actions are their codes in ``names`` (the
    preview's table holds numbers, not strings: writing and comparing the names was a large share of it).
    Values bound through ``p``. Keyed by the revision's integer key: the few changed responses shown get their
    ids from the read model.

    A baseline that scores as the stored profile does (the same weights, bands and no-claims action: the usual
    preview of a draft against the active profile that produced the stored scores) is not recomputed: its
    score, band and action are the stored ones (the recomputation gives them exactly, by the same operations)."""
    if baseline is not None and all(getattr(baseline, name) == getattr(basis.profile, name)
                                    for name in RECOMPUTABLE_FIELDS):
        baseline = None
    layers = list(zip(_rescored(draft, p, "n_", names), _rescored(baseline, p, "o_", names) if baseline
                      else [""] * 4, strict=True))
    sql = _base_select(basis, p)
    for new, old in layers:
        sql = f"SELECT *, {new}{', ' + old if old else ''} FROM ({sql})"
    old_cols = ("o_score AS old_score, o_band AS old_band, o_action AS old_action" if baseline else
                f"score AS old_score, {names.band_code_sql('band', p)} AS old_band, "
                f"{names.action_code_sql('action', p)} AS old_action")
    return (f"SELECT response_key, {old_cols}, n_score AS new_score, n_band AS new_band, "
            f"n_action AS new_action, stale FROM ({sql})")
