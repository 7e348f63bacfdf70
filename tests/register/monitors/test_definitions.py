"""Monitors and webhooks as versioned rows: saved and removed by admins only (the account's current state), each
change a new version and an audit event, bad input refused naming the monitor and the field."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Actor
from register.errors import InvalidMonitor, NotFound, PermissionDenied
from register.monitors.definitions import (
    monitors,
    remove_monitor,
    remove_webhook,
    save_monitor,
    save_webhook,
    shown_url,
    webhooks,
)
from tests.helpers.actors import ANN, REVIEWER, enrol


def _events(store, action):
    return store.dicts("SELECT actor_name, entity_id, before, after FROM audit_events WHERE action = ? ORDER BY seq",
                       [action])


def test_a_monitor_is_versioned_and_each_change_audited(store):
    enrol(store, ANN)
    first = save_monitor(store, ANN, "hc-share", "high_critical_share", 0.2, reason="the release bar")
    second = save_monitor(store, ANN, "hc-share", "high_critical_share", 0.3, use_case="triage")
    assert (first.version, second.version) == (1, 2)
    [current] = monitors(store)
    assert (current.version, current.threshold, current.use_case, current.created_by) == (2, 0.3, "triage", ANN.name)
    saved = _events(store, "monitor.saved")
    assert [e["entity_id"] for e in saved] == ["hc-share", "hc-share"]
    assert json.loads(saved[1]["before"])["threshold"] == 0.2 and json.loads(saved[1]["after"])["threshold"] == 0.3
    remove_monitor(store, ANN, "hc-share", reason="not needed")
    assert monitors(store) == []
    assert store.scalar("SELECT count(*) FROM monitor_versions WHERE name = 'hc-share'") == 3  # kept, not deleted
    assert json.loads(_events(store, "monitor.removed")[0]["after"]) == {"removed": True, "version": 3,
                                                                         "reason": "not needed"}
    with pytest.raises(NotFound, match="no monitor named 'hc-share'"):
        remove_monitor(store, ANN, "hc-share")


def test_only_an_admin_whose_account_says_so_now_may_change_monitors(store):
    enrol(store, ANN, REVIEWER)
    with pytest.raises(PermissionDenied, match=r"may not monitors\.edit"):
        save_monitor(store, REVIEWER, "m", "scope_s_h", 0.5)
    stale = Actor(ANN.name, "admin")
    with store.cursor() as cur:
        cur.execute("UPDATE users SET role = 'viewer' WHERE username = ?", [ANN.name])
    with pytest.raises(PermissionDenied, match="the role of Ann Admin is now viewer"):
        save_webhook(store, stale, "ops", "https://hooks.example/x")
    assert monitors(store) == [] and webhooks(store) == []
    denied = store.dicts("SELECT actor_name, entity_type FROM audit_events WHERE action = 'denied' ORDER BY seq")
    assert [(d["actor_name"], d["entity_type"]) for d in denied] == [(REVIEWER.name, "monitor"), (ANN.name, "webhook")]


@pytest.mark.parametrize(("kwargs", "field", "message"), [
    ({"name": "no spaces please"}, "name", "1 to 64 letters"),
    ({"figure": "vibes"}, "figure", "no figure named 'vibes'"),
    ({"threshold": 1.0}, "threshold", "below 1"),
    ({"threshold": -0.1}, "threshold", "at least 0"),
    ({"threshold": float("nan")}, "threshold", "a number"),
    ({"threshold": True}, "threshold", "a number"),
    ({"use_case": "  "}, "use_case", "a use case name"),
    ({"webhooks": ["nowhere"]}, "webhooks", "no webhook named 'nowhere'"),
])
def test_a_bad_monitor_is_refused_naming_it_and_the_field(store, kwargs, field, message):
    given = {"name": "m1", "figure": "high_critical_share", "threshold": 0.5, **kwargs}
    with pytest.raises(InvalidMonitor, match=message) as refused:
        save_monitor(store, SYSTEM, given.pop("name"), given.pop("figure"), given.pop("threshold"), **given)
    assert refused.value.field == field and str(refused.value).startswith(f"{refused.value.name}: {field}: ")
    assert store.scalar("SELECT count(*) FROM monitor_versions") == 0


def test_a_count_takes_any_threshold_from_zero(store):
    assert save_monitor(store, SYSTEM, "any", "authority_failing_answers", 0).threshold == 0.0
    assert save_monitor(store, SYSTEM, "many", "critical_hallucinated_claims", 1500).threshold == 1500.0


@pytest.mark.parametrize(("url", "message"), [
    ("ftp://hooks.example/x", "http:// or https://"),
    ("https:///no-host", "with a host"),
    ("https://hooks.example/a b", "no spaces"),
    ("https://hooks.example:99999/x", "not a valid URL"),
    ("", "a URL of 1 to"),
])
def test_a_bad_webhook_url_is_refused(store, url, message):
    with pytest.raises(InvalidMonitor, match=message) as refused:
        save_webhook(store, SYSTEM, "ops", url)
    assert refused.value.field == "url"


def test_a_webhook_keeps_the_secrets_name_only_and_the_audit_trail_no_token(store):
    with pytest.raises(InvalidMonitor, match="NAME of an environment variable") as refused:
        save_webhook(store, SYSTEM, "ops", "https://hooks.example/x", secret_env="s3cr3t value!")
    assert refused.value.field == "secret_env"
    hook = save_webhook(store, SYSTEM, "ops", "https://hooks.example/services/T0/B0/tok3n?x=1",
                        secret_env="OPS_HOOK_SECRET")
    assert hook.as_json()["url"] == "https://hooks.example/..."
    assert hook.as_json(full_url=True)["url"].endswith("tok3n?x=1")
    trail = json.dumps(store.dicts("SELECT before, after FROM audit_events"))
    assert "tok3n" not in trail and "OPS_HOOK_SECRET" in trail


def test_a_webhook_a_monitor_names_cannot_be_removed(store):
    save_webhook(store, SYSTEM, "ops", "http://127.0.0.1:9/x")
    save_monitor(store, SYSTEM, "m1", "scope_s_h", 0.5, webhooks=["ops"])
    with pytest.raises(InvalidMonitor, match="monitor m1 sends to it"):
        remove_webhook(store, SYSTEM, "ops")
    remove_monitor(store, SYSTEM, "m1")
    remove_webhook(store, SYSTEM, "ops")
    assert webhooks(store) == []


@pytest.mark.parametrize(("url", "shown"), [
    ("https://hooks.example/a/b?c=d", "https://hooks.example/..."),
    ("http://127.0.0.1:8080/", "http://127.0.0.1:8080"),
    ("https://user:pw@hooks.example", "https://hooks.example"),
    ("http://[::1]:9000/x", "http://[::1]:9000/..."),
])
def test_shown_url_keeps_scheme_host_and_port(url, shown):
    assert shown_url(url) == shown
