"""Criticality sensitivity: what the claims' criticality weights decide (HRI paper, section XVI: "test the role
of criticality weights").

Every current answer is scored twice under the active profile at one as-of time, as the impact preview scores a
draft (``register.scoring.impact``; ``register.scoring.scorer.score_select``, the register's own scoring
statement): once as stored, once with every claim's criticality v_i changed -- flattened to 1 (every claim
weighs the same and no floor keyed on a higher criticality fires), or shifted per claim category (e.g. legal +2,
general -1), each result kept within 1 .. ``MAX_CRITICALITY``. The band and action transitions from the first to
the second are counted over the answers the console's filters select. A claim stored outside those bounds keeps its
criticality, so that it still fails closed (``register.scoring.claim_conditions``).

Nothing is written: the changed criticalities are a temporary view named ``claims`` in the operation's own cursor,
which DuckDB resolves before the register's table of that name (temporary objects come first in its search path),
so the scoring statement reads them without a line of it changing; the view and the scores go with the cursor's
rolled-back transaction. The action is the score's (its band's, raised by a floor's minimum action), the one the
impact preview compares: the answer's full decision also reads Authority and Mitigation, which criticality does not
change except through which failed check counts as serious.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from hri_core import ScoringProfile
from hri_core.models import MAX_CRITICALITY, ensure_utc
from hri_core.profile import ACTIONS
from hri_core.vocabulary import CATEGORIES
from register.console.queries.filters import Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Cursor, Store, utc_now
from register.errors import RegisterError
from register.scoring.profiles import active_profile
from register.scoring.scorer import score_select

__all__ = ["NO_CATEGORY", "CriticalitySensitivity", "criticality_sensitivity", "parse_shifts"]

NO_CATEGORY = "(none)"  # the shift key of claims without a category


@dataclass(frozen=True)
class CriticalitySensitivity:
    """The band and action transitions of the answers when criticality changes as ``scenario`` says.

    ``band_transitions``: from_band, to_band, answers (every non-empty cell, bands in the profile's order);
    ``action_transitions``: from_action, to_action, answers (actions by severity).
    """

    scenario: str
    profile_version: int
    as_of: datetime
    answers: int
    band_changes: int
    action_changes: int
    mean_score_before: float | None
    mean_score_after: float | None
    band_transitions: pd.DataFrame
    action_transitions: pd.DataFrame
    shifts: dict[str, int] = field(default_factory=dict)

    def band_matrix(self, bands: tuple[str, ...]) -> pd.DataFrame:
        """The band transitions as a square matrix: rows from, columns to, zeros where no answer moved."""
        return _square(self.band_transitions, "from_band", "to_band", bands)

    def action_matrix(self) -> pd.DataFrame:
        """The action transitions as a square matrix over ``ACTIONS`` (rows from, columns to)."""
        return _square(self.action_transitions, "from_action", "to_action", ACTIONS)

    def as_json(self) -> dict:
        """The figures as plain JSON values (the command line's ``--json``)."""
        return {"scenario": self.scenario, "shifts": self.shifts, "profile_version": self.profile_version,
                "as_of": self.as_of.isoformat(), "answers": self.answers, "band_changes": self.band_changes,
                "action_changes": self.action_changes, "mean_score_before": self.mean_score_before,
                "mean_score_after": self.mean_score_after,
                "band_transitions": [{"from": a, "to": b, "answers": int(n)}
                                     for a, b, n in self.band_transitions.itertuples(index=False)],
                "action_transitions": [{"from": a, "to": b, "answers": int(n)}
                                       for a, b, n in self.action_transitions.itertuples(index=False)]}


def _square(frame: pd.DataFrame, row: str, column: str, order: tuple[str, ...]) -> pd.DataFrame:
    names = list(dict.fromkeys([*order, *frame[row], *frame[column]]))
    matrix = frame.pivot_table(index=row, columns=column, values="answers", aggfunc="sum", fill_value=0)
    return matrix.reindex(index=names, columns=names, fill_value=0).astype(int)


def parse_shifts(items: list[str] | tuple[str, ...]) -> dict[str, int]:
    """``["legal=+2", "general=-1"]`` as ``{"legal": 2, "general": -1}`` (the command line's ``--shift``)."""
    shifts: dict[str, int] = {}
    for item in items:
        category, sep, amount = item.partition("=")
        try:
            shifts[category.strip()] = int(amount)
        except ValueError:
            raise RegisterError(f"--shift {item!r}: write CATEGORY=N, N a whole number such as +2 or -1") from None
        if not sep:
            raise RegisterError(f"--shift {item!r}: write CATEGORY=N, N a whole number such as +2 or -1")
    return shifts


def _checked_shifts(shifts: Mapping[str, int]) -> dict[str, int]:
    known = (*CATEGORIES, NO_CATEGORY)
    out = {}
    for category, amount in shifts.items():
        if category not in known:
            raise RegisterError(f"shift of category {category!r}: not a claim category "
                                f"(one of {', '.join(known)})")
        if not isinstance(amount, int) or isinstance(amount, bool) or abs(amount) >= MAX_CRITICALITY:
            raise RegisterError(f"shift of category {category!r}: must be a whole number between "
                                f"{-(MAX_CRITICALITY - 1):,} and {MAX_CRITICALITY - 1:,}, got {amount!r}")
        out[category] = amount
    return out


def criticality_sensitivity(store: Store, f: Filters | None = None, *, flatten: bool = False,
                            shifts: Mapping[str, int] | None = None, as_of: datetime | None = None,
                            profile: ScoringProfile | None = None) -> CriticalitySensitivity:
    """The transitions of the answers ``f`` selects when every claim's criticality is 1 (``flatten``) or shifted
    by ``shifts`` ({category: whole number}; ``NO_CATEGORY`` for claims without one), scored under ``profile``
    (default the active one) at ``as_of`` (default now) both ways. Exactly one of ``flatten`` and ``shifts``."""
    if bool(flatten) == bool(shifts):
        raise RegisterError("say how criticality changes: flatten it to 1, or shift it per claim category "
                            "(one of the two)")
    checked = {} if flatten else _checked_shifts(shifts or {})
    profile = profile or active_profile(store)
    as_of = ensure_utc(as_of or utc_now())
    scenario = ("every claim's criticality 1" if flatten else
                "criticality shifted: " + ", ".join(f"{c} {n:+d}" for c, n in sorted(checked.items())))
    tag = uuid.uuid4().hex[:12]  # generated here, never user text
    before, after, shift = f"_crit_before_{tag}", f"_crit_after_{tag}", f"_crit_shift_{tag}"
    with store.cursor() as cur:
        cur.execute("BEGIN TRANSACTION")  # one snapshot for both scorings; rolled back: nothing is written
        try:
            _score_into(cur, before, profile, as_of)
            cur.execute(f"CREATE TEMP TABLE {shift} AS SELECT unnest($categories::VARCHAR[]) AS category, "
                        "unnest($amounts::INTEGER[]) AS amount",
                        {"categories": list(checked), "amounts": list(checked.values())})
            _shadow_claims(cur, shift, flatten)
            try:
                _score_into(cur, after, profile, as_of)
            finally:
                cur.execute("DROP VIEW IF EXISTS temp.main.claims")
            figures = _transitions(store, cur, f or Filters(), before, after, tuple(b.name for b in profile.bands))
        finally:
            cur.execute("ROLLBACK")
    return CriticalitySensitivity(scenario=scenario, profile_version=profile.version, as_of=as_of,
                                  shifts=checked, **figures)


def _score_into(cur: Cursor, table: str, profile: ScoringProfile, as_of: datetime) -> None:
    p = Params()
    cur.execute(f"CREATE TEMP TABLE {table} AS SELECT response_key, score, band, action "
                f"FROM ({score_select(profile, as_of, p, with_key=True)})", p.values)


def _shadow_claims(cur: Cursor, shift: str, flatten: bool) -> None:
    """The temporary view ``claims``: the register's claims with the changed criticality (see the module
    docstring). The register's table is named with its database, as the view's own name would resolve to itself."""
    database = str(cur.scalar("SELECT current_database()")).replace('"', '""')
    in_bounds = f"c.criticality BETWEEN 1 AND {int(MAX_CRITICALITY)}"
    changed = ("1" if flatten else
               f"least({int(MAX_CRITICALITY)}, greatest(1, c.criticality + coalesce(s.amount, 0)))")
    cur.execute(f"""CREATE TEMP VIEW claims AS
        SELECT c.* REPLACE (CASE WHEN {in_bounds} THEN {changed} ELSE c.criticality END AS criticality)
        FROM "{database}".main.claims c
        LEFT JOIN {shift} s ON s.category = coalesce(c.category, '{NO_CATEGORY}')""")


def _transitions(store: Store, cur: Cursor, f: Filters, before: str, after: str, band_order: tuple[str, ...]) -> dict:
    p = Params()
    chosen = f"SELECT response_key FROM ({filtered_scores(store, f, p)})"
    cur.execute(f"""CREATE TEMP TABLE _crit_moves AS
        SELECT b.response_key, b.score AS score_before, a.score AS score_after, b.band AS from_band,
               a.band AS to_band, b.action AS from_action, a.action AS to_action
        FROM {before} b JOIN {after} a ON a.response_key = b.response_key
        WHERE b.response_key IN ({chosen})""", p.values)
    summary = cur.row("SELECT count(*) AS answers, count(*) FILTER (from_band <> to_band) AS band_changes, "
                      "count(*) FILTER (from_action <> to_action) AS action_changes, "
                      "avg(score_before) AS mean_score_before, avg(score_after) AS mean_score_after "
                      "FROM _crit_moves", what="the sensitivity's summary")  # an aggregate: one row
    # bands in the profile's order, actions by severity (a name neither knows after them, by name)
    bands = cur.frame("SELECT * FROM (SELECT from_band, to_band, count(*)::BIGINT AS answers FROM _crit_moves "
                      "GROUP BY from_band, to_band) ORDER BY coalesce(list_position($b::VARCHAR[], from_band), 999), "
                      "from_band, coalesce(list_position($b::VARCHAR[], to_band), 999), to_band",
                      {"b": list(band_order)})
    actions = cur.frame("SELECT * FROM (SELECT from_action, to_action, count(*)::BIGINT AS answers FROM _crit_moves "
                        "GROUP BY from_action, to_action) ORDER BY coalesce(list_position($a::VARCHAR[], from_action), "
                        "999), from_action, coalesce(list_position($a::VARCHAR[], to_action), 999), to_action",
                        {"a": list(ACTIONS)})
    return {"answers": int(summary["answers"]), "band_changes": int(summary["band_changes"]),
            "action_changes": int(summary["action_changes"]),
            "mean_score_before": summary["mean_score_before"], "mean_score_after": summary["mean_score_after"],
            "band_transitions": bands, "action_transitions": actions}
