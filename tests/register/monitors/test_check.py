"""The check: it follows the score runs committed since the last check (an import's, a rescore's), moves each
monitor's state, and puts one alert in the outbox per change of state -- never one per check while a monitor stays
fired -- and the outbox outlives the process."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Store
from register.monitors.check import check, states, unchecked_runs
from register.monitors.definitions import save_monitor, save_webhook
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.scorer import rescore
from tests.helpers.monitors import MORE, import_records, load_monitor_register, triage


@pytest.fixture
def register(store, tmp_path):
    load_monitor_register(store, tmp_path)
    save_webhook(store, SYSTEM, "ops", "http://127.0.0.1:9/hook")
    return store


def _alerts(store):
    return [{**a, "payload": json.loads(a["payload"])} for a in store.dicts(
        "SELECT alert_id, name, state, payload FROM monitor_alerts ORDER BY alert_id")]


def test_an_import_that_crosses_a_threshold_fires_once_with_its_batch_and_run(register, tmp_path):
    save_monitor(register, SYSTEM, "critical-triage", "critical_hallucinated_claims", 2, use_case="triage")
    first = check(register)
    assert first is not None and first.readings[0]["value"] == 2 and first.readings[0]["state"] == "cleared"
    assert first.alerts == [] and check(register) is None  # nothing ran since: no check
    report = import_records(register, tmp_path, [MORE], "more.jsonl")
    batch = report.batches[0].batch_id
    runs = unchecked_runs(register)
    assert [r["batch_id"] for r in runs] == [batch]
    fired = check(register)
    assert fired is not None and fired.run_ids == (runs[0]["run_id"],) and fired.batch_ids == (batch,)
    [alert] = _alerts(register)
    payload = alert["payload"]
    assert (alert["name"], alert["state"], payload["value"], payload["threshold"]) == ("critical-triage", "fired",
                                                                                       3.0, 2.0)
    assert payload["trigger"]["score_runs"] == [runs[0]["run_id"]] and payload["trigger"]["import_batches"] == [batch]
    assert payload["scope"] == {"use_case": "triage"} and payload["figure"] == "critical_hallucinated_claims"
    assert payload["summary"].startswith("Monitor 'critical-triage' fired: critical-information claims labelled "
                                         "hallucinated (use case 'triage') 3, above the threshold 2.")
    assert f"import batch {batch}" in payload["summary"] and "http" not in payload["summary"]
    assert register.dicts("SELECT webhook, status, attempts FROM monitor_deliveries") == [
        {"webhook": "ops", "status": "pending", "attempts": 0}]
    audit = register.dicts("SELECT actor_name, after FROM audit_events WHERE action = 'monitors.checked' "
                           "ORDER BY seq DESC LIMIT 1")[0]
    assert audit["actor_name"] == "monitors" and json.loads(audit["after"])["fired"] == ["critical-triage"]


def test_a_monitor_still_fired_raises_no_second_alert_and_clearing_raises_one(register, tmp_path):
    save_monitor(register, SYSTEM, "critical", "critical_hallucinated_claims", 1)
    assert check(register).alerts != []  # 2 > 1
    fired = states(register)["critical"]
    for n in range(3):  # more hallucinated critical claims, each import a score run and a check: still fired
        import_records(register, tmp_path, [triage(f"x{n}", MORE["claims"])], f"x{n}.jsonl")
        assert check(register).alerts == []
    assert [a["state"] for a in _alerts(register)] == ["fired"]
    assert register.scalar("SELECT count(*) FROM monitor_deliveries") == 1  # undelivered, and not duplicated
    still = states(register)["critical"]
    assert (still["value"], still["since"], still["alert_id"]) == (5, fired["since"], fired["alert_id"])
    # the answers revised with their claims supported: back at or below the threshold, one "cleared" alert
    fixed = [triage(rid, [{"claim_id": "c1", "text": "Fixed.", "labels": ["SUPPORTED"]}])
             for rid in ("t1", "t2", "x0", "x1", "x2")]
    import_records(register, tmp_path, fixed, "fixed.jsonl")
    cleared = check(register)
    assert [a["state"] for a in _alerts(register)] == ["fired", "cleared"] and cleared.alerts != []
    assert cleared.readings[0]["value"] == 0 and states(register)["critical"]["state"] == "cleared"
    assert "back at or below the threshold 1" in _alerts(register)[-1]["payload"]["summary"]


def test_a_rescore_that_crosses_a_threshold_fires(register):
    save_monitor(register, SYSTEM, "hc", "high_critical_share", 0.25)  # 1 answer in 11 (t2) before
    assert check(register).readings[0]["state"] == "cleared"
    # a profile whose High band starts at a score of 1: every answer with a risky claim is High or Critical
    bands = [{"name": "Low", "upper": 0.5, "action": "release"}, {"name": "Medium", "upper": 1, "action": "caution"},
             {"name": "High", "upper": 75, "action": "review"}, {"name": "Critical", "upper": 100, "action": "block"}]
    version = create_draft(register, SYSTEM, {"bands": bands})
    activate(register, SYSTEM, version, "test: stricter bands")
    summary = rescore(register, SYSTEM, get_profile(register, version))
    result = check(register)
    assert result.run_ids == (summary.run_id,) and result.batch_ids == ()
    [alert] = _alerts(register)
    assert alert["state"] == "fired" and alert["payload"]["value"] > 0.25
    assert alert["payload"]["trigger"]["score_runs"] == [summary.run_id]
    assert f"after score run {summary.run_id}." in alert["payload"]["summary"]


def test_a_reading_that_fails_keeps_the_state(register, tmp_path, monkeypatch):
    from register.monitors import figures

    save_monitor(register, SYSTEM, "auth", "authority_failing_answers", 1)
    assert check(register).readings[0]["state"] == "fired"  # 4 answers fail
    monkeypatch.setattr(figures, "authority_overview", lambda *_a, **_k: 1 / 0)
    import_records(register, tmp_path, [MORE], "more.jsonl")
    result = check(register)
    assert result.readings[0]["error"].startswith("ZeroDivisionError") and result.readings[0]["state"] == "fired"
    assert states(register)["auth"]["state"] == "fired" and states(register)["auth"]["value"] is None
    assert len(_alerts(register)) == 1


def test_a_removed_monitor_starts_cleared_when_added_again(register):
    from register.monitors.definitions import remove_monitor

    save_monitor(register, SYSTEM, "auth", "authority_failing_answers", 1)
    check(register)
    remove_monitor(register, SYSTEM, "auth")
    assert "auth" not in states(register)
    save_monitor(register, SYSTEM, "auth", "authority_failing_answers", 1)
    check(register, force=True)
    assert [a["state"] for a in _alerts(register)] == ["fired", "fired"]


def test_no_monitor_no_check_and_nothing_written(register):
    events = register.scalar("SELECT count(*) FROM audit_events")
    assert check(register) is None and check(register, force=True) is None
    assert register.scalar("SELECT count(*) FROM audit_events") == events


def test_the_outbox_and_the_runs_to_check_survive_a_restart(register, tmp_path):
    """A run scored while nothing checks (the console stopped) is checked by the next process; alerts not yet
    delivered wait in the outbox across the restart."""
    save_monitor(register, SYSTEM, "critical", "critical_hallucinated_claims", 2)
    check(register)
    import_records(register, tmp_path, [MORE], "more.jsonl")  # scored, not checked
    path = register.path
    register.close()
    reopened = Store(path)
    try:
        assert len(unchecked_runs(reopened)) == 1
        assert check(reopened).alerts != []
    finally:
        reopened.close()
    again = Store(path)
    try:
        assert again.dicts("SELECT status, attempts FROM monitor_deliveries") == [{"status": "pending", "attempts": 0}]
        assert check(again) is None  # the run was checked before the restart
    finally:
        again.close()
