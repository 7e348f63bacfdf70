"""Analytic Hierarchy Process (AHP): dimension weights from pairwise judgements (DOMAIN.md section 8).

An expert compares the seven risk dimensions two at a time on Saaty's 1-9 scale ("F is 3 times as
important as C"); the 21 upper-triangle judgements make a positive reciprocal matrix, the principal
eigenvector of that matrix gives the weights, and the consistency ratio CR = CI / RI says whether the
judgements hang together (CR <= 0.10 to accept). When they do not, the judgements that disagree most
with the derived weights are named so that the expert can revisit exactly those.

Pure computation: the elicitation pages, the register and ``python -m hri_core ahp`` call these
functions; nothing here reads or writes files. The result becomes a draft profile through
``weights_to_profile_dict``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import FieldProblem, HRIError
from .vocabulary import DIMENSIONS

__all__ = [
    "ACCEPTABLE_CR",
    "AHPResult",
    "DIMENSION_LETTERS",
    "Judgement",
    "RANDOM_INDEX",
    "RECIPROCAL_TOLERANCE",
    "SAATY_SCALE",
    "aggregate_matrices",
    "analyse_matrix",
    "judgement_deviations",
    "matrix_from_judgements",
    "random_index",
    "validate_matrix",
    "weights_to_profile_dict",
]

DIMENSION_LETTERS: tuple[str, ...] = tuple(d.value for d in DIMENSIONS)

# Saaty's fundamental scale: 1 (equal) .. 9 (extreme), and the reciprocals for the reverse judgement.
SAATY_SCALE: tuple[float, ...] = tuple(sorted({float(k) for k in range(1, 10)} | {1.0 / k for k in range(2, 10)}))

# Saaty's random consistency index RI(n): the mean CI of random reciprocal matrices on the 1-9 scale.
# Source: T. L. Saaty, "The Analytic Hierarchy Process", McGraw-Hill, New York, 1980 (random index
# table for n = 1..15); the n = 1..10 values are reprinted in T. L. Saaty, "How to make a decision:
# the analytic hierarchy process", European Journal of Operational Research 48(1), 1990, pp. 9-26.
# The dip at n = 12 (1.48 < 1.51) is in the published table and is kept as published.
RANDOM_INDEX: dict[int, float] = {
    1: 0.00, 2: 0.00, 3: 0.58, 4: 0.90, 5: 1.12, 6: 1.24, 7: 1.32, 8: 1.41,
    9: 1.45, 10: 1.49, 11: 1.51, 12: 1.48, 13: 1.56, 14: 1.57, 15: 1.59,
}

# Saaty's acceptance rule: judgements with CR above 10 % should be revisited.
ACCEPTABLE_CR = 0.10

# A reciprocal typed with two decimals (0.14 for 1/7, 0.33 for 1/3) is off by up to 2 %: accept it, then
# restore exact reciprocity (see ``validate_matrix``). Anything further off is a data-entry error.
RECIPROCAL_TOLERANCE = 0.02

# How many judgements ``analyse_matrix`` names when the matrix is not acceptable.
DEFAULT_INCONSISTENT_COUNT = 3


@dataclass(frozen=True)
class Judgement:
    """One upper-triangle judgement ``a_ij`` ("row is ``value`` times as important as col") and how far
    it is from what the derived weights imply (``implied = w_row / w_col``).

    ``deviation = |ln(a_ij * w_col / w_row)|``: 0 for a judgement in line with the weights, ln 2 for one
    that is off by a factor of two either way. ``suggested`` is the Saaty scale value nearest to
    ``implied`` (on the log scale), a starting point when the expert revisits the judgement.
    """

    row: str
    col: str
    value: float
    implied: float
    deviation: float
    suggested: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"row": self.row, "col": self.col, "value": self.value, "implied": self.implied,
                "deviation": self.deviation, "suggested": self.suggested}


@dataclass(frozen=True)
class AHPResult:
    """Weights and consistency of one pairwise comparison matrix.

    ``cr`` is 0 for n <= 2 (a 1x1 or 2x2 reciprocal matrix is always consistent and RI is 0 there).
    ``deviations`` ranks every upper-triangle judgement by its deviation; ``inconsistent`` holds the
    worst few of them when the matrix is not acceptable, and is empty otherwise.
    """

    criteria: tuple[str, ...]
    matrix: tuple[tuple[float, ...], ...]
    weights: dict[str, float]
    lambda_max: float
    ci: float
    ri: float
    cr: float
    acceptable: bool
    max_cr: float = ACCEPTABLE_CR
    deviations: tuple[Judgement, ...] = field(default=())
    inconsistent: tuple[Judgement, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the shape printed by ``python -m hri_core ahp``)."""
        return {
            "criteria": list(self.criteria),
            "weights": dict(self.weights),
            "lambda_max": self.lambda_max,
            "ci": self.ci,
            "ri": self.ri,
            "cr": self.cr,
            "max_cr": self.max_cr,
            "acceptable": self.acceptable,
            "inconsistent": [j.to_dict() for j in self.inconsistent],
            "matrix": [list(row) for row in self.matrix],
        }


# --- small helpers ------------------------------------------------------------------------------


def _number(value: Any, loc: str, problems: list[FieldProblem], what: str = "") -> float | None:
    """A finite real number, or None with a problem recorded (booleans and strings are refused).

    ``what`` prefixes the message, e.g. ``"(F/C) "`` to say which comparison a matrix cell holds.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        problems.append(FieldProblem(loc, f"{what}must be a number, got {value!r}"))
        return None
    number = float(value)
    if not math.isfinite(number):
        problems.append(FieldProblem(loc, f"{what}must be a finite number, got {value!r}"))
        return None
    return number


def _criteria(criteria: Sequence[str] | None) -> tuple[str, ...]:
    names = DIMENSION_LETTERS if criteria is None else tuple(str(getattr(c, "value", c)) for c in criteria)
    if not names:
        raise HRIError([FieldProblem("criteria", "at least one criterion is required")])
    duplicates = sorted({c for c in names if names.count(c) > 1})
    if duplicates:
        raise HRIError([FieldProblem("criteria", f"duplicate criterion name(s) {', '.join(duplicates)}")])
    if len(names) > max(RANDOM_INDEX):
        raise HRIError([FieldProblem("criteria", f"at most {max(RANDOM_INDEX)} criteria are supported "
                                                 f"(Saaty's random index table), got {len(names)}")])
    return names


def _fraction(value: float) -> str:
    """Readable form of a scale value: 3 or 1/3."""
    if value >= 1:
        return f"{value:g}"
    inverse = 1.0 / value
    return f"1/{round(inverse)}" if abs(inverse - round(inverse)) < 1e-9 else f"{value:g}"


def _nearest_scale_value(value: float) -> float:
    """The Saaty scale value closest to ``value`` on the log scale (ratios, not differences)."""
    return min(SAATY_SCALE, key=lambda s: abs(math.log(value / s)))


def random_index(n: int) -> float:
    """Saaty's random consistency index RI(n) for n = 1..15 (see ``RANDOM_INDEX`` for the source)."""
    if n not in RANDOM_INDEX:
        raise HRIError([FieldProblem("matrix", f"no random index for n = {n}; "
                                               f"supported sizes are 1..{max(RANDOM_INDEX)}")])
    return RANDOM_INDEX[n]


# --- building and validating matrices -----------------------------------------------------------


def _scale_value(value: float, loc: str, strict: bool, tolerance: float,
                 problems: list[FieldProblem], what: str = "") -> float | None:
    """Check one judgement against Saaty's scale; snap 0.33 to exactly 1/3."""
    if value <= 0:
        problems.append(FieldProblem(loc, f"{what}must be positive (Saaty scale 1/9..9), got {value:g}"))
        return None
    nearest = _nearest_scale_value(value)
    if abs(value / nearest - 1.0) <= tolerance:
        return nearest
    if strict:
        problems.append(FieldProblem(loc, f"{what}must be on Saaty's scale (1..9 or 1/2..1/9), got {value:g}"))
        return None
    if not (1.0 / 9.0 * (1 - tolerance) <= value <= 9.0 * (1 + tolerance)):
        problems.append(FieldProblem(loc, f"{what}must be between 1/9 and 9, got {value:g}"))
        return None
    return value


def matrix_from_judgements(judgements: Mapping[Any, Any] | Sequence[Any],
                           criteria: Sequence[str] | None = None, *, strict: bool = True,
                           tolerance: float = RECIPROCAL_TOLERANCE) -> list[list[float]]:
    """Build the full reciprocal matrix from the n(n-1)/2 upper-triangle judgements (21 for F..H).

    ``judgements`` is either a sequence of values in row-major upper-triangle order
    (F/C, F/U, ..., F/H, C/U, ..., P/H) or a mapping from a pair of criteria to the value, the pair
    given as a tuple ``("F", "C")`` or a string ``"F/C"`` / ``"F,C"``. ``value`` says how many times the
    first criterion is as important as the second; a pair given the other way round (``("C", "F")``)
    is read as its reciprocal. With ``strict`` (default) every value must be on Saaty's scale
    (1..9, 1/2..1/9; 0.33 is read as 1/3); otherwise any value in [1/9, 9] is accepted.

    Raises ``HRIError`` naming every bad, missing, unknown or contradictory judgement.
    """
    names = _criteria(criteria)
    n = len(names)
    index = {name: i for i, name in enumerate(names)}
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    upper: dict[tuple[int, int], float] = {}
    problems: list[FieldProblem] = []

    if isinstance(judgements, Mapping):
        for key, raw in judgements.items():
            if isinstance(key, str):
                parts = [p.strip() for p in key.replace(",", "/").split("/")]
            elif isinstance(key, (tuple, list)):
                parts = [str(getattr(p, "value", p)).strip() for p in key]
            else:
                parts = []
            loc = f"judgements[{key if isinstance(key, str) else ','.join(parts)}]"
            if len(parts) != 2:
                problems.append(FieldProblem(loc, "a judgement key names two criteria, e.g. ('F', 'C') or 'F/C'"))
                continue
            unknown = [p for p in parts if p not in index]
            if unknown:
                problems.append(FieldProblem(loc, f"unknown criterion {', '.join(unknown)}; "
                                                  f"expected one of {', '.join(names)}"))
                continue
            i, j = index[parts[0]], index[parts[1]]
            if i == j:
                problems.append(FieldProblem(loc, "a criterion is not compared with itself (the diagonal is 1)"))
                continue
            value = _number(raw, loc, problems)
            if value is None:
                continue
            value = _scale_value(value, loc, strict, tolerance, problems)
            if value is None:
                continue
            if i > j:
                i, j, value = j, i, 1.0 / value
            if (i, j) in upper and abs(upper[(i, j)] / value - 1.0) > tolerance:
                problems.append(FieldProblem(loc, f"contradicts the judgement already given for "
                                                  f"{names[i]}/{names[j]} ({_fraction(upper[(i, j)])})"))
                continue
            upper[(i, j)] = value
        missing = [f"{names[i]}/{names[j]}" for i, j in pairs if (i, j) not in upper]
        if missing and not problems:
            problems.append(FieldProblem("judgements", f"missing judgement(s) {', '.join(missing)}"))
    elif isinstance(judgements, Sequence) and not isinstance(judgements, (str, bytes)):
        if len(judgements) != len(pairs):
            raise HRIError([FieldProblem("judgements", f"expected {len(pairs)} upper-triangle judgements for "
                                                       f"{n} criteria, got {len(judgements)}")])
        for k, ((i, j), raw) in enumerate(zip(pairs, judgements, strict=True)):
            loc = f"judgements[{k}]"
            what = f"({names[i]}/{names[j]}) "
            value = _number(raw, loc, problems, what)
            if value is not None:
                value = _scale_value(value, loc, strict, tolerance, problems, what)
            if value is not None:
                upper[(i, j)] = value
    else:
        raise HRIError([FieldProblem("judgements", f"expected a mapping or a list, got {type(judgements).__name__}")])

    if problems:
        raise HRIError(problems)
    matrix = [[1.0] * n for _ in range(n)]
    for (i, j), value in upper.items():
        matrix[i][j] = value
        matrix[j][i] = 1.0 / value
    return matrix


def validate_matrix(matrix: Any, criteria: Sequence[str] | None = None, *,
                    tolerance: float = RECIPROCAL_TOLERANCE, loc: str = "matrix") -> np.ndarray:
    """Check a full pairwise comparison matrix and return it as an exactly reciprocal array.

    Checks: a list of ``len(criteria)`` rows of ``len(criteria)`` finite positive numbers; the
    diagonal is 1 and ``a_ij * a_ji`` is 1, both within ``tolerance`` (relative). Every problem names
    its cell (``matrix[2][0]``, with the criteria it compares). Small reciprocity slips are then
    reconciled symmetrically: the upper cell becomes ``sqrt(a_ij / a_ji)`` and the lower its exact
    reciprocal, so neither triangle is privileged.
    """
    names = _criteria(criteria)
    n = len(names)
    if isinstance(matrix, np.ndarray):
        matrix = matrix.tolist()
    if not isinstance(matrix, Sequence) or isinstance(matrix, (str, bytes)):
        raise HRIError([FieldProblem(loc, f"expected a list of {n} rows, got {type(matrix).__name__}")])
    problems: list[FieldProblem] = []
    if len(matrix) != n:
        raise HRIError([FieldProblem(loc, f"expected a {n}x{n} matrix over {', '.join(names)}, "
                                          f"got {len(matrix)} row(s)")])
    values = np.ones((n, n))
    bad_cells: set[tuple[int, int]] = set()
    for i, row in enumerate(matrix):
        if not isinstance(row, Sequence) or isinstance(row, (str, bytes)) or len(row) != n:
            got = f"{len(row)} entries" if isinstance(row, Sequence) and not isinstance(row, (str, bytes)) \
                else type(row).__name__
            problems.append(FieldProblem(f"{loc}[{i}]", f"row {names[i]} must have {n} entries, got {got}"))
            bad_cells.update((i, j) for j in range(n))
            continue
        for j, raw in enumerate(row):
            cell = f"{loc}[{i}][{j}]"
            value = _number(raw, cell, problems, f"({names[i]}/{names[j]}) ")
            if value is None:
                bad_cells.add((i, j))
                continue
            if value <= 0:
                problems.append(FieldProblem(cell, f"({names[i]}/{names[j]}) must be positive, got {value:g}"))
                bad_cells.add((i, j))
                continue
            values[i, j] = value
    for i in range(n):
        if (i, i) not in bad_cells and abs(values[i, i] - 1.0) > tolerance:
            problems.append(FieldProblem(f"{loc}[{i}][{i}]", f"({names[i]}/{names[i]}) the diagonal must be 1, "
                                                             f"got {values[i, i]:g}"))
        for j in range(i + 1, n):
            if (i, j) in bad_cells or (j, i) in bad_cells:
                continue
            if abs(values[i, j] * values[j, i] - 1.0) > tolerance:
                problems.append(FieldProblem(
                    f"{loc}[{j}][{i}]",
                    f"({names[j]}/{names[i]}) must be the reciprocal of {loc}[{i}][{j}] ({names[i]}/{names[j]} = "
                    f"{values[i, j]:g}, so {1.0 / values[i, j]:.6g}), got {values[j, i]:g}"))
    if problems:
        raise HRIError(problems)
    upper = np.sqrt(values / values.T)  # reconciles a_ij and 1/a_ji; exactly reciprocal by construction
    np.fill_diagonal(upper, 1.0)
    return upper


def aggregate_matrices(matrices: Sequence[Any], criteria: Sequence[str] | None = None, *,
                       tolerance: float = RECIPROCAL_TOLERANCE) -> list[list[float]]:
    """Combine several experts' matrices by the element-wise geometric mean (Aczel-Saaty AIJ).

    The geometric mean of reciprocal matrices is itself reciprocal, which the arithmetic mean is not.
    Each matrix is validated first; problems name the expert's index (``matrices[1][2][0]``).
    """
    if isinstance(matrices, np.ndarray):
        matrices = list(matrices)
    if not isinstance(matrices, Sequence) or isinstance(matrices, (str, bytes)) or not matrices:
        raise HRIError([FieldProblem("matrices", "at least one expert matrix is required")])
    problems: list[FieldProblem] = []
    logs = []
    for k, matrix in enumerate(matrices):
        try:
            logs.append(np.log(validate_matrix(matrix, criteria, tolerance=tolerance, loc=f"matrices[{k}]")))
        except HRIError as error:
            problems.extend(error.problems)
    if problems:
        raise HRIError(problems)
    mean = np.exp(np.mean(logs, axis=0))
    np.fill_diagonal(mean, 1.0)
    result: list[list[float]] = mean.tolist()
    return result


# --- weights and consistency --------------------------------------------------------------------


def _principal(values: np.ndarray) -> tuple[np.ndarray, float]:
    """Perron eigenvector (normalised to sum 1) and eigenvalue of a positive matrix."""
    eigenvalues, eigenvectors = np.linalg.eig(values)
    k = int(np.argmax(eigenvalues.real))
    vector = eigenvectors[:, k].real
    vector = vector / vector.sum()  # the Perron vector has one sign: this also fixes it to positive
    return vector, float(eigenvalues[k].real)


def judgement_deviations(matrix: np.ndarray | Sequence[Sequence[float]], weights: np.ndarray | Sequence[float],
                         criteria: Sequence[str] | None = None) -> tuple[Judgement, ...]:
    """Every upper-triangle judgement with its deviation from the weights, worst first.

    ``deviation = |ln(a_ij * w_j / w_i)|`` is symmetric in over- and under-statement and is zero for
    every cell of a perfectly consistent matrix.
    """
    names = _criteria(criteria)
    values = np.asarray(matrix, dtype=float)
    w = np.asarray(weights, dtype=float)
    out = []
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            implied = float(w[i] / w[j])
            out.append(Judgement(row=names[i], col=names[j], value=float(values[i, j]), implied=implied,
                                 deviation=abs(math.log(values[i, j] / implied)),
                                 suggested=_nearest_scale_value(implied)))
    # stable sort: among equal deviations the matrix order (F/C before F/U ...) decides
    return tuple(sorted(out, key=lambda j: -j.deviation))


def analyse_matrix(matrix: Any, criteria: Sequence[str] | None = None, *, max_cr: float = ACCEPTABLE_CR,
                   tolerance: float = RECIPROCAL_TOLERANCE,
                   inconsistent_count: int = DEFAULT_INCONSISTENT_COUNT) -> AHPResult:
    """Weights (principal eigenvector, summing to 1), lambda_max, CI, RI, CR and acceptability.

    ``CI = (lambda_max - n) / (n - 1)`` (0 for n = 1; a tiny negative round-off is clamped to 0, since
    lambda_max >= n for every positive reciprocal matrix), ``CR = CI / RI(n)`` and
    ``acceptable = CR <= max_cr``. When not acceptable, ``inconsistent`` names the
    ``inconsistent_count`` judgements that deviate most from the derived weights.
    """
    names = _criteria(criteria)
    values = validate_matrix(matrix, names, tolerance=tolerance)
    n = len(names)
    weights, lambda_max = _principal(values)
    ci = max(0.0, (lambda_max - n) / (n - 1)) if n > 1 else 0.0
    ri = random_index(n)
    cr = ci / ri if ri > 0 else 0.0
    acceptable = cr <= max_cr
    deviations = judgement_deviations(values, weights, names)
    return AHPResult(
        criteria=names,
        matrix=tuple(tuple(float(x) for x in row) for row in values),
        weights={name: float(w) for name, w in zip(names, weights, strict=True)},
        lambda_max=lambda_max,
        ci=ci,
        ri=ri,
        cr=cr,
        acceptable=acceptable,
        max_cr=max_cr,
        deviations=deviations,
        inconsistent=() if acceptable else deviations[:inconsistent_count],
    )


def weights_to_profile_dict(weights: Mapping[Any, float], *, digits: int = 6) -> dict[str, dict[str, float]]:
    """``{"weights": {"F": ..., ..., "H": ...}}`` for ``profile_from_dict``, rounded to ``digits``.

    All seven dimensions are required (a partial override would be merged with the default weights
    and no longer sum to 1). The weights are normalised, rounded, and the rounding remainder goes on
    the largest weight so that the rounded weights sum to 1.
    """
    problems: list[FieldProblem] = []
    clean: dict[str, float] = {}
    for key, raw in weights.items():
        name = str(getattr(key, "value", key))
        loc = f"weights.{name}"
        if name not in DIMENSION_LETTERS:
            problems.append(FieldProblem(loc, f"unknown dimension; expected one of {', '.join(DIMENSION_LETTERS)}"))
            continue
        value = _number(raw, loc, problems)
        if value is not None and value < 0:
            problems.append(FieldProblem(loc, f"must be >= 0, got {value:g}"))
        elif value is not None:
            clean[name] = value
    missing = [d for d in DIMENSION_LETTERS if d not in clean and f"weights.{d}" not in {p.loc for p in problems}]
    if missing:
        problems.append(FieldProblem("weights", f"missing dimension(s) {', '.join(missing)}"))
    if not problems and math.fsum(clean.values()) <= 0:
        problems.append(FieldProblem("weights", "at least one weight must be positive"))
    if problems:
        raise HRIError(problems)
    total = math.fsum(clean.values())
    rounded = {d: round(clean[d] / total, digits) for d in DIMENSION_LETTERS}
    largest = max(DIMENSION_LETTERS, key=lambda d: (rounded[d], -DIMENSION_LETTERS.index(d)))
    rounded[largest] = round(1.0 - math.fsum(v for d, v in rounded.items() if d != largest), digits)
    return {"weights": rounded}
