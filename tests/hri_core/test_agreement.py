"""Inter-annotator agreement: Krippendorff's worked example, the PyPI ``krippendorff`` package as an
independent implementation, Cohen's kappa by hand and from a textbook table, and the properties
(perfect agreement, invariance to unit order and rater names)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.agreement import (
    LEVELS,
    AgreementError,
    Rating,
    alpha_by_group,
    bootstrap_alpha,
    bootstrap_kappa,
    cohen_kappa,
    confusion_matrices,
    group_ratings,
    krippendorff_alpha,
    multilabel_agreement,
    pairwise_agreement,
    ratings_by_rater_pair,
    severity_from_contributions,
)
from hri_core.profile import default_profile

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "agreement"

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers A-D,
# twelve units, values 1-5, "." = missing. Unit 12 has one value only and is not pairable (n = 40).
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}


def from_matrix(matrix: dict[str, list[float | None]]) -> list[Rating]:
    return [Rating(f"u{unit}", rater, float(value)) for rater, row in matrix.items()
            for unit, value in enumerate(row, start=1) if value is not None]


def as_reliability_data(ratings: list[Rating]) -> np.ndarray:
    """raters x units with NaN for missing: the ``krippendorff`` package's input."""
    raters = sorted({r.rater for r in ratings})
    units = sorted({r.unit for r in ratings})
    data = np.full((len(raters), len(units)), np.nan)
    for unit, rater, value in ratings:
        data[raters.index(rater), units.index(unit)] = value
    return data


# --- Krippendorff's worked example --------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
def test_krippendorff_2011_worked_example(level):
    result = krippendorff_alpha(from_matrix(KRIPPENDORFF_2011), level)
    assert round(result.alpha, 3) == PUBLISHED[level]
    assert (result.units, result.raters, result.pairable) == (12, 4, 40)
    assert result.note is None


def test_worked_example_nominal_by_hand():
    # value counts over the pairable units (1-11): n_1..n_5 = 9, 13, 10, 5, 3 (n = 40). Off-diagonal
    # coincidences: unit 2 (2,2,3,2) gives 2*3*1/(4-1) = 2, unit 6 (1,2,3,4) gives 4*3/(4-1) = 4, unit 8
    # (1,1,2,1) gives 2; 8 in all. alpha = 1 - (n - 1) * 8 / (n^2 - sum n_c^2) = 1 - 39 * 8 / 1216.
    result = krippendorff_alpha(from_matrix(KRIPPENDORFF_2011), "nominal")
    assert result.alpha == pytest.approx(1 - 39 * 8 / (40 ** 2 - (9 ** 2 + 13 ** 2 + 10 ** 2 + 5 ** 2 + 3 ** 2)),
                                         abs=1e-12)
    assert result.observed == pytest.approx(8 / 40)


# --- the independent implementation (PyPI ``krippendorff``) ---------------------------------------


def random_ratings(seed: int, raters: int, units: int, values: int, missing: float) -> list[Rating]:
    rng = random.Random(seed)
    ratings = []
    for unit in range(units):
        truth = rng.randrange(values)
        for rater in range(raters):
            if rng.random() < missing:
                continue
            value = truth if rng.random() < 0.6 else rng.randrange(values)
            ratings.append(Rating(f"u{unit}", f"r{rater}", float(value * 2 + 1)))  # odd numbers: not 0..V-1
    return ratings


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed, raters, units, values, missing", [
    (1, 2, 30, 3, 0.0),
    (2, 2, 50, 5, 0.3),
    (3, 3, 40, 4, 0.25),
    (4, 5, 60, 7, 0.4),
    (5, 12, 25, 5, 0.5),
    (6, 30, 15, 10, 0.6),
    (7, 4, 200, 2, 0.2),
])
def test_alpha_equals_the_krippendorff_package(level, seed, raters, units, values, missing):
    ratings = random_ratings(seed, raters, units, values, missing)
    ours = krippendorff_alpha(ratings, level)
    theirs = krippendorff.alpha(reliability_data=as_reliability_data(ratings), level_of_measurement=level)
    assert ours.alpha == pytest.approx(theirs, abs=1e-6)


# --- properties ----------------------------------------------------------------------------------------


@hs.composite
def rating_sets(draw) -> list[Rating]:
    raters = draw(hs.integers(2, 6))
    units = draw(hs.integers(2, 25))
    ratings = []
    for unit in range(units):
        for rater in range(raters):
            value = draw(hs.one_of(hs.none(), hs.integers(1, 5)))
            if value is not None:
                ratings.append(Rating(f"u{unit}", f"r{rater}", float(value)))
    return ratings


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.integers(1, 5), min_size=2, max_size=20), hs.integers(2, 6), hs.sampled_from(LEVELS))
def test_perfect_agreement_gives_one(truths, raters, level):
    if len(set(truths)) < 2:
        truths = [*truths, truths[0] + 1]  # alpha needs some variation to be defined
    ratings = [Rating(f"u{u}", f"r{r}", float(v)) for u, v in enumerate(truths) for r in range(raters)]
    assert krippendorff_alpha(ratings, level).alpha == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(rating_sets(), hs.sampled_from(LEVELS), hs.randoms(use_true_random=False))
def test_alpha_is_invariant_to_unit_order_and_rater_names(ratings, level, rng):
    before = krippendorff_alpha(ratings, level)
    raters = sorted({r.rater for r in ratings})
    renamed = dict(zip(raters, rng.sample([f"annotator-{i}" for i in range(100)], len(raters)), strict=True))
    units = sorted({r.unit for r in ratings})
    relabelled_units = dict(zip(units, rng.sample([f"claim-{i}" for i in range(1000)], len(units)), strict=True))
    shuffled = [Rating(relabelled_units[u], renamed[r], v) for u, r, v in ratings]
    rng.shuffle(shuffled)
    after = krippendorff_alpha(shuffled, level)
    if before.alpha is None:
        assert after.alpha is None and after.note == before.note
    else:
        assert after.alpha == pytest.approx(before.alpha, abs=1e-12)
    assert (after.pairable, after.units, after.raters) == (before.pairable, before.units, before.raters)


@settings(max_examples=40, deadline=None)
@given(rating_sets())
def test_ordinal_alpha_depends_only_on_rank(ratings):
    # any strictly increasing relabelling of the values leaves ordinal alpha unchanged
    squashed = [Rating(u, r, float(v) ** 3 + 100.0) for u, r, v in ratings]
    before, after = krippendorff_alpha(ratings, "ordinal"), krippendorff_alpha(squashed, "ordinal")
    assert (before.alpha is None) == (after.alpha is None)
    if before.alpha is not None:
        assert after.alpha == pytest.approx(before.alpha, abs=1e-12)


def test_ordinal_with_an_explicit_order_matches_numeric_ranks():
    names = {1.0: "low", 2.0: "medium", 3.0: "high", 4.0: "very high", 5.0: "extreme"}
    ratings = from_matrix(KRIPPENDORFF_2011)
    named = [Rating(u, r, names[float(v)]) for u, r, v in ratings]
    explicit = krippendorff_alpha(named, "ordinal", order=["low", "medium", "high", "very high", "extreme"])
    assert explicit.alpha == pytest.approx(krippendorff_alpha(ratings, "ordinal").alpha, abs=1e-12)


# --- undefined alpha, bad input --------------------------------------------------------------------


def test_no_pairable_values_gives_none_with_a_note():
    result = krippendorff_alpha([Rating("u1", "a", "x"), Rating("u2", "b", "y")])
    assert result.alpha is None and result.pairable == 0
    assert "no pairable values" in result.note


def test_identical_values_give_none_with_a_note():
    result = krippendorff_alpha([Rating(u, r, 3.0) for u in ("u1", "u2") for r in ("a", "b")], "interval")
    assert result.alpha is None and result.pairable == 4
    assert "expected disagreement is 0" in result.note


def test_units_rated_once_contribute_nothing():
    base = from_matrix(KRIPPENDORFF_2011)
    extra = base + [Rating("lonely", "A", 5.0), Rating("lonely-2", "C", 1.0)]
    assert krippendorff_alpha(extra, "interval").alpha == krippendorff_alpha(base, "interval").alpha
    assert krippendorff_alpha(extra, "interval").units == 14


def test_identical_duplicate_counts_once_and_a_conflict_is_named():
    ratings = [Rating("u1", "a", "x"), Rating("u1", "b", "x"), Rating("u2", "a", "x"), Rating("u2", "b", "y")]
    assert krippendorff_alpha([*ratings, Rating("u1", "a", "x")]).alpha == krippendorff_alpha(ratings).alpha
    with pytest.raises(AgreementError) as caught:
        krippendorff_alpha([*ratings, Rating("u2", "b", "x")])
    assert caught.value.problems[0].loc == "unit 'u2', rater 'b'"


@pytest.mark.parametrize("level, value, needle", [
    ("interval", "high", "not a finite number"),
    ("ordinal", "high", "not a finite number"),
    ("interval", float("nan"), "not a finite number"),
    ("ratio", -1.0, "negative"),
])
def test_values_the_level_cannot_use_are_refused(level, value, needle):
    with pytest.raises(AgreementError) as caught:
        krippendorff_alpha([Rating("u1", "a", 1.0), Rating("u1", "b", value)], level)
    assert needle in caught.value.problems[0].message and "rater 'b'" in caught.value.problems[0].loc


# --- Cohen's kappa ---------------------------------------------------------------------------------------


def ratings_from_table(table: dict[tuple[str, str], int]) -> list[Rating]:
    ratings, unit = [], 0
    for (first, second), count in table.items():
        for _ in range(count):
            ratings += [Rating(f"u{unit}", "A", first), Rating(f"u{unit}", "B", second)]
            unit += 1
    return ratings


def test_kappa_textbook_two_by_two():
    # the standard 50-proposal example (e.g. Wikipedia "Cohen's kappa"): yes/yes 20, yes/no 5, no/yes 10,
    # no/no 15 -> p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4
    result = cohen_kappa(ratings_from_table({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10,
                                             ("no", "no"): 15}))
    assert result.units == 50
    assert result.observed == pytest.approx(0.7) and result.expected == pytest.approx(0.5)
    assert result.kappa == pytest.approx(0.4)


def test_kappa_three_categories_by_hand():
    # A: S S S P P U U U C C   B: S S P P U U U C C S
    first = ["S", "S", "S", "P", "P", "U", "U", "U", "C", "C"]
    second = ["S", "S", "P", "P", "U", "U", "U", "C", "C", "S"]
    ratings = [Rating(f"u{i}", rater, value) for i, pair in enumerate(zip(first, second, strict=True))
               for rater, value in zip("AB", pair, strict=True)]
    # agreements: units 0,1,3,5,6,8 -> p_o = 6/10; marginals A: S3 P2 U3 C2, B: S3 P2 U3 C2
    p_o, p_e = 6 / 10, (3 * 3 + 2 * 2 + 3 * 3 + 2 * 2) / 100
    result = cohen_kappa(ratings)
    assert result.kappa == pytest.approx((p_o - p_e) / (1 - p_e))
    assert result.raters == ("A", "B")


def test_kappa_uses_units_both_rated_only_and_needs_two_raters():
    ratings = ratings_from_table({("x", "x"): 3, ("x", "y"): 1}) + [Rating("only-a", "A", "y")]
    assert cohen_kappa(ratings).units == 4
    with pytest.raises(AgreementError, match="exactly two raters"):
        cohen_kappa([*ratings, Rating("u0", "C", "x")])
    assert cohen_kappa([*ratings, Rating("u0", "C", "x")], raters=("A", "B")).units == 4


def test_kappa_undefined_when_chance_agreement_is_one():
    result = cohen_kappa(ratings_from_table({("x", "x"): 4}))
    assert result.kappa is None and "chance agreement is 1" in result.note
    assert cohen_kappa([Rating("u1", "A", "x"), Rating("u2", "B", "x")]).kappa is None


# --- confusion matrices, grouping, pairs ------------------------------------------------------------


def test_confusion_matrix_per_rater_pair():
    ratings = from_matrix(KRIPPENDORFF_2011)
    matrices = confusion_matrices(ratings)
    assert set(matrices) == {("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"), ("C", "D")}
    ab = matrices[("A", "B")]
    assert ab.categories == (1.0, 2.0, 3.0, 4.0, 5.0)
    # A and B both rated units 1-9; they differ only on unit 6 (A 1, B 2)
    assert ab.units == 9
    assert ab.counts[0] == (2, 1, 0, 0, 0)
    assert sum(ab.counts[i][i] for i in range(5)) == 8
    assert matrices[("B", "C")].units == 9  # units 2-10


def test_pairwise_agreement_and_groups():
    ratings = from_matrix(KRIPPENDORFF_2011)
    pairs = pairwise_agreement(ratings, "interval")
    # A rated units 1-9, D units 1-11: they share 9 units, 18 pairable values
    assert pairs[("A", "D")].kappa.units == pairs[("A", "D")].confusion.units == 9
    assert pairs[("A", "D")].alpha.pairable == 18
    subset = ratings_by_rater_pair(ratings)[("A", "D")]
    assert {r.rater for r in subset} == {"A", "D"} and len(subset) == 18
    batch = {f"u{i}": ("first" if i <= 6 else "second") for i in range(1, 13)}
    by_batch = alpha_by_group(ratings, lambda r: batch[r.unit], "nominal")
    assert set(by_batch) == {"first", "second"}
    assert by_batch["first"].units == 6 and by_batch["second"].units == 6
    assert list(group_ratings(ratings, lambda r: r.rater)) == ["A", "B", "C", "D"]


# --- multi-label claims ---------------------------------------------------------------------------------


SEVERITY = severity_from_contributions({label.value: c for label, c in default_profile().contributions.items()})


def test_severity_from_the_profile_contributions():
    assert SEVERITY[0] in {"CONTRADICTED", "VALIDATED_NEGATIVE_FEEDBACK"}
    assert SEVERITY[-1] == "SUPPORTED" and SEVERITY[-2] == "PARTIAL"
    assert severity_from_contributions({"b": 0.5, "a": 0.5, "c": 1.0}) == ("c", "b", "a")


def test_multilabel_per_label_and_worst_label():
    claims = [
        ("c1", "ann1", {"SUPPORTED"}), ("c1", "ann2", {"SUPPORTED"}),
        ("c2", "ann1", {"CONTRADICTED", "OUTDATED"}), ("c2", "ann2", {"OUTDATED"}),
        ("c3", "ann1", {"UNSUPPORTED"}), ("c3", "ann2", {"UNSUPPORTED", "PARTIAL"}),
        ("c4", "ann1", {"OUTDATED"}), ("c4", "ann2", {"OUTDATED"}),
    ]
    result = multilabel_agreement(claims, SEVERITY, labels=["SUPPORTED", "OUTDATED", "CONTRADICTED"])
    assert set(result.per_label) == {"SUPPORTED", "OUTDATED", "CONTRADICTED"}
    assert result.per_label["SUPPORTED"].alpha == pytest.approx(1.0)
    assert result.per_label["OUTDATED"].alpha == pytest.approx(1.0)
    # CONTRADICTED: present/absent = (a,a), (p,a), (a,a), (a,a): the one disagreement
    contradicted = krippendorff_alpha([Rating(u, r, "present" if "CONTRADICTED" in s else "absent")
                                       for u, r, s in claims])
    assert result.per_label["CONTRADICTED"].alpha == contradicted.alpha
    # worst labels: c1 S/S, c2 CONTRADICTED/OUTDATED, c3 UNSUPPORTED/UNSUPPORTED, c4 OUTDATED/OUTDATED
    worst = krippendorff_alpha([Rating("c1", "1", "S"), Rating("c1", "2", "S"), Rating("c2", "1", "C"),
                                Rating("c2", "2", "O"), Rating("c3", "1", "U"), Rating("c3", "2", "U"),
                                Rating("c4", "1", "O"), Rating("c4", "2", "O")])
    assert result.worst.alpha == pytest.approx(worst.alpha)
    ordinal = multilabel_agreement(claims, SEVERITY, worst_level="ordinal").worst
    assert ordinal.level == "ordinal" and ordinal.alpha is not None


def test_multilabel_takes_a_bare_string_as_one_label():
    claims = [("c1", "a", "OUTDATED"), ("c1", "b", {"OUTDATED"}), ("c2", "a", "SUPPORTED"), ("c2", "b", ["SUPPORTED"])]
    assert multilabel_agreement(claims, SEVERITY).worst.alpha == pytest.approx(1.0)


def test_multilabel_refuses_unknown_and_empty_label_sets():
    with pytest.raises(AgreementError) as caught:
        multilabel_agreement([("c1", "a", {"MADE_UP"}), ("c1", "b", set())], SEVERITY)
    assert [p.loc for p in caught.value.problems] == ["unit 'c1', rater 'a'", "unit 'c1', rater 'b'"]


# --- bootstrap ---------------------------------------------------------------------------------------------


def test_bootstrap_alpha_is_seeded_and_brackets_the_estimate():
    ratings = random_ratings(11, 3, 80, 4, 0.2)
    first = bootstrap_alpha(ratings, "interval", samples=400, seed=7)
    assert first == bootstrap_alpha(ratings, "interval", samples=400, seed=7)
    assert first != bootstrap_alpha(ratings, "interval", samples=400, seed=8)
    assert first.estimate == krippendorff_alpha(ratings, "interval").alpha
    assert first.low < first.estimate < first.high
    narrower = bootstrap_alpha(ratings, "interval", samples=400, seed=7, confidence=0.5)
    assert first.low < narrower.low < narrower.high < first.high


def test_bootstrap_of_perfect_agreement_is_a_point_and_kappa_interval():
    ratings = [Rating(f"u{u}", r, float(u % 3)) for u in range(30) for r in ("A", "B")]
    interval = bootstrap_alpha(ratings, "nominal", samples=200, seed=1)
    assert interval.low == interval.high == pytest.approx(1.0)
    textbook = ratings_from_table({("yes", "yes"): 20, ("yes", "no"): 5, ("no", "yes"): 10, ("no", "no"): 15})
    kappa = bootstrap_kappa(textbook, samples=500, seed=3)
    assert kappa.estimate == pytest.approx(0.4) and kappa.low < 0.4 < kappa.high
    assert kappa.undefined == 0 and kappa.samples == 500


def test_bootstrap_counts_undefined_resamples():
    # one unit disagrees, nine agree on the same value: a resample missing the odd unit has D_e = 0
    ratings = [Rating(f"u{u}", r, "x") for u in range(9) for r in ("A", "B")]
    ratings += [Rating("odd", "A", "x"), Rating("odd", "B", "y")]
    interval = bootstrap_alpha(ratings, samples=300, seed=2)
    assert 0 < interval.undefined < 300
    with pytest.raises(AgreementError):
        bootstrap_alpha(ratings, samples=0)


# --- the CLI, end to end ------------------------------------------------------------------------------------


def run_cli(path: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hri_core", "agreement", str(path), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_cli_reproduces_the_worked_example(level):
    done = run_cli(DATA / "krippendorff_2011.csv", "--level", level)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert list(out) == ["alpha", "units", "raters", "pairable"]  # four raters: no kappa
    assert round(out["alpha"], 3) == PUBLISHED[level]
    assert (out["units"], out["raters"], out["pairable"]) == (12, 4, 40)


def test_cli_two_raters_kappa_bom_extra_columns_and_duplicates(tmp_path):
    path = tmp_path / "two.csv"
    rows = ["1,A,yes,first", "1,B,yes,", "2,A,no,", "2,B,yes,", "3,A,no,", "3,B,no,", "3,B,no,again",
            "4,A,yes,", "5,B,no,"]
    path.write_text("unit,rater,value,comment\n" + "\n".join(rows) + "\n", encoding="utf-8-sig")
    done = run_cli(path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # units 1-3 are rated by both: yes/yes, no/yes, no/no -> p_o 2/3, p_e (1*2 + 2*1)/9 = 4/9, kappa 0.4
    assert out["kappa"] == pytest.approx(0.4)
    expected = krippendorff_alpha([Rating("1", "A", "yes"), Rating("1", "B", "yes"), Rating("2", "A", "no"),
                                   Rating("2", "B", "yes"), Rating("3", "A", "no"), Rating("3", "B", "no")])
    assert out["alpha"] == pytest.approx(expected.alpha)
    assert (out["units"], out["raters"], out["pairable"]) == (5, 2, 6)
    assert "note" not in out
    assert "row 8: duplicate of row 7" in done.stderr


def test_cli_nominal_values_are_strings_and_numbers_at_other_levels(tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("unit,rater,value\n1,A,1\n1,B,1.0\n2,A,2\n2,B,2\n", encoding="utf-8")
    nominal = json.loads(run_cli(path).stdout)
    interval = json.loads(run_cli(path, "--level", "interval").stdout)
    assert nominal["alpha"] < 1.0  # "1" and "1.0" are two categories
    assert interval["alpha"] == pytest.approx(1.0) and interval["kappa"] == pytest.approx(1.0)


def test_cli_undefined_alpha_is_null_with_a_note(tmp_path):
    path = tmp_path / "same.csv"
    path.write_text("unit,rater,value\n1,A,x\n1,B,x\n2,A,x\n2,B,x\n3,C,y\n", encoding="utf-8")
    done = run_cli(path)
    assert done.returncode == 0, done.stderr
    assert "NaN" not in done.stdout
    out = json.loads(done.stdout)
    assert out["alpha"] is None and "kappa" not in out  # three raters
    assert "expected disagreement is 0" in out["note"]
    lonely = tmp_path / "lonely.csv"
    lonely.write_text("unit,rater,value\n1,A,x\n2,B,y\n", encoding="utf-8")
    out = json.loads(run_cli(lonely).stdout)
    assert out["alpha"] is None and out["kappa"] is None and out["pairable"] == 0
    assert "no pairable values" in out["note"] and "no unit was rated by both" in out["note"]


BAD_FILES = {
    # file: (level, [(row, field) named on stderr])
    "missing_column.csv": ("nominal", [("header", "missing column(s) rater")]),
    "empty_value.csv": ("nominal", [("row 3: value", "empty value")]),
    "empty_rater.csv": ("nominal", [("row 3: rater", "empty value")]),
    "short_row.csv": ("nominal", [("row 3: value", "empty value")]),
    "non_numeric.csv": ("ordinal", [("row 4: value", "'high' is not a finite number")]),
    "conflicting_duplicate.csv": ("nominal", [("row 5: value", "already rated unit '2' as '3' in row 4")]),
}


def test_every_bad_agreement_file_has_an_expectation():
    assert {p.name for p in (DATA / "bad").iterdir()} == set(BAD_FILES)


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_cli_bad_input_exits_2_naming_row_and_field(name):
    level, expected = BAD_FILES[name]
    done = run_cli(DATA / "bad" / name, "--level", level)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == len(expected)
    for line, (where, needle) in zip(lines, expected, strict=True):
        assert line.startswith(f"{DATA / 'bad' / name}: {where}: ")
        assert needle in line


def test_cli_interval_rejects_non_finite_and_nominal_accepts_any_text():
    assert run_cli(DATA / "bad" / "non_numeric.csv", "--level", "interval").returncode == 2
    assert run_cli(DATA / "bad" / "non_numeric.csv", "--level", "nominal").returncode == 0


def test_cli_non_utf8_file_is_bad_input(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("unit,rater,value\n1,A,café\n".encode("latin-1"))
    done = run_cli(path)
    assert done.returncode == 2 and "not UTF-8 text" in done.stderr and done.stdout == ""


def test_cli_missing_file_exits_1(tmp_path):
    done = run_cli(tmp_path / "absent.csv")
    assert done.returncode == 1 and "cannot read" in done.stderr and done.stdout == ""
