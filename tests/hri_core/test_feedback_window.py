"""The feedback floor's "repeated" counts validated feedback inside a window (paper section V.A).

Section V.A decays validated feedback so that the score "avoids indefinitely penalizing a corrected system".
The repeated-or-unresolved floor (Table IV) read the claim's lifetime feedback count, so two items resolved
two years ago still floored the answer at 50. The profile's ``feedback_repeat_window_days`` (default twice
the half-life) bounds it; feedback validated after the as-of time never counts, in custom floors too.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hri_core import FloorRule, ProfileError, default_profile, parse_response, profile_from_dict, score_response
from hri_core.feedback import repeat_window_start
from hri_core.profile import recommended_profile

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
FEEDBACK = "feedback-repeated-or-unresolved"


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def score(claims: list[dict], profile=None, as_of: datetime = AS_OF):
    record = {"response_id": "r", "claims": [{"claim_id": f"c{i}", **c} for i, c in enumerate(claims, start=1)]}
    return score_response(parse_response(record), profile or default_profile(), as_of)


def feedback_claim(age: timedelta, count: int = 2, resolved: bool | None = True, **extra) -> dict:
    return {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2, "feedback_at": iso(AS_OF - age),
            "feedback_count": count, "feedback_resolved": resolved, **extra}


def test_two_items_resolved_two_years_ago_do_not_floor_the_answer_at_50():
    for profile in (default_profile(), recommended_profile()):
        result = score([feedback_claim(timedelta(days=730))], profile)
        assert result.floors == ()
        assert result.score < 50
        assert result.band == "Low"


def test_repeated_feedback_inside_the_window_still_fires():
    result = score([feedback_claim(timedelta(days=59))])
    assert [f.rule_id for f in result.floors] == [FEEDBACK]
    assert result.score == pytest.approx(50.0)


def test_the_default_window_is_twice_the_half_life_and_inclusive():
    profile = default_profile()
    assert profile.feedback_repeat_window_days is None
    assert profile.repeat_window_days == 2 * profile.feedback_half_life_days == 60
    assert [f.rule_id for f in score([feedback_claim(timedelta(days=60))]).floors] == [FEEDBACK]
    assert score([feedback_claim(timedelta(days=60, microseconds=1))]).floors == ()
    longer = profile_from_dict({"feedback_half_life_days": 90})
    assert longer.repeat_window_days == 180
    assert [f.rule_id for f in score([feedback_claim(timedelta(days=179))], longer).floors] == [FEEDBACK]


def test_an_explicit_window_overrides_the_default():
    short = profile_from_dict({"feedback_repeat_window_days": 7})
    assert short.repeat_window_days == 7
    assert score([feedback_claim(timedelta(days=8))], short).floors == ()
    assert [f.rule_id for f in score([feedback_claim(timedelta(days=6))], short).floors] == [FEEDBACK]


def test_unresolved_feedback_fires_whatever_its_age():
    # "Confirmed unresolved feedback indicates persistent system risk" (Table IV): the window bounds
    # only the repetition
    result = score([feedback_claim(timedelta(days=730), count=1, resolved=False)])
    assert [f.rule_id for f in result.floors] == [FEEDBACK]
    unknown = score([feedback_claim(timedelta(days=730), count=1, resolved=None)])
    assert [f.rule_id for f in unknown.floors] == [FEEDBACK]


def test_repeated_feedback_of_unknown_time_counts_as_recent():
    # fail closed, as the decay does: no validation time, no proof it is old
    claim = {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "feedback_count": 3, "feedback_resolved": True}
    assert [f.rule_id for f in score([claim]).floors] == [FEEDBACK]


def test_feedback_validated_after_the_as_of_never_fires_a_custom_floor():
    base = default_profile()
    custom = FloorRule(rule_id="any-feedback", label="VALIDATED_NEGATIVE_FEEDBACK", min_criticality=1, value=0.6)
    profile = base.model_copy(update={"floors": base.floors + (custom,)})
    future = {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2,
              "feedback_at": iso(AS_OF + timedelta(seconds=1)), "feedback_count": 1, "feedback_resolved": True}
    assert score([future], profile).floors == ()
    # validated by the as-of time, it fires
    present = {**future, "feedback_at": iso(AS_OF)}
    assert [f.rule_id for f in score([present], profile).floors] == ["any-feedback"]


def test_feedback_dated_after_the_as_of_never_releases_its_answer():
    """Issue 34, class 7: the claim counts 0 (not validated yet at the as-of time) and scored HRI 0, Low, release,
    where the same claim without a time scores caution. Its answer is at least review, the reason naming it."""
    from hri_core.decision import decide_scored

    tomorrow = {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2,
                "feedback_at": iso(AS_OF + timedelta(days=1)), "feedback_count": 1, "feedback_resolved": True}
    for profile in (default_profile(), recommended_profile(),
                    default_profile().model_copy(update={"floors": ()})):  # no floor could catch it
        result = score([tomorrow, {"labels": ["SUPPORTED"]}], profile)
        assert (result.hri, result.band, result.action) == (0.0, "Low", "release")  # the paper's number, kept
        assert result.late_feedback == ("c1",)
        assert result.to_output()["late_feedback"] == ["c1"]
        decision = decide_scored(result)
        assert decision.decision == "review"
        assert decision.reasons[-1] == ("claim c1 carries validated negative feedback dated after the as-of time: "
                                        "at least review")
    # validated at the as-of time, or with no time at all, it is counted: nothing late
    for when in (iso(AS_OF), None):
        assert score([{**tomorrow, "feedback_at": when}]).late_feedback == ()
    # a claim without the label carries no feedback the score would leave out
    assert score([{**tomorrow, "labels": ["UNSUPPORTED"]}]).late_feedback == ()


def test_the_window_setting_keeps_stored_fingerprints_and_round_trips():
    profile = default_profile()
    assert "feedback_repeat_window_days" not in profile.to_dict()
    assert profile.fingerprint() == "5b13084f24d849eb2a43fc5f7ce084dc8ef9b9d728880f6a9a23cf88dda8d018"
    windowed = profile_from_dict({"feedback_repeat_window_days": 45})
    assert windowed.to_dict()["feedback_repeat_window_days"] == 45
    assert windowed.fingerprint() != profile.fingerprint()
    assert profile_from_dict(windowed.to_dict()) == windowed


@pytest.mark.parametrize("value", [0, -1, float("inf"), float("nan")])
def test_a_window_must_be_a_positive_number_of_days(value):
    with pytest.raises(ProfileError) as caught:
        profile_from_dict({"feedback_repeat_window_days": value})
    assert "feedback_repeat_window_days" in str(caught.value)


def test_a_window_longer_than_the_calendar_covers_all_time():
    assert repeat_window_start(AS_OF, 10.0**9) is None
    assert repeat_window_start(AS_OF, 1.5) == AS_OF - timedelta(days=1.5)
    huge = profile_from_dict({"feedback_half_life_days": 10.0**300})
    assert [f.rule_id for f in score([feedback_claim(timedelta(days=730))], huge).floors] == [FEEDBACK]
