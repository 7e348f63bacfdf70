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


def test_feedback_dated_after_the_as_of_never_releases_its_answer(store):
    """Issue 34, class 7: the SQL scorer counts it 0 as the reference does (HRI 0, Low, release), and the stored
    decision is at least review with a reason naming the claim, equal sentence for sentence to ``hri_core.decision``'s,
    under a profile whose floors cannot catch it too (low stakes: the mitigation alone asks only caution). Scored
    after the feedback's time, the claim is counted and no late reason is left."""
    from hri_core.profile import recommended_profile
    from register import SYSTEM
    from register.scoring.scorer import rescore
    from tests.helpers.parity import check_decisions, load

    late = feedback_record("late", -timedelta(days=1), count=1)  # validated tomorrow, resolved: nothing fires
    second = feedback_record("late-twice", -timedelta(microseconds=1), count=1)
    second["claims"].append({**second["claims"][0], "claim_id": "late-twice-c3"})
    on_time = feedback_record("on-time", timedelta(0), count=1)
    records = [{**record, "stakes": "low"} for record in (late, second, on_time)]
    load(store, records)
    sentence = "claim {} carries validated negative feedback dated after the as-of time: at least review"
    for profile in (default_profile(), recommended_profile(), default_profile().model_copy(update={"floors": ()})):
        check_decisions(store, records, profile, AS_OF)
        stored = {rid: (action, decision, list(reasons)) for rid, action, decision, reasons in store.query(
            "SELECT response_id, action, decision, decision_reasons FROM scores WHERE is_current")}
        assert stored["late"][:2] == ("release", "review")
        assert sentence.format("late-c1") in stored["late"][2]
        assert [r for r in stored["late-twice"][2] if "dated after" in r] == [
            sentence.format("late-twice-c1"), sentence.format("late-twice-c3")]
        assert not any("dated after" in r for r in stored["on-time"][2])
    rescore(store, SYSTEM, default_profile(), as_of=AS_OF + timedelta(days=2))
    reasons = store.scalar("SELECT decision_reasons FROM scores WHERE is_current AND response_id = 'late'")
    assert not any("dated after" in r for r in reasons)
