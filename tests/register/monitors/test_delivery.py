"""Delivering alerts to a real HTTP receiver on 127.0.0.1: the payload and its signature, retries with backoff,
giving up (audited), a receiver that hangs, a redirect not followed, the order of one webhook's alerts."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta

import pytest

from register import SYSTEM
from register.db.store import utc_now
from register.monitors.check import check
from register.monitors.definitions import remove_webhook, save_monitor, save_webhook
from register.monitors.outbox import SIGNATURE_HEADER, DeliveryPolicy, deliver_due, sign
from tests.helpers.monitors import MORE, Receiver, import_records, triage

NOW_POLICY = DeliveryPolicy(timeout=2.0, attempts=3, backoff_seconds=0.0)  # retries due at once: no test waits


@pytest.fixture
def alert(store, tmp_path):
    """``alert(url, secret_env=None)``: the webhook ``ops`` at ``url`` and one alert waiting for it (a monitor on
    critical-information hallucination fired by an import)."""
    def make(url: str, secret_env: str | None = None) -> int:
        save_webhook(store, SYSTEM, "ops", url, secret_env=secret_env)
        save_monitor(store, SYSTEM, "critical", "critical_hallucinated_claims", 0)
        import_records(store, tmp_path, [MORE], "more.jsonl")
        [alert_id] = check(store).alerts
        return alert_id

    return make


def _delivery(store):
    return store.dicts("SELECT delivery_id, status, attempts, last_error, next_attempt_at FROM monitor_deliveries "
                       "ORDER BY delivery_id")


def _attempts(store):
    return store.dicts("SELECT attempt, status_code, outcome, error FROM monitor_attempts ORDER BY delivery_id, "
                       "attempt")


def test_the_payload_and_its_signature(store, alert, monkeypatch):
    monkeypatch.setenv("OPS_HOOK_SECRET", "a-secret-of-the-test")
    with Receiver() as receiver:
        alert_id = alert(receiver.url(), secret_env="OPS_HOOK_SECRET")
        [outcome] = deliver_due(store, policy=NOW_POLICY)
    assert outcome["status"] == "delivered" and outcome["status_code"] == 200
    [request] = receiver.requests
    body = request["body"]
    expected = "sha256=" + hmac.new(b"a-secret-of-the-test", body, hashlib.sha256).hexdigest()
    assert request["headers"][SIGNATURE_HEADER] == expected == sign("a-secret-of-the-test", body)
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["X-HRI-Event"] == "monitor.fired" and request["path"] == "/hook"
    payload = json.loads(body)
    assert set(payload) == {"format", "event", "alert_id", "state", "monitor", "figure", "figure_title", "unit",
                            "value", "threshold", "scope", "detail", "trigger", "at", "summary", "delivery"}
    assert payload["format"] == "hri-monitor-alert/1" and payload["alert_id"] == alert_id
    assert payload["monitor"] == {"name": "critical", "version": 1} and payload["state"] == "fired"
    assert (payload["figure"], payload["value"], payload["threshold"]) == ("critical_hallucinated_claims", 1.0, 0.0)
    assert payload["scope"] == {"use_case": None} and payload["detail"] == {"critical_claims": 1, "hallucinated": 1}
    batch = store.scalar("SELECT max(batch_id) FROM import_batches")
    assert payload["trigger"]["import_batches"] == [batch] and len(payload["trigger"]["score_runs"]) == 1
    assert payload["delivery"]["attempt"] == 1 and payload["delivery"]["webhook"] == "ops"
    assert "://" not in payload["summary"]
    assert _delivery(store)[0]["status"] == "delivered" and _attempts(store) == [
        {"attempt": 1, "status_code": 200, "outcome": "delivered", "error": None}]
    audited = store.dicts("SELECT actor_name, entity_id, after FROM audit_events WHERE action = 'monitor.delivered'")
    assert len(audited) == 1 and json.loads(audited[0]["after"])["status"] == "delivered"


def test_a_500_is_retried_then_delivered(store, alert):
    with Receiver([{"status": 500, "body": b"try later"}, {"status": 204, "body": b""}]) as receiver:
        alert(receiver.url())
        [first] = deliver_due(store, policy=NOW_POLICY)
        assert first["status"] == "pending" and first["error"] == "HTTP 500: try later"
        [second] = deliver_due(store, policy=NOW_POLICY)
    assert second["status"] == "delivered"
    assert [json.loads(r["body"])["delivery"]["attempt"] for r in receiver.requests] == [1, 2]
    assert [(a["status_code"], a["outcome"]) for a in _attempts(store)] == [(500, "retry"), (204, "delivered")]
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'monitor.delivery_failed'") == 1


def test_a_failed_attempt_waits_for_its_backoff(store, alert):
    policy = DeliveryPolicy(timeout=2.0, attempts=3, backoff_seconds=60.0)
    with Receiver([{"status": 503}]) as receiver:
        alert(receiver.url())
        deliver_due(store, policy=policy)
        assert deliver_due(store, policy=policy) == []  # not due yet: nothing attempted, nothing waited for
        waiting = _delivery(store)[0]["next_attempt_at"]
        assert timedelta(seconds=59) < waiting - utc_now() <= timedelta(seconds=60)
        [again] = deliver_due(store, policy=policy, now=utc_now() + timedelta(seconds=61))
    assert again["attempt"] == 2 and len(receiver.requests) == 2
    assert policy.backoff(1) == 60 and policy.backoff(2) == 120 and DeliveryPolicy(backoff_seconds=1e9).backoff(1) \
        == 6 * 3600


def test_a_delivery_is_given_up_after_its_attempts_with_an_audit_record(store, alert):
    with Receiver([{"status": 503}]) as receiver:
        alert(receiver.url())
        outcomes = [deliver_due(store, policy=NOW_POLICY) for _ in range(4)]
    assert [[o["status"] for o in round_] for round_ in outcomes] == [["pending"], ["pending"], ["given_up"], []]
    assert len(receiver.requests) == 3
    [delivery] = _delivery(store)
    assert (delivery["status"], delivery["attempts"], delivery["next_attempt_at"]) == ("given_up", 3, None)
    given_up = store.dicts("SELECT entity_type, after FROM audit_events WHERE action = 'monitor.given_up'")
    assert len(given_up) == 1 and given_up[0]["entity_type"] == "monitor_delivery"
    assert json.loads(given_up[0]["after"])["error"] == "HTTP 503: ok"


def test_a_receiver_that_hangs_is_cut_at_the_timeout_and_retried_later(store, alert):
    with Receiver([{"hang": True}]) as receiver:
        alert(receiver.url())
        [outcome] = deliver_due(store, policy=DeliveryPolicy(timeout=0.3, attempts=3, backoff_seconds=0.0))
    assert outcome["status"] == "pending" and outcome["error"] == "no answer within 0.3 s"
    assert outcome["status_code"] is None and len(receiver.requests) == 1


def test_a_redirect_is_not_followed(store, alert):
    with Receiver() as elsewhere, Receiver([{"status": 307, "headers": {"Location": elsewhere.url()}}]) as receiver:
        alert(receiver.url())
        [outcome] = deliver_due(store, policy=NOW_POLICY)
    assert elsewhere.requests == [] and len(receiver.requests) == 1
    assert outcome["status"] == "given_up" and outcome["status_code"] == 307  # no attempt would mend it
    assert "redirects are not followed" in outcome["error"]


def test_one_webhooks_alerts_go_in_order(store, alert, tmp_path):
    """A second alert waits while the first is retried: a "cleared" never reaches a receiver before its "fired"."""
    with Receiver([{"status": 500}, {"status": 200}]) as receiver:
        first = alert(receiver.url())
        fixed = [triage("t5", [{"claim_id": "c1", "text": "Fixed.", "labels": ["SUPPORTED"]}])]
        import_records(store, tmp_path, fixed, "fixed.jsonl")
        [second] = check(store).alerts
        assert [o["alert_id"] for o in deliver_due(store, policy=NOW_POLICY)] == [first]  # fails, second waits
        assert [o["alert_id"] for o in deliver_due(store, policy=NOW_POLICY)] == [first]  # delivered
        assert [o["alert_id"] for o in deliver_due(store, policy=NOW_POLICY)] == [second]
    assert [json.loads(r["body"])["state"] for r in receiver.requests] == ["fired", "fired", "cleared"]


def test_a_webhook_whose_secret_is_missing_is_not_sent_unsigned(store, alert, monkeypatch):
    monkeypatch.delenv("OPS_HOOK_SECRET", raising=False)
    with Receiver() as receiver:
        alert(receiver.url(), secret_env="OPS_HOOK_SECRET")
        [outcome] = deliver_due(store, policy=NOW_POLICY)
    assert receiver.requests == [] and outcome["status"] == "pending"
    assert "OPS_HOOK_SECRET is not set" in outcome["error"]


def test_a_corrected_url_applies_and_a_removed_webhook_gives_up(store, alert):
    with Receiver() as receiver:
        alert("http://127.0.0.1:9/nothing-listens")
        save_webhook(store, SYSTEM, "ops", receiver.url("/fixed"))
        [outcome] = deliver_due(store, policy=NOW_POLICY)
    assert outcome["status"] == "delivered" and receiver.requests[0]["path"] == "/fixed"
    assert store.scalar("SELECT webhook_version FROM monitor_attempts") == 2
    check(store, force=True)  # nothing changed: no alert
    from register.monitors.definitions import remove_monitor

    remove_monitor(store, SYSTEM, "critical")
    save_monitor(store, SYSTEM, "again", "critical_hallucinated_claims", 0)
    check(store, force=True)
    remove_monitor(store, SYSTEM, "again")
    remove_webhook(store, SYSTEM, "ops")
    [gone] = deliver_due(store, policy=NOW_POLICY)
    assert gone["status"] == "given_up" and gone["error"] == "the webhook 'ops' was removed"


def test_a_refused_connection_is_retried(store, alert):
    alert("http://127.0.0.1:9/nothing-listens")
    [outcome] = deliver_due(store, policy=NOW_POLICY)
    assert outcome["status"] == "pending" and outcome["error"].startswith("cannot connect")
