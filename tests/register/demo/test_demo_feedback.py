"""The demo's feedback history (``register.demo.feedback``): validated feedback resolved months ago, so the Evidence
page's feedback loops have answers before and after a resolution, recorded through the ordinary feedback functions
at the history's times."""

from __future__ import annotations

from register import SYSTEM, Actor
from register.demo.feedback import FEEDBACK_ANSWERS, REPORTED_AT, RESOLVED_AT, VALIDATED_AT, record_feedback_history
from register.evidence.feedback_loops import feedback_loops


def test_the_feedback_loops_get_a_before_and_an_after(demo_store):
    assert demo_store.scalar("SELECT count(*) FROM feedback_items") == 0  # the template: none yet
    assert record_feedback_history(demo_store, SYSTEM) == {"resolved": len(FEEDBACK_ANSWERS), "note": None}
    items = demo_store.frame("SELECT * FROM feedback_items ORDER BY feedback_id")
    assert items["state"].eq("resolved").all() and items["response_id"].tolist() == [a[0] for a in FEEDBACK_ANSWERS]
    assert {t.to_pydatetime() for t in items["reported_at"]} == {REPORTED_AT}
    assert {t.to_pydatetime() for t in items["validated_at"]} == {VALIDATED_AT}
    assert {t.to_pydatetime() for t in items["resolved_at"]} == {RESOLVED_AT}
    assert (items["reported_by"] != items["validated_by"]).all()  # four eyes, as for anyone
    # each validation and resolution is a revision, rescored: the claim carries the label, then its resolution
    claims = demo_store.frame("SELECT response_id, labels, feedback_at, feedback_resolved FROM claims "
                              "WHERE is_current AND list_contains(?::VARCHAR[], claim_id)",
                              [[a[1] for a in FEEDBACK_ANSWERS]])
    assert claims["feedback_resolved"].all() and all("VALIDATED_NEGATIVE_FEEDBACK" in ls for ls in claims["labels"])
    assert {t.to_pydatetime() for t in claims["feedback_at"]} == {VALIDATED_AT}
    loops = feedback_loops(demo_store, as_of=RESOLVED_AT.replace(year=RESOLVED_AT.year + 1))
    (row,) = loops.before_after.to_dict("records")
    assert row["resolutions"] == len(FEEDBACK_ANSWERS) and row["first_resolved_at"] == RESOLVED_AT
    assert row["answers_before"] > 0 and row["answers_after"] > 0  # the panel has both sides
    assert row["share_before"] is not None and row["share_after"] is not None
    assert row["s_h_before"] > 0  # the validated items weigh on s_H in the weeks before their resolution
    actions = [a for (a,) in demo_store.query("SELECT action FROM audit_events WHERE entity_type = 'feedback'")]
    assert actions.count("feedback.report") == actions.count("feedback.validate") == len(FEEDBACK_ANSWERS)
    # a second run adds nothing
    assert record_feedback_history(demo_store, SYSTEM)["resolved"] == 0
    assert demo_store.scalar("SELECT count(*) FROM feedback_items") == len(FEEDBACK_ANSWERS)


def test_only_the_system_records_the_history(demo_store):
    from tests.helpers.actors import enrol

    admin = Actor("Ann Admin", "admin")
    enrol(demo_store, admin)
    result = record_feedback_history(demo_store, admin)
    assert result["resolved"] == 0 and "system" in result["note"]
    assert demo_store.scalar("SELECT count(*) FROM feedback_items") == 0


def test_the_demos_review_decisions_stand_on_the_answers_current_revisions(store):
    """The history writes revisions; recorded after the review decisions, it left three of them stale and put those
    answers back in the review queue (found by a browser test): the history comes first."""
    from register.demo import seed_demo

    summary = seed_demo(store, SYSTEM, synthetic=0)
    assert summary["feedback_resolved"] == len(FEEDBACK_ANSWERS) and summary["review_decisions"] > 0
    stale = store.query("SELECT d.response_id FROM review_decisions d JOIN responses r "
                        "ON r.response_id = d.response_id AND r.is_current WHERE d.revision <> r.revision")
    assert stale == []
