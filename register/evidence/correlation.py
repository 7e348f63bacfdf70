"""Correlation among the seven dimension scores over the current answers (HRI paper, section VI).

The paper's additive score sums weighted dimensions as if each told something of its own; it "may also hide
correlations among dimensions". Here the dimension scores s_F .. s_H of the answers the console's filters select
(their current scores, from the read model ``current_scores``: ``register.console.queries.filters``) give a 7 x 7
correlation matrix, Pearson's (DuckDB's ``corr``) or Spearman's (``corr`` of average ranks,
``register.evidence.ranks``), in one statement.

Which answers: those scored with claims and without a scoring failure. An answer without claims scores 0 on every
dimension and a failed score 1 on every one: both would make every dimension look perfectly correlated with every
other, which says nothing of the claims.

The pairs that move together are those with |r| >= ``MOVE_TOGETHER`` (0.5: by the usual reading of a correlation
coefficient, at least a moderate association; a fourth of the variance shared), strongest first. A dimension that
does not vary over the set (every answer 0 on P, say) has no correlation with anything: its cells are empty and it
is named in ``constant``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from hri_core import DIMENSIONS
from hri_core.vocabulary import DIMENSION_NAMES
from register.console.queries.filters import DIM_COLUMNS, Filters, filtered_scores
from register.db.sql import Params
from register.db.store import Store
from register.errors import RegisterError
from register.evidence.ranks import average_rank, finite

__all__ = ["METHODS", "MOVE_TOGETHER", "DimensionCorrelation", "dimension_correlation"]

MOVE_TOGETHER = 0.5  # |r| at or above which two dimensions are named as moving together (see the module docstring)
METHODS = ("pearson", "spearman")
_LETTERS = tuple(d.value for d in DIMENSIONS)
_COLUMN = dict(zip(_LETTERS, DIM_COLUMNS, strict=True))  # F -> s_f: allow-listed identifiers


@dataclass(frozen=True)
class DimensionCorrelation:
    """The correlation matrix of the dimension scores over ``answers`` answers.

    ``matrix``: 7 x 7, index and columns the dimension letters (F .. H), NaN where undefined (a constant
    dimension, or fewer than two answers); ``pairs``: dimension_a, dimension_b, r, the pairs with |r| >=
    ``threshold``, strongest first; ``constant``: the dimensions that do not vary over the answers.
    """

    method: str
    answers: int
    matrix: pd.DataFrame
    pairs: pd.DataFrame
    constant: tuple[str, ...]
    threshold: float = MOVE_TOGETHER

    def long(self) -> pd.DataFrame:
        """Every pair once (dimension_a before dimension_b in the paper's order) with its r: the CSV download."""
        rows = [(a, b, finite(self.matrix.at[a, b])) for a, b in combinations(_LETTERS, 2)]
        return pd.DataFrame(rows, columns=["dimension_a", "dimension_b", "r"])

    def as_json(self) -> dict:
        """The figures as plain JSON values (the command line's ``--json``)."""
        return {"method": self.method, "answers": self.answers, "threshold": self.threshold,
                "matrix": {a: {b: finite(self.matrix.at[a, b]) for b in _LETTERS} for a in _LETTERS},
                "pairs": [{"dimension_a": a, "dimension_b": b, "r": r}
                          for a, b, r in self.pairs.itertuples(index=False)],
                "constant": list(self.constant)}

    def pair_lines(self) -> list[str]:
        """Sentences such as ``"F and C move together (r = 0.81)"`` for the pairs above the threshold."""
        return [f"{a} ({DIMENSION_NAMES[_dimension(a)]}) and {b} ({DIMENSION_NAMES[_dimension(b)]}): r = {r:+.3f}"
                for a, b, r in self.pairs.itertuples(index=False)]


def _dimension(letter: str):
    return next(d for d in DIMENSIONS if d.value == letter)


def dimension_correlation(store: Store, f: Filters | None = None, *, method: str = "pearson",
                          threshold: float = MOVE_TOGETHER) -> DimensionCorrelation:
    """The dimension scores' correlation matrix over the answers ``f`` selects (see the module docstring):
    ``method`` "pearson" or "spearman"; the pairs with |r| >= ``threshold`` named."""
    if method not in METHODS:
        raise RegisterError(f"method: must be one of {', '.join(METHODS)}, got {method!r}")
    if not (isinstance(threshold, (int, float)) and 0 <= threshold <= 1):
        raise RegisterError(f"threshold: must be a number from 0 to 1, got {threshold!r}")
    p = Params()
    scored = filtered_scores(store, f or Filters(), p)
    if method == "spearman":
        ranked = ", ".join(f"{average_rank(c)} AS {c}" for c in DIM_COLUMNS)
        source = f"SELECT {ranked} FROM answers"
    else:
        source = "SELECT * FROM answers"
    cells = ", ".join(f"corr({_COLUMN[a]}, {_COLUMN[b]}) AS {a}_{b}" for a, b in combinations(_LETTERS, 2))
    spread = ", ".join(f"var_pop({c}) AS var_{c}" for c in DIM_COLUMNS)
    row = store.one(f"""
        WITH answers AS (SELECT {', '.join(DIM_COLUMNS)} FROM ({scored}) s
                         WHERE NOT s.no_claims AND s.scoring_failure IS NULL)
        SELECT count(*) AS answers, {cells}, {spread} FROM ({source})""", p.values)
    assert row is not None  # an aggregate without GROUP BY has one row
    answers = int(row["answers"])
    constant = tuple(a for a in _LETTERS if answers and row[f"var_{_COLUMN[a]}"] == 0)
    matrix = pd.DataFrame(float("nan"), index=list(_LETTERS), columns=list(_LETTERS))
    for a in _LETTERS:
        if answers >= 2 and a not in constant:
            matrix.at[a, a] = 1.0
    pairs = []
    for a, b in combinations(_LETTERS, 2):
        r = finite(row[f"{a}_{b}"]) if answers >= 2 else None
        matrix.at[a, b] = matrix.at[b, a] = float("nan") if r is None else r
        if r is not None and abs(r) >= threshold:
            pairs.append((a, b, r))
    pairs.sort(key=lambda t: (-abs(t[2]), _LETTERS.index(t[0]), _LETTERS.index(t[1])))
    return DimensionCorrelation(method=method, answers=answers, matrix=matrix,
                                pairs=pd.DataFrame(pairs, columns=["dimension_a", "dimension_b", "r"]),
                                constant=constant, threshold=float(threshold))
