"""AppTest of the audit page's answer search (issue 33, item 9): a response id typed into "Record id (exact)" lists
the answer's whole life, oldest first, with what each event did to it; the page's other filters still apply; a
toggle goes back to the events filed under that exact id."""

from __future__ import annotations

from register import Actor
from register.console.review import record_decision
from tests.helpers.accounts import ensure_account, open_page
from ui.framework.text import escape_markdown


def _texts(at) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_response_id_lists_the_answers_life_and_the_toggle_its_own_events(seeded_db):
    ensure_account("test-reviewer", "reviewer")
    rid, revision = seeded_db.query_one(
        "SELECT response_id, revision FROM responses WHERE is_current ORDER BY response_key DESC LIMIT 1")
    record_decision(seeded_db, Actor("test-reviewer", "reviewer"), rid, revision, "release", "checked")
    at = open_page("pages/audit.py", "reviewer")
    at.text_input(key="audit_entity_id").input(rid).run()
    assert not at.exception, at.exception
    assert f"in the life of answer {escape_markdown(rid)}, oldest first" in _texts(at)
    frame = at.dataframe[-1].value
    assert frame["action"].tolist()[0] == "import.start" and frame["action"].tolist()[-1] == "review.decide"
    assert {"import.chunk", "scores.rescore"} <= set(frame["action"]) and frame["what_it_did"].notna().all()
    assert frame["seq"].is_monotonic_increasing
    at.multiselect(key="audit_actions").set_value(["review.decide"]).run()  # the other filters still apply
    assert at.dataframe[-1].value["action"].tolist() == ["review.decide"]
    at.multiselect(key="audit_actions").set_value([]).run()
    at.toggle(key="audit_exact_id").set_value(True).run()
    assert not at.exception, at.exception
    assert at.dataframe[-1].value["action"].tolist() == ["review.decide"] and "1 matching events" in _texts(at)
