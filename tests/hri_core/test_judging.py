"""hri_core.judging and hri_core.judge_fitting: verdicts, judge profiles, fail-safe judging, metrics."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from hri_core.errors import HRIError
from hri_core.judge_fitting import clearance_curve, clearance_threshold, fit_logistic, predict_logistic
from hri_core.judging import (
    Judge,
    JudgeProfile,
    JudgeProfileError,
    Verdict,
    abstention,
    evaluate_verdicts,
    judge_profile_from_dict,
    judge_safely,
    wilson_interval,
)
from hri_core.vocabulary import Label

S, P, U, C = Label.SUPPORTED, Label.PARTIAL, Label.UNSUPPORTED, Label.CONTRADICTED
PROFILE = JudgeProfile(name="test-judge", version=3, backend="test", thresholds={"supported": 0.5})


# --- Verdict and JudgeProfile -------------------------------------------------------------------------


def test_verdict_label_is_null_exactly_when_abstained():
    with pytest.raises(ValidationError, match="null exactly when"):
        Verdict(label=S, confidence=0.9, reason="r", abstained=True, backend="b", profile="p@1")
    with pytest.raises(ValidationError, match="null exactly when"):
        Verdict(label=None, confidence=0.1, reason="r", abstained=False, backend="b", profile="p@1")
    line = Verdict(label=None, confidence=0.123456, reason="r", abstained=True, backend="b", profile="p@1").to_line("x")
    assert line == {"id": "x", "label": None, "confidence": 0.1235, "abstained": True}


def test_a_judge_proposes_only_judge_labels():
    with pytest.raises(ValidationError, match="a judge proposes only"):
        Verdict(label=Label.OUTDATED, confidence=0.9, reason="r", abstained=False, backend="b", profile="p@1")
    with pytest.raises(ValidationError):
        Verdict(label=S, confidence=1.5, reason="r", abstained=False, backend="b", profile="p@1")


def test_profile_round_trips_and_names_its_version():
    profile = JudgeProfile(name="offline-x", version=2, backend="offline-lexical",
                           thresholds={"supported": 0.4}, weights={"supported": {"bias": -1.0}})
    assert profile.key == "offline-x@2"
    assert judge_profile_from_dict(profile.model_dump(mode="json")) == profile


@pytest.mark.parametrize(("data", "field"), [
    ({"name": "p", "version": 1, "backend": "b", "treshold": {}}, "treshold"),
    ({"name": "p", "version": 0, "backend": "b"}, "version"),
    ({"name": "P Q", "version": 1, "backend": "b"}, "name"),
    ({"version": 1, "backend": "b"}, "name"),
    ({"name": "p", "version": 1, "backend": "b", "thresholds": {"supported": "high"}}, "thresholds.supported"),
])
def test_invalid_profile_names_the_field(data, field):
    with pytest.raises(JudgeProfileError) as info:
        judge_profile_from_dict(data)
    assert field in [p["field"] for p in info.value.as_dict()["problems"]]


def test_non_finite_threshold_and_missing_threshold_are_profile_errors():
    with pytest.raises(JudgeProfileError, match="thresholds.supported"):
        judge_profile_from_dict({"name": "p", "version": 1, "backend": "b", "thresholds": {"supported": math.inf}})
    with pytest.raises(JudgeProfileError, match="thresholds.abstain: missing"):
        PROFILE.threshold("abstain")


# --- judges fail safe ----------------------------------------------------------------------------------


class _Raising(Judge):
    profile = PROFILE

    def judge(self, claim: str, evidence: Sequence[str]) -> Verdict:
        raise TimeoutError("backend timed out")


class _Sloppy(Judge):
    profile = PROFILE

    def judge(self, claim: str, evidence: Sequence[str]) -> Verdict:
        return "SUPPORTED"  # type: ignore[return-value]  # a broken backend


def test_a_failing_backend_abstains_and_names_the_failure():
    verdict = judge_safely(_Raising(), "claim", ["evidence"])
    assert verdict.abstained and verdict.label is None
    assert "TimeoutError: backend timed out" in verdict.reason
    assert verdict.profile == "test-judge@3" and verdict.backend == "test"
    batch = _Raising().judge_batch([("a", ["x"]), ("b", ["y"])])
    assert [v.abstained for v in batch] == [True, True]


def test_a_backend_returning_a_bare_label_is_never_taken_at_its_word():
    verdict = judge_safely(_Sloppy(), "claim", ["evidence"])
    assert verdict.label is None and "not a Verdict" in verdict.reason
    assert abstention(PROFILE, "why").confidence == 0.0


# --- metrics -------------------------------------------------------------------------------------------

GOLD = [S, S, S, P, U, C, U]
PRED = [S, None, U, S, U, U, None]


def test_metrics_on_a_hand_built_case():
    result = evaluate_verdicts(GOLD, PRED, categories=["a", "a", "b", "a", "b", "b", None])
    assert result.accuracy == pytest.approx(2 / 7)  # pairs 0 and 4
    assert result.answered_accuracy == pytest.approx(2 / 5)
    assert (result.coverage.count, result.coverage.total) == (5, 7)
    # F1: SUPPORTED p=1/2 r=1/3 -> 0.4; PARTIAL 0; UNSUPPORTED p=1/3 r=1/2 -> 0.4; CONTRADICTED 0
    assert result.macro_f1 == pytest.approx(0.2)
    assert (result.false_clearance.count, result.false_clearance.total) == (1, 4)  # the PARTIAL one
    assert {k: (v.count, v.total) for k, v in result.false_clearance_by_label.items()} == {
        "PARTIAL": (1, 1), "UNSUPPORTED": (0, 2), "CONTRADICTED": (0, 1)}
    # category a: negatives = pair 3 (cleared); b: pairs 4 and 5; the uncategorised pair 6 is left out
    assert {k: (v.count, v.total) for k, v in result.false_clearance_by_category.items()} == {"a": (1, 1), "b": (0, 2)}
    assert (result.supported_recall.count, result.supported_recall.total) == (1, 3)
    assert (result.supported_precision.count, result.supported_precision.total) == (1, 2)
    assert result.confusion["SUPPORTED"] == {"SUPPORTED": 1, "PARTIAL": 0, "UNSUPPORTED": 1, "CONTRADICTED": 0,
                                             "ABSTAINED": 1}
    assert sum(sum(row.values()) for row in result.confusion.values()) == len(GOLD)


def test_abstaining_on_everything_clears_nothing_and_covers_nothing():
    result = evaluate_verdicts(GOLD, [None] * len(GOLD))
    assert result.false_clearance.value == 0.0 and result.coverage.value == 0.0
    assert result.supported_recall.value == 0.0 and result.supported_precision.value is None
    assert result.accuracy == 0.0 and result.answered_accuracy is None


def test_macro_f1_is_over_the_gold_classes_only():
    # No PARTIAL or CONTRADICTED in gold: two classes, both perfect.
    assert evaluate_verdicts([S, U, U], [S, U, U]).macro_f1 == 1.0


def test_calibration_error_uses_the_verdict_families():
    # A PARTIAL verdict ("supported at least in part") is right about a fully supported claim; an
    # UNSUPPORTED verdict ("not supported") is right about a contradicted one.
    sure = evaluate_verdicts([S, C], [P, U], confidences=[1.0, 1.0])
    assert sure.calibration_error == pytest.approx(0.0)
    wrong = evaluate_verdicts([U, U], [S, S], confidences=[0.9, 0.9])
    assert wrong.calibration_error == pytest.approx(0.9)


def test_metric_input_errors_name_the_problem():
    with pytest.raises(HRIError, match="same length"):
        evaluate_verdicts([S, U], [S])
    with pytest.raises(HRIError, match=r"gold\[1\]"):
        evaluate_verdicts([S, Label.OUTDATED], [S, None])


@pytest.mark.parametrize(("count", "total", "low", "high"), [
    (0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (56, 1458, 0.0297, 0.0495)])
def test_wilson_interval_matches_published_values(count, total, low, high):
    lo, hi = wilson_interval(count, total)
    assert (round(lo, 4), round(hi, 4)) == (low, high)


# --- fitting -------------------------------------------------------------------------------------------


def test_fit_logistic_recovers_the_direction_and_calibrates():
    # y = 1 with probability 0.2 at x=0 and 0.8 at x=1 (10 rows each): the fit gives those probabilities.
    rows = [[1.0, 0.0]] * 10 + [[1.0, 1.0]] * 10
    targets = [True] * 2 + [False] * 8 + [True] * 8 + [False] * 2
    weights = fit_logistic(rows, targets, l2=0.0)
    assert predict_logistic([[1.0, 0.0], [1.0, 1.0]], weights) == pytest.approx([0.2, 0.8], abs=1e-6)
    with pytest.raises(HRIError, match="both classes"):
        fit_logistic(rows, [True] * 20)


def test_clearance_threshold_keeps_the_upper_bound_under_the_limit_from_there_on():
    # 100 negatives scored 0..0.99, 20 positives scored 0.9 and up; one negative per score step.
    scores = [i / 100 for i in range(100)] + [0.9 + i / 200 for i in range(20)]
    supported = [False] * 100 + [True] * 20
    eligible = [True] * 120
    point = clearance_threshold(scores, supported, eligible, max_false_clearance=0.10)
    assert point.false_clearance.high <= 0.10
    above = [p for p in clearance_curve(scores, supported, eligible) if p.threshold >= point.threshold]
    assert all(p.false_clearance.high <= 0.10 for p in above)
    lower = [p for p in clearance_curve(scores, supported, eligible) if p.threshold < point.threshold]
    assert lower[-1].false_clearance.high > 0.10  # one step lower would break the limit


def test_ineligible_pairs_are_never_cleared_and_no_threshold_means_nothing_cleared():
    # (0 of 1 negative cleared has a Wilson upper bound of 0.79, hence the loose limit)
    point = clearance_threshold([0.99, 0.98], [False, True], [False, True], max_false_clearance=0.8)
    assert point.false_clearance.count == 0 and point.supported_recall.count == 1
    nothing = clearance_threshold([0.9, 0.8], [False, False], [True, True], max_false_clearance=0.0)
    assert nothing.threshold > 0.9 and nothing.false_clearance.count == 0
