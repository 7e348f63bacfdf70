"""The register's own outcomes as the outcome fit's input: no outcome file, no re-scoring (issue 38).

``register_outcomes`` reads, in one DuckDB statement, every response with a known outcome as
``register.scoring.calibration`` defines them (``latest_outcomes_select``: review decisions and audit findings,
validated feedback, imported outcomes, each with its kind; a response counts once, with its most recent outcome)
joined to the latest score row of the revision the outcome is about: its seven stored dimension scores
(``scores.s_f`` .. ``s_h``) and the largest floor that fired on that score run (``score_floors.value``, 0 when
none). That is exactly what ``hri_core.outcome_fit.read_outcomes`` computes from a file, so the same fit
(``fit_weights``) and comparison (``compare_aggregations``) run on it through ``hri_core.outcome_fit.outcome_set``.

Left out, and counted (``RegisterOutcomes.left_out``): outcomes whose revision has no score row, and score rows
that name a ``scoring_failure`` (their dimension scores are the fail-closed 1s, not a measurement). ``kinds``
keeps only the outcomes of those kinds (of ``OUTCOME_KINDS``), applied to each response's most recent outcome.

The data's hash (``data_hash``) is the SHA-256 of the rows the fit reads (ids, revisions, sources, kinds,
outcomes, the seven scores and the floor, in response-id order): the Evidence page keys its cached fit on it, and
a draft offered from the fit records it with the kinds it holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from hri_core.outcome_fit import (
    DEFAULT_FOLDS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_OUTCOMES,
    MIN_PER_CLASS,
    OutcomeSet,
    WeightFit,
    fit_weights,
    outcome_set,
)
from hri_core.outcome_metrics import DEFAULT_COSTS, Costs
from hri_core.vocabulary import DIMENSIONS
from register.db.sql import Params
from register.db.store import Store
from register.errors import RegisterError
from register.scoring.calibration import OUTCOME_KINDS, SOURCES, latest_outcomes_select
from register.scoring.profiles import active_profile

__all__ = ["SCORE_COLUMNS", "RegisterOutcomes", "compare_from_register", "fit_from_register", "register_outcomes"]

SCORE_COLUMNS = tuple(f"s_{d.value.lower()}" for d in DIMENSIONS)  # the score rows' s_F .. s_H, in DIMENSIONS' order


@dataclass(frozen=True)
class RegisterOutcomes:
    """The rows a fit from the register reads, and what they add up to.

    ``rows``: response_id, revision, source, kind, outcome (0/1), the seven ``SCORE_COLUMNS``, floor, as_of (the
    score row's), one per response, by response id. ``left_out``: why outcomes could not go in, with counts
    (``unscored``, ``scoring_failure``). ``kinds``: the kinds asked for (empty: every kind)."""

    rows: pd.DataFrame
    data_hash: str
    kinds: tuple[str, ...]
    left_out: dict[str, int]

    @property
    def n(self) -> int:
        """Answers with a known outcome and a usable score."""
        return len(self.rows)

    @property
    def harmful(self) -> int:
        """Of them, those whose outcome was harmful (1)."""
        return int(self.rows["outcome"].sum()) if self.n else 0

    def kind_counts(self) -> dict[str, dict[str, int]]:
        """Per kind present: answers and harmful ones (the draft's record of what the data is)."""
        if not self.n:
            return {}
        grouped = self.rows.groupby("kind")["outcome"].agg(["count", "sum"])
        return {str(k): {"n": int(r["count"]), "harmful": int(r["sum"])} for k, r in grouped.iterrows()}

    def shortfall(self) -> str | None:
        """Why these rows cannot carry a fit yet, in words with the counts needed, or None when they may."""
        harmless = self.n - self.harmful
        if self.n < MIN_OUTCOMES:
            return (f"The register holds {self.n} answer(s) with a known outcome and a usable score; a fit needs at "
                    f"least {MIN_OUTCOMES} ({MIN_OUTCOMES - self.n} more).")
        if min(self.harmful, harmless) < MIN_PER_CLASS:
            return (f"The register holds {self.n} answers with a known outcome, {self.harmful} harmful and "
                    f"{harmless} not; a fit needs at least {MIN_PER_CLASS} of each.")
        return None

    def outcome_set(self) -> OutcomeSet:
        """The rows as ``hri_core``'s input of a fit (``hri_core.outcome_fit.outcome_set``)."""
        return outcome_set(self.rows["response_id"].astype(str).tolist(),
                           self.rows[list(SCORE_COLUMNS)].to_numpy(dtype=float),
                           self.rows["floor"].to_numpy(dtype=float), self.rows["outcome"].to_numpy(dtype=float),
                           self.data_hash)

    def as_of(self) -> datetime:
        """The latest scoring time among the rows (the fit's ``as_of``: the same rows give the same JSON)."""
        if not self.n:
            return datetime(1970, 1, 1, tzinfo=UTC)
        latest = pd.Timestamp(self.rows["as_of"].max())
        return (latest.tz_localize(UTC) if latest.tzinfo is None else latest.tz_convert(UTC)).to_pydatetime()

    def summary(self) -> dict[str, Any]:
        """The data in a few JSON values: hash, counts, kinds and what was left out."""
        return {"source": "register", "sha256": self.data_hash, "n": self.n, "harmful": self.harmful,
                "kinds_requested": list(self.kinds), "kinds": self.kind_counts(), "left_out": self.left_out}


def _check_kinds(kinds: tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(kinds or ()))
    unknown = [k for k in chosen if k not in OUTCOME_KINDS]
    if unknown:
        raise RegisterError(f"kind: {', '.join(map(repr, unknown))} is not an outcome kind; use one of "
                            f"{', '.join(OUTCOME_KINDS)}")
    return chosen


def register_outcomes(store: Store, kinds: tuple[str, ...] | None = None) -> RegisterOutcomes:
    """Every response with a known outcome (of ``kinds``, default every kind) beside its stored dimension scores
    and fired floor (module docstring), set-based in DuckDB."""
    chosen = _check_kinds(kinds)
    p = Params()
    kind_filter = f"WHERE list_contains({p(list(chosen))}::VARCHAR[], l.kind)" if chosen else ""
    scores = ", ".join(f"s.{c}" for c in SCORE_COLUMNS)
    frame = store.frame(f"""
        WITH latest AS ({latest_outcomes_select(SOURCES)}),
        chosen AS (SELECT * FROM latest l {kind_filter}),
        scored AS (
            SELECT c.response_id, c.revision, c.source, c.kind, (c.outcome = 'bad')::INTEGER AS outcome,
                   s.run_id, s.as_of, s.scoring_failure, {scores}
            FROM chosen c LEFT JOIN scores s ON s.response_id = c.response_id AND s.revision = c.revision
            QUALIFY row_number() OVER (PARTITION BY c.response_id ORDER BY s.run_id DESC NULLS LAST) = 1),
        floors AS (
            SELECT f.run_id, f.response_id, f.revision, max(f.value) AS floor
            FROM score_floors f JOIN scored x ON x.run_id = f.run_id AND x.response_id = f.response_id
                                              AND x.revision = f.revision
            GROUP BY ALL)
        SELECT x.*, coalesce(f.floor, 0.0) AS floor
        FROM scored x LEFT JOIN floors f ON f.run_id = x.run_id AND f.response_id = x.response_id
                                         AND f.revision = x.revision
        ORDER BY x.response_id""", p.values)
    unscored = frame["run_id"].isna()
    failed = frame["scoring_failure"].notna() & ~unscored
    rows = frame[~unscored & ~failed].reset_index(drop=True)
    rows = rows[["response_id", "revision", "source", "kind", "outcome", *SCORE_COLUMNS, "floor", "as_of"]]
    rows = rows.astype({"revision": "int64", "outcome": "int64", **dict.fromkeys([*SCORE_COLUMNS, "floor"], "float64")})
    return RegisterOutcomes(rows=rows, data_hash=_hash(rows), kinds=chosen,
                            left_out={"unscored": int(unscored.sum()), "scoring_failure": int(failed.sum())})


def _hash(rows: pd.DataFrame) -> str:
    """SHA-256 of the rows the fit reads: the text columns joined by unit separators, the numbers as float64 bytes
    (whole arrays at once, no loop per row)."""
    digest = hashlib.sha256(b"hri-register-outcomes/1\n")
    for column in ("response_id", "source", "kind"):
        digest.update("\x1f".join(rows[column].astype(str)).encode("utf-8") + b"\x1e")
    digest.update(rows["revision"].to_numpy(dtype="<i8").tobytes())
    digest.update(rows[["outcome", *SCORE_COLUMNS, "floor"]].to_numpy(dtype="<f8").tobytes())
    return digest.hexdigest()


def _data(store: Store, kinds: tuple[str, ...] | None, data_hash: str | None) -> RegisterOutcomes:
    data = register_outcomes(store, kinds)
    if data_hash is not None and data_hash != data.data_hash:
        # the cache key named other rows than the register holds now: the caller's view is stale, say so
        raise RegisterError("the outcomes changed since this page read them: reload the page")
    return data


def fit_from_register(store: Store, kinds: tuple[str, ...] | None = None, *, data_hash: str | None = None,
                      folds: int = DEFAULT_FOLDS, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      costs: Costs = DEFAULT_COSTS) -> WeightFit:
    """The seven weights fitted to the register's outcomes (``hri_core.outcome_fit.fit_weights``), the active
    profile's weights the baseline. ``data_hash``, when given, must be the rows' hash (the page's cache key).
    Raises ``hri_core.outcome_fit.FitError`` when the rows cannot carry a fit."""
    data = _data(store, kinds, data_hash)
    return fit_weights(data.outcome_set(), active_profile(store), data.as_of(), folds=folds, resamples=resamples,
                       seed=seed, costs=costs)


def compare_from_register(store: Store, kinds: tuple[str, ...] | None = None, *, data_hash: str | None = None,
                          folds: int = DEFAULT_FOLDS, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                          costs: Costs = DEFAULT_COSTS) -> list[dict[str, Any]]:
    """The aggregation models compared on the register's outcomes (``hri_core.aggregations``), one row per model,
    each with the data's hash. Raises ``hri_core.outcome_fit.FitError`` when the rows cannot carry a fit."""
    from hri_core.aggregations import compare_aggregations

    data = _data(store, kinds, data_hash)
    rows = compare_aggregations(data.outcome_set(), active_profile(store), folds=folds, resamples=resamples,
                                seed=seed, costs=costs)
    return [{**row, "data_sha256": data.data_hash} for row in rows]

