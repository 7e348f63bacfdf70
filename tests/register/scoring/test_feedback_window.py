"""The bulk SQL scorer bounds the feedback floor's "repeated" by the profile's window, as ``hri_core`` does.

Section V.A of the HRI paper decays feedback because that "avoids indefinitely penalizing a corrected
system"; two validated items resolved two years ago used to floor their answer at 50 for ever. Every case is
compared with ``hri_core.score_response`` (rows and fired floors) through ``tests.helpers.parity``.
"""

from __future__ import annotations

from datetime import timedelta

from hri_core import FloorRule, default_profile, profile_from_dict
from hri_core.profile import recommended_profile
from tests.helpers.parity import check_parity, score_in_fresh_db
from tests.helpers.strategies import AS_OF, iso

FEEDBACK = "feedback-repeated-or-unresolved"


def feedback_record(response_id: str, age: timedelta, count: int = 2, resolved: bool | None = True) -> dict:
    claim = {"claim_id": f"{response_id}-c1", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2,
             "feedback_at": iso(AS_OF - age), "feedback_count": count}
    if resolved is not None:
        claim["feedback_resolved"] = resolved
    return {"response_id": response_id, "claims": [claim, {"claim_id": f"{response_id}-c2", "labels": ["SUPPORTED"]}]}


def test_two_items_resolved_two_years_ago_do_not_floor_the_answer_at_50():
    records = [feedback_record("old", timedelta(days=730)), feedback_record("recent", timedelta(days=10))]
    for profile in (default_profile(), recommended_profile()):
        rows, floors = score_in_fresh_db(records, profile, AS_OF)
        assert rows["old"]["floors_fired"] == 0
        assert rows["old"]["score"] < 50
        assert (rows["old"]["band"], rows["old"]["action"]) == ("Low", "release")
        assert "old" not in floors
        # inside the window, the repetition still counts
        assert rows["recent"]["score"] == 50.0
        assert [rule for _, rule, *_ in floors["recent"]] == [FEEDBACK]
        check_parity(records, profile, AS_OF)


def test_the_window_boundary_and_an_explicit_window_match_the_reference():
    records = [feedback_record("edge", timedelta(days=60)),
               feedback_record("past-edge", timedelta(days=60, microseconds=1)),
               feedback_record("unresolved-old", timedelta(days=900), count=1, resolved=False),
               feedback_record("unknown-old", timedelta(days=900), count=3, resolved=None)]
    rows, _ = score_in_fresh_db(records, default_profile(), AS_OF)
    assert {rid: row["floors_fired"] for rid, row in rows.items()} == {
        "edge": 1, "past-edge": 0, "unresolved-old": 1, "unknown-old": 1}
    for profile in (default_profile(), profile_from_dict({"feedback_repeat_window_days": 7}),
                    profile_from_dict({"feedback_half_life_days": 10.0**300})):  # a window before year 1
        check_parity(records, profile, AS_OF)


def test_a_custom_floor_on_feedback_ignores_feedback_validated_after_the_as_of():
    base = default_profile()
    custom = FloorRule(rule_id="any-feedback", label="VALIDATED_NEGATIVE_FEEDBACK", value=0.6, min_action="review")
    profile = base.model_copy(update={"floors": (custom,)})
    future = feedback_record("future", -timedelta(seconds=1), count=1)
    present = feedback_record("present", timedelta(0), count=1)
    rows, floors = score_in_fresh_db([future, present], profile, AS_OF)
    assert (rows["future"]["floors_fired"], rows["future"]["action"]) == (0, "release")
    assert "future" not in floors
    assert (rows["present"]["floors_fired"], rows["present"]["action"]) == (1, "review")
    check_parity([future, present], profile, AS_OF)
    check_parity([future, present], base.model_copy(update={"floors": base.floors + (custom,)}), AS_OF)
