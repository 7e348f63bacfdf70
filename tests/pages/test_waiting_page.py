"""AppTest of the Waiting for me page and the sidebar's count (issue 35, item 7): each item with its link to the page
where it is done, nothing of one's own where four eyes applies, the count on every page, an empty state, escaping."""

from __future__ import annotations

from register import Actor
from register.access import identity
from register.feedback import items as feedback
from tests.helpers.accounts import ensure_account, open_page
from tests.helpers.actors import enrol

RESPONSE = "paper-table-v"  # a response of the demo set


def page_links(at) -> list[tuple[str, str, str]]:
    """Every page link drawn: (label, page, query string); the page as AppTest names it (its file's stem)."""
    return [(e.proto.label, e.proto.page, e.proto.query_string) for e in at.get("page_link")]


def sidebar_counts(at) -> list[str]:
    return [label for label, _page, _query in page_links(at) if label.startswith("Waiting for me")]


def _claim(seeded_db) -> str:
    return seeded_db.scalar("SELECT min(claim_id) FROM claims WHERE is_current AND response_id = ?", [RESPONSE])


def test_a_reviewer_sees_feedback_to_validate_with_its_link_and_the_count(seeded_db):
    enrol(seeded_db, Actor("vera", "viewer"))
    claim = _claim(seeded_db)
    theirs = feedback.report_feedback(seeded_db, Actor("vera", "viewer"), RESPONSE, "Wrong *year*: [x](javascript:1)",
                                      0.5, claim_id=claim)
    ensure_account("test-reviewer", "reviewer")
    own = feedback.report_feedback(seeded_db, Actor("test-reviewer", "reviewer"), RESPONSE, "Mine", 0.3)
    at = open_page("pages/waiting.py", "reviewer")
    assert at.title[0].value == "Waiting for me"
    assert [s.value for s in at.subheader] == ["Feedback to validate (1)"]
    texts = " ".join(m.value for m in at.markdown)
    assert f"Validate feedback \\#{theirs} on {RESPONSE.replace('-', chr(92) + '-')}" in texts
    assert "\\*year\\*" in texts and "\\[x\\]\\(javascript" in texts  # the reporter's text, escaped
    assert f"#{own}" not in texts  # their own report waits for someone else
    assert [link for link in page_links(at) if link[0].startswith("Open")] == [
        ("Open Feedback", "feedback", ""), ("Open the answer", "response_detail", f"response_id={RESPONSE}")]
    assert sidebar_counts(at) == ["Waiting for me: 1"]


def test_the_count_shows_on_every_page_and_is_cleared_by_a_write_in_the_console(seeded_db):
    enrol(seeded_db, Actor("vera", "viewer"))
    reported = feedback.report_feedback(seeded_db, Actor("vera", "viewer"), RESPONSE, "Wrong", 0.5,
                                        claim_id=_claim(seeded_db))
    at = open_page("pages/overview.py", "reviewer")
    assert sidebar_counts(at) == ["Waiting for me: 1"]
    at.switch_page("pages/feedback.py").run()
    assert sidebar_counts(at) == ["Waiting for me: 1"]
    assert at.selectbox(key="fb_pick_reported").value == reported
    at.button(key="FormSubmitter:fb_validate-Validate").click().run()
    assert not at.exception, at.exception
    assert feedback.feedback_item(seeded_db, reported)["state"] == "validated"
    assert sidebar_counts(at) == ["Waiting for me: 0"]
    at.switch_page("pages/waiting.py").run()
    assert any("Nothing waits for you" in s.value for s in at.success)


def test_an_admin_sees_each_kind_with_the_link_to_where_it_is_done(seeded_db):
    ensure_account("other-admin", "admin")
    ensure_account("deputy", "viewer")
    identity.request_admin(seeded_db, Actor("other-admin", "admin"), "deputy", "holiday cover")
    enrol(seeded_db, Actor("vera", "viewer"))
    feedback.report_feedback(seeded_db, Actor("vera", "viewer"), RESPONSE, "Wrong", 0.5, claim_id=_claim(seeded_db))
    at = open_page("pages/waiting.py", "admin")
    assert [s.value for s in at.subheader] == ["Role requests (1)", "Feedback to validate (1)"]
    assert [link for link in page_links(at) if link[0].startswith("Open")] == [
        ("Open Users", "users", ""), ("Open Feedback", "feedback", ""),
        ("Open the answer", "response_detail", f"response_id={RESPONSE}")]
    assert sidebar_counts(at) == ["Waiting for me: 2"]
    assert any("Approve the admin role for deputy" in m.value for m in at.markdown)


def test_a_viewer_has_nothing_waiting(seeded_db):
    enrol(seeded_db, Actor("vera", "viewer"))
    feedback.report_feedback(seeded_db, Actor("vera", "viewer"), RESPONSE, "Wrong", 0.5, claim_id=_claim(seeded_db))
    at = open_page("pages/waiting.py", "viewer")
    assert any("Nothing waits for you (viewer)" in s.value for s in at.success)
    assert not at.subheader and sidebar_counts(at) == ["Waiting for me: 0"]


def test_one_read_per_run_shared_by_the_count_and_the_page_and_an_account_write_clears_it(seeded_db, monkeypatch):
    """The sidebar's count and the page read ``waiting_for`` once between writes; an admin request made on the Users
    page (an account write) reaches the other admin's count at their next run."""
    from register.waiting import items

    calls = []
    original = items.waiting_for
    monkeypatch.setattr(items, "waiting_for", lambda store, actor: calls.append(actor.name) or original(store, actor))
    ensure_account("other-admin", "admin")
    ensure_account("deputy", "viewer")
    mine = open_page("pages/waiting.py", "admin")
    assert sidebar_counts(mine) == ["Waiting for me: 0"]
    mine.run()
    assert calls.count("test-admin") == 1  # the count and the page, two runs: one read
    other = open_page("pages/users.py", "admin", "other-admin")
    other.text_input(key="admin_request_reason").input("holiday cover")
    other.selectbox(key="admin_request_name").set_value("deputy")
    other.button(key="FormSubmitter:admin_request-Request the admin role").click().run()
    assert not other.exception, other.exception
    mine.run()
    assert sidebar_counts(mine) == ["Waiting for me: 1"]
    assert [s.value for s in mine.subheader] == ["Role requests (1)"]
    assert calls.count("test-admin") == 2
