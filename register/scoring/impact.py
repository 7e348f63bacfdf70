"""Impact preview: what a draft profile would change if it were published.

Called by the profiles page (through ``ui`` helpers) and ``benchmarks/bench_impact.py``. Every current
response is scored under the draft and under a baseline -- the active profile scored at the same
as-of time (default, like for like), or the stored current scores -- in one set-based statement
(two ``scorer.score_select`` SELECTs sharing one ``Params``, joined on the response), materialised
once in a temp table of the operation's cursor; the band transition matrix, the action changes, the
changed responses and the score distributions are aggregates over that table. Nothing is written.

A draft that differs from the profile behind the stored scores only in weights, bands or the no-claims
action is previewed from the stored score rows instead (``register.scoring.impact_stored``: no claim is
read, the same numbers); ``ImpactPreview.method`` says which way a preview was computed.

Per use case (``register.scoring.lenses``): a draft a lens version binds (pending or in force) is previewed over the
answers of those use cases only, against their stored current scores (the lens they are under now); a draft no
lens names would become the default, so it is previewed over the answers of the use cases no lens binds to a profile
of their own. ``ImpactPreview.limited_to`` says which.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pandas as pd

from hri_core import ScoringProfile
from hri_core.models import ensure_utc
from register.db.sql import Params
from register.db.store import Cursor, Store, utc_now
from register.errors import RegisterError
from register.scoring.impact_stored import (
    METHOD_FULL,
    METHOD_STORED,
    Names,
    StoredBasis,
    plan,
    settle,
    stored_select,
)
from register.scoring.lenses import bound_use_cases, draft_use_cases
from register.scoring.profiles import active_profile
from register.scoring.scorer import score_select

__all__ = ["ImpactPreview", "impact_preview"]


@dataclass(frozen=True)
class ImpactPreview:
    """The comparison of a draft with its baseline over every current response.

    ``transitions``: old_band, new_band, responses (every non-empty cell of the matrix);
    ``action_transitions``: old_action, new_action, responses; ``changed``: the responses whose band,
    action or score changed, largest score change first (at most ``changed_limit`` rows);
    ``histogram``: bin_lower, bin_upper, old, new (counts per score bin).
    """

    draft_version: int
    baseline: str
    as_of: datetime
    total: int
    transitions: pd.DataFrame
    action_transitions: pd.DataFrame
    band_changes: int
    action_changes: int
    score_changes: int
    changed: pd.DataFrame
    histogram: pd.DataFrame
    mean_old: float | None
    mean_new: float | None
    median_old: float | None
    median_new: float | None
    method: str = METHOD_FULL  # METHOD_STORED when recomputed from the stored score rows
    method_note: str = ""  # why the full rescore, when the stored rows could not stand in for it
    limited_to: str = ""  # the answers previewed, when not every current one (the draft's use cases, or the rest)

    def method_line(self) -> str:
        """One sentence on how the preview was computed, e.g. for the profiles page."""
        if self.method == METHOD_STORED:
            return "Computed from the stored dimension scores (the draft changes only weights, bands or actions)."
        if self.limited_to:  # a draft a lens binds, or one that would be the default of the use cases left
            return f"Full rescore of {self.limited_to} only."
        return f"Full rescore of every response{': ' + self.method_note if self.method_note else ''}."

    def matrix(self) -> dict[tuple[str, str], int]:
        """``{(old_band, new_band): responses}``."""
        return {(o, n): int(c) for o, n, c in self.transitions.itertuples(index=False)}

    def action_moves(self, old_action: str, new_action: str) -> int:
        """How many responses move from ``old_action`` to ``new_action`` (e.g. caution -> review)."""
        rows = self.action_transitions[(self.action_transitions.old_action == old_action)
                                       & (self.action_transitions.new_action == new_action)]
        return int(rows.responses.sum())

    def action_lines(self) -> list[str]:
        """Sentences such as ``"37 caution -> review"`` for every action change, largest first."""
        moved = self.action_transitions[self.action_transitions.old_action != self.action_transitions.new_action]
        moved = moved.sort_values(["responses", "old_action", "new_action"], ascending=[False, True, True])
        return [f"{int(c):,} {o} -> {n}" for o, n, c in moved.itertuples(index=False)]

    def transition_lines(self) -> list[str]:
        """Sentences such as ``"312 Medium -> High"`` for every band change, largest first."""
        moved = self.transitions[self.transitions.old_band != self.transitions.new_band]
        moved = moved.sort_values(["responses", "old_band", "new_band"], ascending=[False, True, True])
        return [f"{int(c):,} {o} -> {n}" for o, n, c in moved.itertuples(index=False)]


def impact_preview(store: Store, draft: ScoringProfile, *, as_of: datetime | None = None,
                   baseline: ScoringProfile | None | str = "active", changed_limit: int = 200,
                   bin_width: float = 5.0, from_stored: bool = True,
                   progress: Callable[[float, str], None] | None = None) -> ImpactPreview:
    """Compare ``draft`` with ``baseline`` over every current response (see the module docstring).

    ``baseline``: a profile (scored at ``as_of`` like the draft), ``"active"`` (the active profile,
    the default) or ``"stored"`` (the current stored scores, whatever profile and as-of produced them).
    When the stored scores allow it (``register.scoring.impact_stored.plan``: one profile version and
    as-of time behind them all, and the draft and baseline differ from that version only in weights,
    bands or the no-claims action) both sides are recomputed from the stored rows instead, with the
    same result; without ``as_of`` the preview is then as of the stored scores' time. ``method`` on the
    result says which way it went, and why not the fast way. ``from_stored=False`` always rescores (the
    tests and the benchmark compare the two ways). ``progress(fraction, what)`` hears how far the scoring
    statement is, every half second (DuckDB's own estimate; at scale a full rescore of both sides takes long
    enough to need it: docs/performance.md).
    """
    cases, keys, limited_to = _lens_limit(store, draft)
    if cases is not None:
        # the draft's use cases: what they are scored under now is their stored score (their lens), never the
        # default's; the stored path reads every current score, so the limited preview rescores
        if isinstance(baseline, str) and baseline == "active" and draft_use_cases(store, draft.version):
            baseline = "stored"
        from_stored = False
    if not (isinstance(changed_limit, int) and 0 <= changed_limit <= 100_000):
        raise RegisterError("changed_limit must be an integer between 0 and 100000")
    if not (isinstance(bin_width, (int, float)) and 0 < bin_width <= 100):
        raise RegisterError("bin_width must be a number in (0, 100]")
    base: ScoringProfile | None  # None: the stored current scores
    if isinstance(baseline, str) and baseline == "stored":
        base, label = None, "stored current scores"
    else:
        chosen = active_profile(store) if isinstance(baseline, str) and baseline == "active" else baseline
        if not isinstance(chosen, ScoringProfile):
            raise RegisterError("baseline must be a profile, 'active' or 'stored'")
        base, label = chosen, f"version {chosen.version} ({chosen.name})"
    table = f"_impact_{uuid.uuid4().hex[:12]}"  # generated here, never user text
    with store.cursor() as cur:
        # one snapshot: the stored rows the plan checked are the rows the fast path reads
        cur.execute("BEGIN TRANSACTION")
        try:
            basis = (plan(store, cur, draft, base, as_of) if from_stored else "asked for a full rescore"
                     if cases is None else f"limited to {limited_to}: their answers are scored")
            method, note = METHOD_FULL, basis if isinstance(basis, str) else ""
            names = Names.read(cur, (draft, base))
            if isinstance(basis, StoredBasis):
                p = Params()
                cur.execute_watched(f"CREATE TEMP TABLE {table} AS {stored_select(basis, draft, base, p, names)}",
                                    p.values,
                                    _told(progress, "recomputing from the stored dimension scores"))
                note = settle(cur, table, base is not None)
                if note:
                    cur.execute(f"DROP TABLE {table}")
                else:
                    method, as_of = METHOD_STORED, basis.as_of
            if method == METHOD_FULL:
                as_of = ensure_utc(as_of or utc_now())
                p = Params()  # one namespace for both SELECTs: they join in one statement
                new_sql = score_select(draft, as_of, p, with_key=True)
                old_sql = (score_select(base, as_of, p, with_key=True) if base is not None else
                           "SELECT response_key, score, band, action FROM scores WHERE is_current")
                cur.execute_watched(f"""
CREATE TEMP TABLE {table} AS
SELECT n.response_key, o.score AS old_score, n.score AS new_score, {names.band_code_sql('o.band', p)} AS old_band,
       {names.band_code_sql('n.band', p)} AS new_band, {names.action_code_sql('o.action', p)} AS old_action,
       {names.action_code_sql('n.action', p)} AS new_action
FROM ({new_sql}) n JOIN ({old_sql}) o ON o.response_key = n.response_key{keys}""",
                                    {**p.values, **({"lens_cases": cases} if cases is not None else {})},
                                    _told(progress, "scoring every response under the draft and the baseline"))
            if progress:
                progress(1.0, "summarising")
            figures = _summarise(cur, table, changed_limit, bin_width, names)
        finally:
            cur.execute("ROLLBACK")  # nothing was written; the temp table goes with it
    assert as_of is not None  # set on both paths
    return ImpactPreview(draft_version=draft.version, baseline=label, as_of=as_of, method=method,
                         method_note=note, limited_to=limited_to, **figures)


def _lens_limit(store: Store, draft: ScoringProfile) -> tuple[list[str] | None, str, str]:
    """The use cases a preview of ``draft`` covers: (the list bound as ``$lens_cases``, the condition on
    ``n.response_key``, the words), or (None, "", "") for every current answer (no lens binds a profile)."""
    named = draft_use_cases(store, draft.version)
    if named is not None:
        return (list(named), " WHERE n.response_key IN (SELECT response_key FROM responses WHERE is_current "
                "AND list_contains($lens_cases, use_case))", "the answers of use cases " + ", ".join(named))
    bound = sorted(bound_use_cases(store))
    if not bound:
        return None, "", ""
    return (bound, " WHERE n.response_key IN (SELECT response_key FROM responses WHERE is_current "
            "AND NOT coalesce(list_contains($lens_cases, use_case), false))",
            "the answers of use cases no lens binds to a profile (not " + ", ".join(bound) + ")")


def _told(progress: Callable[[float, str], None] | None, what: str) -> Callable[[float], None] | None:
    """``progress`` for one statement: its fraction, with what it is doing."""
    return None if progress is None else (lambda fraction: progress(fraction, what))


def _summarise(cur: Cursor, table: str, changed_limit: int, bin_width: float, names: Names) -> dict[str, Any]:
    """The preview's figures over the temp table of old and new scores, bands and actions (their codes in
    ``names``): ``ImpactPreview``'s fields, with the names."""
    changed_where = ("old_band <> new_band OR old_action <> new_action "
                     "OR abs(new_score - old_score) > 1e-9")
    summary = cur.row(
        f"SELECT count(*) AS total, count(*) FILTER (old_band <> new_band) AS band_changes, "
        f"count(*) FILTER (old_action <> new_action) AS action_changes, "
        f"count(*) FILTER ({changed_where}) AS score_changes, avg(old_score) AS mean_old, "
        f"avg(new_score) AS mean_new, median(old_score) AS median_old, median(new_score) AS median_new "
        f"FROM {table}", what="the impact preview's summary")  # an aggregate without GROUP BY has one row
    transitions = _named(cur.frame(f"SELECT old_band, new_band, count(*)::BIGINT AS responses FROM {table} "
                                   f"GROUP BY ALL"), names.bands)
    action_transitions = _named(cur.frame(f"SELECT old_action, new_action, count(*)::BIGINT AS responses "
                                          f"FROM {table} GROUP BY ALL"), names.actions)
    # the largest changes by key first, then their ids (ties at the cut kept, so that the order by id is exact)
    changed = cur.frame(
        f"""WITH t AS (SELECT *, abs(new_score - old_score) AS moved FROM {table} WHERE {changed_where}),
            cut AS (SELECT min(moved) AS least_moved FROM (SELECT moved FROM t ORDER BY moved DESC LIMIT $limit))
        SELECT r.response_id, r.revision, t.old_score, t.new_score, t.new_score - t.old_score AS delta,
               $bands[t.old_band] AS old_band, $bands[t.new_band] AS new_band, $actions[t.old_action] AS old_action,
               $actions[t.new_action] AS new_action
        FROM t JOIN responses r ON r.response_key = t.response_key
        WHERE t.moved >= (SELECT least_moved FROM cut) ORDER BY t.moved DESC, r.response_id LIMIT $limit""",
        {"limit": changed_limit, "bands": list(names.bands), "actions": list(names.actions)})
    bins = max(1, int(round(100.0 / bin_width)))
    histogram = cur.frame(
        f"""WITH b AS (SELECT range AS k FROM range($bins)),
            o AS (SELECT least($bins - 1, floor(old_score / $w))::BIGINT AS k, count(*) AS c
                  FROM {table} GROUP BY ALL),
            n AS (SELECT least($bins - 1, floor(new_score / $w))::BIGINT AS k, count(*) AS c
                  FROM {table} GROUP BY ALL)
        SELECT b.k * $w AS bin_lower, least(100.0, (b.k + 1) * $w) AS bin_upper,
               coalesce(o.c, 0)::BIGINT AS old, coalesce(n.c, 0)::BIGINT AS new
        FROM b LEFT JOIN o USING (k) LEFT JOIN n USING (k) ORDER BY b.k""",
        {"bins": bins, "w": float(bin_width)})
    return {"total": int(summary["total"]), "transitions": transitions, "action_transitions": action_transitions,
            "band_changes": int(summary["band_changes"]), "action_changes": int(summary["action_changes"]),
            "score_changes": int(summary["score_changes"]), "changed": changed, "histogram": histogram,
            "mean_old": summary["mean_old"], "mean_new": summary["mean_new"],
            "median_old": summary["median_old"], "median_new": summary["median_new"]}


def _named(frame: pd.DataFrame, names: tuple[str, ...]) -> pd.DataFrame:
    """A transitions frame (old code, new code, responses) with the codes' names, ordered by the names."""
    old, new = frame.columns[:2]
    for column in (old, new):
        frame[column] = [names[int(code) - 1] for code in frame[column]]
    return frame.sort_values([old, new], ignore_index=True)
