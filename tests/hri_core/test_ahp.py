"""AHP weights and consistency: published worked examples, closed forms, properties, bad input, CLI.

Published examples (the numbers below were recomputed independently in this file -- power iteration
for lambda_max, CI and CR by hand from it -- not only copied):

- Saaty, T. L. (2008). "Decision making with the analytic hierarchy process". Int. J. Services
  Sciences 1(1), 83-98: "Which drink is consumed more in the US?" (7x7), eigenvector
  .177 .019 .042 .116 .190 .129 .327. The matrix and a CR of 0.022 are also reproduced in the
  README of the AHPy package (github.com/PhilipGriffith/AHPy, "Relative consumption of drinks").
  AHPy uses Saaty's 2005 random index (RI(7) = 1.35); with the 1980 table used here
  (RI(7) = 1.32) CR is 0.0223, the same 0.022 at three decimals.
- Wikipedia, "Analytic hierarchy process - leader example": criteria Experience, Education,
  Charisma, Age weighted .547 .127 .270 .056; the AHPy README reports CR 0.044 for the same
  judgements (0.0439 here with RI(4) = 0.90).
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.ahp import (
    DIMENSION_LETTERS,
    RANDOM_INDEX,
    SAATY_SCALE,
    aggregate_matrices,
    analyse_matrix,
    matrix_from_judgements,
    random_index,
    validate_matrix,
    weights_to_profile_dict,
)
from hri_core.errors import HRIError
from hri_core.profile import profile_from_dict

DRINKS = ["Coffee", "Wine", "Tea", "Beer", "Soda", "Milk", "Water"]
DRINKS_MATRIX = [
    [1, 9, 5, 2, 1, 1, 1 / 2],
    [1 / 9, 1, 1 / 3, 1 / 9, 1 / 9, 1 / 9, 1 / 9],
    [1 / 5, 3, 1, 1 / 3, 1 / 4, 1 / 3, 1 / 9],
    [1 / 2, 9, 3, 1, 1 / 2, 1, 1 / 3],
    [1, 9, 4, 2, 1, 2, 1 / 2],
    [1, 9, 3, 1, 1 / 2, 1, 1 / 3],
    [2, 9, 9, 3, 2, 3, 1],
]
DRINKS_PUBLISHED = [0.177, 0.019, 0.042, 0.116, 0.190, 0.129, 0.327]

LEADER = ["Experience", "Education", "Charisma", "Age"]
LEADER_MATRIX = [
    [1, 4, 3, 7],
    [1 / 4, 1, 1 / 3, 3],
    [1 / 3, 3, 1, 5],
    [1 / 7, 1 / 3, 1 / 5, 1],
]
LEADER_PUBLISHED = [0.547, 0.127, 0.270, 0.056]


def power_iteration(matrix, steps=500):
    """Independent principal eigenpair (pure Python): repeated A.w, normalised to sum 1."""
    n = len(matrix)
    w = [1.0 / n] * n
    for _ in range(steps):
        aw = [sum(matrix[i][j] * w[j] for j in range(n)) for i in range(n)]
        total = sum(aw)
        w = [x / total for x in aw]
    aw = [sum(matrix[i][j] * w[j] for j in range(n)) for i in range(n)]
    lam = sum(aw[i] / w[i] for i in range(n)) / n
    return w, lam


def consistent_matrix(weights):
    return [[wi / wj for wj in weights] for wi in weights]


# --- published examples ---------------------------------------------------------------------


def test_saaty_2008_drinks_example_weights_and_cr():
    result = analyse_matrix(DRINKS_MATRIX, DRINKS)
    for name, published in zip(DRINKS, DRINKS_PUBLISHED, strict=True):
        assert result.weights[name] == pytest.approx(published, abs=1e-3), name
    w, lam = power_iteration(DRINKS_MATRIX)
    assert result.lambda_max == pytest.approx(lam, rel=1e-9)
    assert [result.weights[d] for d in DRINKS] == pytest.approx(w, abs=1e-9)
    ci = (lam - 7) / 6
    assert result.ci == pytest.approx(ci, rel=1e-9)
    assert result.ri == 1.32
    assert result.cr == pytest.approx(ci / 1.32, rel=1e-9)
    assert round(result.cr, 3) == 0.022
    assert result.acceptable and result.inconsistent == ()


def test_wikipedia_leader_example_weights_and_cr():
    result = analyse_matrix(LEADER_MATRIX, LEADER)
    for name, published in zip(LEADER, LEADER_PUBLISHED, strict=True):
        assert result.weights[name] == pytest.approx(published, abs=1e-3), name
    _, lam = power_iteration(LEADER_MATRIX)
    assert result.lambda_max == pytest.approx(lam, rel=1e-9)
    assert result.cr == pytest.approx((lam - 4) / 3 / 0.90, rel=1e-9)
    assert round(result.cr, 3) == 0.044
    assert result.acceptable


@pytest.mark.parametrize("a, b, c", [(2, 3, 4), (3, 5, 1 / 2), (9, 1 / 9, 9), (1, 1, 1)])
def test_three_by_three_closed_form(a, b, c):
    """For n = 3 the eigenvector is the vector of row geometric means and, with x = (ac/b)^(1/3),
    lambda_max = 1 + x + 1/x (by hand: with w = ((ab)^(1/3), (c/a)^(1/3), (bc)^(-1/3)) every row of
    A w / w equals 1 + x + 1/x)."""
    matrix = [[1, a, b], [1 / a, 1, c], [1 / b, 1 / c, 1]]
    result = analyse_matrix(matrix, ["x", "y", "z"])
    x = (a * c / b) ** (1 / 3)
    assert result.lambda_max == pytest.approx(1 + x + 1 / x, rel=1e-9)
    geo = [(a * b) ** (1 / 3), (c / a) ** (1 / 3), (1 / (b * c)) ** (1 / 3)]
    total = sum(geo)
    assert [result.weights[k] for k in "xyz"] == pytest.approx([g / total for g in geo], rel=1e-9)
    assert result.cr == pytest.approx(((1 + x + 1 / x) - 3) / 2 / 0.58, abs=1e-9)


def test_random_index_is_saatys_1980_table():
    assert [RANDOM_INDEX[n] for n in range(1, 16)] == [
        0.00, 0.00, 0.58, 0.90, 1.12, 1.24, 1.32, 1.41, 1.45, 1.49, 1.51, 1.48, 1.56, 1.57, 1.59]
    assert random_index(7) == 1.32
    with pytest.raises(HRIError):
        random_index(16)


def test_extreme_cycle_is_not_acceptable_and_names_judgements():
    # a beats b 9:1, b beats c 9:1, c beats a 9:1 -- maximally intransitive
    result = analyse_matrix([[1, 9, 1 / 9], [1 / 9, 1, 9], [9, 1 / 9, 1]], ["a", "b", "c"])
    assert not result.acceptable
    assert result.cr > 1
    assert {(j.row, j.col) for j in result.inconsistent} == {("a", "b"), ("b", "c"), ("a", "c")}


def test_single_corrupted_judgement_is_named_first():
    weights = [0.25, 0.20, 0.15, 0.10, 0.10, 0.10, 0.10]
    matrix = consistent_matrix(weights)
    matrix[0][6], matrix[6][0] = 1 / 9, 9.0  # F/H should be 2.5; the expert typed the reverse extreme
    result = analyse_matrix(matrix)
    assert result.cr > 0.10 and not result.acceptable
    worst = result.inconsistent[0]
    assert (worst.row, worst.col) == ("F", "H")
    assert worst.value == pytest.approx(1 / 9)
    assert worst.deviation == max(j.deviation for j in result.deviations)
    assert len(result.inconsistent) == 3


def test_acceptable_boundary_is_inclusive():
    matrix = [[1, 9, 1 / 9], [1 / 9, 1, 9], [9, 1 / 9, 1]]
    cr = analyse_matrix(matrix, ["a", "b", "c"]).cr
    assert analyse_matrix(matrix, ["a", "b", "c"], max_cr=cr).acceptable
    assert not analyse_matrix(matrix, ["a", "b", "c"], max_cr=cr * (1 - 1e-9)).acceptable


# --- properties -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.floats(min_value=0.05, max_value=20.0, allow_nan=False, allow_infinity=False),
                min_size=1, max_size=15))
def test_consistent_matrix_has_cr_zero_and_returns_w(weights):
    names = [f"c{k}" for k in range(len(weights))]
    result = analyse_matrix(consistent_matrix(weights), names)
    assert result.cr == pytest.approx(0.0, abs=1e-9)
    assert result.lambda_max == pytest.approx(len(weights), rel=1e-9)
    total = sum(weights)
    assert [result.weights[n] for n in names] == pytest.approx([w / total for w in weights], rel=1e-7)
    assert result.acceptable and result.inconsistent == ()


@settings(max_examples=80, deadline=None)
@given(hs.lists(hs.sampled_from(SAATY_SCALE), min_size=21, max_size=21))
def test_weights_of_any_judgements_sum_to_one(judgements):
    result = analyse_matrix(matrix_from_judgements(judgements))
    assert math.fsum(result.weights.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(w > 0 for w in result.weights.values())
    assert result.lambda_max >= 7 - 1e-9
    assert result.cr >= 0
    assert result.acceptable == (result.cr <= 0.10)
    assert bool(result.inconsistent) == (not result.acceptable)
    deviations = [j.deviation for j in result.deviations]
    assert deviations == sorted(deviations, reverse=True)
    assert len(result.deviations) == 21
    profile = profile_from_dict(weights_to_profile_dict(result.weights))
    assert math.fsum(profile.weights.values()) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.lists(hs.floats(min_value=0.1, max_value=10.0, allow_nan=False), min_size=4, max_size=4),
                min_size=1, max_size=5))
def test_geometric_mean_of_consistent_matrices_is_consistent_with_geometric_mean_weights(experts):
    names = ["a", "b", "c", "d"]
    combined = aggregate_matrices([consistent_matrix(w) for w in experts], names)
    geo = [math.prod(w[k] for w in experts) ** (1 / len(experts)) for k in range(4)]
    assert combined == [pytest.approx(row, rel=1e-9) for row in consistent_matrix(geo)]
    assert analyse_matrix(combined, names).cr == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.floats(min_value=0.0, max_value=5.0, allow_nan=False), min_size=7, max_size=7)
       .filter(lambda ws: sum(ws) > 1e-3))
def test_weights_to_profile_dict_sums_to_one_and_is_accepted(raw):
    out = weights_to_profile_dict(dict(zip(DIMENSION_LETTERS, raw, strict=True)))
    assert set(out) == {"weights"}
    assert list(out["weights"]) == list(DIMENSION_LETTERS)
    assert math.fsum(out["weights"].values()) == pytest.approx(1.0, abs=1e-12)
    total = sum(raw)
    for letter, value in zip(DIMENSION_LETTERS, raw, strict=True):
        assert out["weights"][letter] == pytest.approx(value / total, abs=7e-6)
    profile_from_dict(out)  # raises if the profile refuses it


# --- building, aggregating, converting ------------------------------------------------------


def test_judgements_mapping_and_sequence_build_the_same_matrix():
    pairs = [(i, j) for i in range(7) for j in range(i + 1, 7)]
    values = [SAATY_SCALE[(3 * k) % len(SAATY_SCALE)] for k in range(21)]
    from_sequence = matrix_from_judgements(values)
    mapping = {}
    for k, ((i, j), v) in enumerate(zip(pairs, values, strict=True)):
        a, b = DIMENSION_LETTERS[i], DIMENSION_LETTERS[j]
        # every other pair is given the other way round, as its reciprocal
        mapping[(b, a) if k % 2 else f"{a}/{b}"] = 1 / v if k % 2 else v
    assert matrix_from_judgements(mapping) == [pytest.approx(row) for row in from_sequence]
    for i in range(7):
        assert from_sequence[i][i] == 1.0
        for j in range(7):
            assert from_sequence[i][j] * from_sequence[j][i] == pytest.approx(1.0, abs=1e-12)


def test_two_decimal_reciprocals_snap_to_the_scale():
    matrix = matrix_from_judgements({("F", "C"): 0.33, ("F", "U"): 0.14, ("C", "U"): 0.5}, ["F", "C", "U"])
    assert matrix[0][1] == 1 / 3 and matrix[1][0] == 3.0
    assert matrix[0][2] == 1 / 7 and matrix[2][0] == 7.0


@pytest.mark.parametrize("judgements, loc", [
    ({("F", "C"): 3}, "judgements"),                                   # 20 pairs missing
    ({("F", "X"): 3}, "judgements[F,X]"),                              # unknown criterion
    ({"F/F": 1}, "judgements[F/F]"),                                   # the diagonal
    ({"F/C": 10}, "judgements[F/C]"),                                  # off the scale
    ({"F/C": 2.5}, "judgements[F/C]"),                                 # between scale values
    ({"F/C": 0}, "judgements[F/C]"),
    ({"F/C": "3"}, "judgements[F/C]"),
    ({"F/C": True}, "judgements[F/C]"),
    ([3] * 20, "judgements"),                                          # 20 of 21
    ([3] * 20 + [float("nan")], "judgements[20]"),
])
def test_bad_judgements_are_named(judgements, loc):
    with pytest.raises(HRIError) as caught:
        matrix_from_judgements(judgements)
    assert loc in [p.loc for p in caught.value.problems]


def test_contradictory_duplicate_judgement_is_refused():
    values = {f"{DIMENSION_LETTERS[i]}/{DIMENSION_LETTERS[j]}": 2 for i in range(7) for j in range(i + 1, 7)}
    values[("C", "F")] = 2  # F/C was given as 2, so C/F must be 1/2
    with pytest.raises(HRIError) as caught:
        matrix_from_judgements(values)
    assert [p.loc for p in caught.value.problems] == ["judgements[C,F]"]
    assert "contradicts" in caught.value.problems[0].message


def test_non_strict_judgements_accept_intermediate_values():
    matrix = matrix_from_judgements({"a/b": 2.5}, ["a", "b"], strict=False)
    assert matrix == [[1.0, 2.5], [0.4, 1.0]]


def _bad(cell, value, base=None):
    matrix = [row[:] for row in (base or DRINKS_MATRIX)]
    i, j = cell
    matrix[i][j] = value
    return matrix


@pytest.mark.parametrize("matrix, loc, words", [
    (_bad((1, 0), 2), "matrix[1][0]", "reciprocal"),                   # C/F should be 1/9
    (_bad((0, 1), 8), "matrix[1][0]", "reciprocal"),                   # the lower cell is named
    (_bad((2, 2), 2), "matrix[2][2]", "diagonal"),
    (_bad((3, 4), -1), "matrix[3][4]", "positive"),
    (_bad((3, 4), 0), "matrix[3][4]", "positive"),
    (_bad((5, 6), "x"), "matrix[5][6]", "number"),
    (_bad((5, 6), None), "matrix[5][6]", "number"),
    (_bad((5, 6), float("inf")), "matrix[5][6]", "finite"),
    (DRINKS_MATRIX[:6], "matrix", "7x7"),
    ([row[:6] if k == 3 else row for k, row in enumerate(DRINKS_MATRIX)], "matrix[3]", "7 entries"),
    ("not a matrix", "matrix", "list"),
])
def test_bad_matrices_name_the_cell(matrix, loc, words):
    with pytest.raises(HRIError) as caught:
        validate_matrix(matrix)
    problems = {p.loc: p.message for p in caught.value.problems}
    assert loc in problems
    assert words in problems[loc]


def test_every_bad_cell_is_reported_at_once():
    matrix = _bad((1, 0), 2, _bad((6, 6), 3))
    with pytest.raises(HRIError) as caught:
        validate_matrix(matrix)
    assert {p.loc for p in caught.value.problems} == {"matrix[1][0]", "matrix[6][6]"}
    assert "(C/F)" in str(caught.value)


def test_small_reciprocity_slips_are_reconciled_symmetrically():
    values = validate_matrix([[1, 3], [0.33, 1]], ["a", "b"])
    assert values[0][1] == pytest.approx(math.sqrt(3 / 0.33))
    assert values[0][1] * values[1][0] == pytest.approx(1.0, abs=1e-15)


def test_aggregate_two_experts_by_hand():
    expert_1 = [[1, 2], [1 / 2, 1]]
    expert_2 = [[1, 8], [1 / 8, 1]]
    combined = aggregate_matrices([expert_1, expert_2], ["a", "b"])
    assert combined == [[1.0, pytest.approx(4.0)], [pytest.approx(0.25), 1.0]]  # sqrt(2 * 8) = 4


def test_aggregate_names_the_expert_and_cell():
    with pytest.raises(HRIError) as caught:
        aggregate_matrices([DRINKS_MATRIX, _bad((1, 0), 2)], DRINKS)
    assert [p.loc for p in caught.value.problems] == ["matrices[1][1][0]"]
    with pytest.raises(HRIError):
        aggregate_matrices([])


def test_rounding_remainder_goes_on_the_largest_weight():
    equal = weights_to_profile_dict({d: 1.0 for d in DIMENSION_LETTERS})
    # 1/7 rounds to 0.142857 and seven of those sum to 0.999999: the first largest (F) takes the rest
    assert equal["weights"]["F"] == 0.142858
    assert all(equal["weights"][d] == 0.142857 for d in DIMENSION_LETTERS[1:])
    skewed = weights_to_profile_dict({"F": 1, "C": 1, "U": 1, "O": 1, "S": 1, "P": 1, "H": 4})
    assert skewed["weights"]["H"] == 0.4 and skewed["weights"]["F"] == 0.1


@pytest.mark.parametrize("weights, loc", [
    ({"F": 1.0}, "weights"),
    ({**{d: 0.1 for d in DIMENSION_LETTERS}, "X": 0.1}, "weights.X"),
    ({**{d: 0.1 for d in DIMENSION_LETTERS}, "F": -0.1}, "weights.F"),
    ({**{d: 0.1 for d in DIMENSION_LETTERS}, "F": "high"}, "weights.F"),
    ({d: 0.0 for d in DIMENSION_LETTERS}, "weights"),
])
def test_bad_profile_weights_are_named(weights, loc):
    with pytest.raises(HRIError) as caught:
        weights_to_profile_dict(weights)
    assert loc in [p.loc for p in caught.value.problems]


def test_result_to_dict_is_json_ready():
    result = analyse_matrix([[1, 9, 1 / 9], [1 / 9, 1, 9], [9, 1 / 9, 1]], ["a", "b", "c"])
    data = json.loads(json.dumps(result.to_dict()))
    assert data["acceptable"] is False
    assert data["inconsistent"][0]["row"] in {"a", "b"}
    assert set(data["weights"]) == {"a", "b", "c"}


# --- the CLI, end to end --------------------------------------------------------------------


@pytest.fixture
def run_cli(tmp_path, hri_core_cli):
    """``run_cli(payload)``: ``python -m hri_core ahp FILE`` (in this process) on ``payload`` written to a file."""
    def run(payload, name="matrix.json"):
        path = tmp_path / name
        path.write_text(payload if isinstance(payload, str) else json.dumps(payload), encoding="utf-8")
        return hri_core_cli("ahp", str(path))
    return run


def test_cli_ahp_prints_weights_and_consistency(run_cli):
    done = run_cli({"matrix": DRINKS_MATRIX})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out["weights"]) == list(DIMENSION_LETTERS)
    assert [out["weights"][d] for d in DIMENSION_LETTERS] == pytest.approx(DRINKS_PUBLISHED, abs=1e-3)
    assert round(out["cr"], 3) == 0.022
    assert out["ci"] == pytest.approx(out["cr"] * 1.32)
    assert out["lambda_max"] == pytest.approx(7 + 6 * out["ci"])
    assert out["acceptable"] is True and out["inconsistent"] == []
    profile_from_dict(out["profile"])


def test_cli_ahp_names_inconsistent_judgements(run_cli):
    matrix = consistent_matrix([0.25, 0.20, 0.15, 0.10, 0.10, 0.10, 0.10])
    matrix[0][6], matrix[6][0] = 1 / 9, 9.0
    done = run_cli({"matrix": matrix})
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["acceptable"] is False and out["cr"] > 0.10
    assert (out["inconsistent"][0]["row"], out["inconsistent"][0]["col"]) == ("F", "H")


@pytest.mark.parametrize("payload, needle", [
    ({"matrix": _bad((1, 0), 2)}, "matrix[1][0]"),
    ({"matrix": _bad((4, 4), 0.5)}, "matrix[4][4]"),
    ({"matrix": DRINKS_MATRIX[:3]}, "7x7"),
    ({"weights": {}}, "matrix"),
    ("{not json", "malformed JSON"),
])
def test_cli_ahp_invalid_matrix_exits_2_naming_the_cell(run_cli, payload, needle):
    done = run_cli(payload)
    assert done.returncode == 2
    assert needle in done.stderr
    assert done.stdout == ""
