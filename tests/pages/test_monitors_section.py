"""AppTest of the Monitors page: admins add a webhook and a monitor and check it now
(the alert delivered to a receiver on 127.0.0.1); reviewers see the monitors and deliveries, not the forms."""

from __future__ import annotations

import json

from tests.helpers.accounts import open_page
from tests.helpers.monitors import Receiver


def _captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def _frame(at, column: str):
    """The first table on the page with ``column`` (AppTest does not name a dataframe by its key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_an_admin_adds_a_webhook_and_a_monitor_and_checks_it_now(seeded_db, monkeypatch):
    monkeypatch.setenv("HRI_MONITOR_POLL_SECONDS", "0")  # the page's own "Check now", no background round
    with Receiver() as receiver:
        at = open_page("pages/monitors.py", "admin")
        assert [t.value for t in at.title] == ["Monitors"]
        at.text_input(key="webhook_name").input("ops")
        at.text_input(key="webhook_url").input(receiver.url("/hook?token=t0k"))
        at.button(key="FormSubmitter:webhook_save-Save the webhook").click().run()
        assert not at.exception, at.exception
        assert [s.value for s in at.success] == ["Webhook ` ops ` saved."]
        hooks = _frame(at, "webhook")
        assert hooks["url"].tolist() == [f"{receiver.url('')}/..."]  # no path, no token
        at.text_input(key="monitor_name").input("crit")
        at.selectbox(key="monitor_figure").set_value("critical_hallucinated_claims")
        at.number_input(key="monitor_threshold").set_value(0.0)
        at.button(key="FormSubmitter:monitor_save-Save the monitor").click().run()
        assert not at.exception, at.exception
        table = _frame(at, "monitor")
        assert table[["monitor", "state", "webhooks"]].values.tolist() == [["crit", "unchecked", "(every webhook)"]]
        at.button(key="monitors_check_now").click().run()
        assert not at.exception, at.exception
    table = _frame(at, "monitor")
    assert table["state"].tolist() == ["fired"]
    assert _frame(at, "delivery_id")["status"].tolist() == ["delivered"]
    assert json.loads(receiver.requests[0]["body"])["monitor"] == {"name": "crit", "version": 1}
    assert seeded_db.scalar("SELECT count(*) FROM audit_events WHERE action IN ('webhook.saved', 'monitor.saved') "
                        "AND actor_name = 'test-admin'") == 2


def test_a_reviewer_sees_the_monitors_not_the_forms(seeded_db):
    at = open_page("pages/monitors.py", "reviewer")
    assert [t.value for t in at.title] == ["Monitors"]
    assert "Admins add, change and remove monitors and webhooks." in _captions(at)
    assert not [b for b in at.button if b.key == "monitors_check_now"]
    assert _frame(at, "monitor").empty


def test_a_viewer_is_not_shown_the_page():
    from register.access.permissions import allowed
    from ui.framework.auth import PAGE_PERMISSIONS

    assert not allowed("viewer", PAGE_PERMISSIONS["monitors"]) and allowed("reviewer", PAGE_PERMISSIONS["monitors"])
