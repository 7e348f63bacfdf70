"""``python -m register monitors ...``, the end of a command that scored (check, then deliver), and the console's
background worker, each against a receiver on 127.0.0.1."""

from __future__ import annotations

import json
import time

from register import Store
from register.monitors import worker as worker_mod
from register.monitors.definitions import save_monitor, save_webhook
from tests.helpers.monitors import MORE, TRIAGE, Receiver, import_records


def _jsonl(tmp_path, name, records):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_the_monitors_commands(register_cli, tmp_path):
    run = register_cli()
    assert run("init").returncode == 0
    with Receiver() as receiver:
        added = run("monitors", "webhook-add", "ops", receiver.url("/hook?token=t0k"))
        assert added.returncode == 0 and "t0k" not in added.stdout and "unsigned" in added.stdout
        assert run("monitors", "add", "crit", "--figure", "critical_hallucination_share", "--threshold", "0.4",
                   "--use-case", "triage", "--webhook", "ops").returncode == 0
        refused = run("monitors", "add", "bad", "--figure", "high_critical_share", "--threshold", "25")
        assert refused.returncode == 1 and "Monitor not saved: bad: threshold:" in refused.stderr
        assert run("monitors", "add", "x", "--figure", "vibes", "--threshold", "1").returncode == 64
        listed = json.loads(run("monitors", "list", "--json").stdout)
        assert [(m["name"], m["state"], m["webhooks"]) for m in listed["monitors"]] == [("crit", "unchecked",
                                                                                          ["ops"])]
        assert listed["webhooks"][0]["url"].endswith("/...") and listed["last_check"] is None
        imported = run("import", _jsonl(tmp_path, "triage.jsonl", TRIAGE))
        assert "monitors: crit fired; 1 alert delivered" in imported.stderr  # 2 of 4 critical claims: above 40%
        assert len(receiver.requests) == 1 and receiver.requests[0]["path"] == "/hook?token=t0k"
        checked = run("monitors", "check", "--json")
        assert checked.returncode == 2  # still fired: exit 2, and no second alert
        result = json.loads(checked.stdout)
        assert result["check"]["readings"][0]["value"] == 0.5 and result["deliveries"] == []
        assert len(receiver.requests) == 1
    deliveries = json.loads(run("monitors", "deliveries", "--json").stdout)
    assert [(d["monitor"], d["alert_state"], d["status"], d["attempts"]) for d in deliveries] == [
        ("crit", "fired", "delivered", 1)]
    assert "crit\tv1\tcritical_hallucination_share > 40.0%\ttriage\tfired\t50.0%\tops" in run("monitors",
                                                                                            "list").stdout
    assert run("monitors", "webhook-remove", "ops").returncode == 1  # crit sends to it
    assert run("monitors", "remove", "crit").returncode == 0
    assert run("monitors", "webhook-remove", "ops").returncode == 0
    assert run("monitors", "check").returncode == 0 and "no monitors" in run("monitors", "check").stdout


def test_a_command_that_scored_ends_by_checking_and_delivering(register_cli, tmp_path):
    run = register_cli()
    assert run("init").returncode == 0
    with Receiver() as receiver:
        run("monitors", "webhook-add", "ops", receiver.url())
        run("monitors", "add", "crit", "--figure", "critical_hallucinated_claims", "--threshold", "2")
        assert run("import", _jsonl(tmp_path, "triage.jsonl", TRIAGE)).returncode == 0  # 2: not above 2
        imported = run("import", _jsonl(tmp_path, "more.jsonl", [MORE]))
        assert imported.returncode == 0
        assert "monitors: crit fired; 1 alert delivered" in imported.stderr
        assert json.loads(receiver.requests[0]["body"])["trigger"]["import_batches"] == [2]
        rescored = run("rescore")  # a run, no change of state: checked, nothing sent
        assert rescored.returncode == 0 and "monitors:" not in rescored.stderr and len(receiver.requests) == 1
        assert run("monitors", "list").returncode == 0  # scored nothing: no check
    store = Store(run.db)
    try:
        assert store.scalar("SELECT count(*) FROM monitor_checks") == 3
    finally:
        store.close()


def test_an_alert_not_delivered_by_a_command_waits_for_the_next(register_cli, tmp_path, monkeypatch):
    """The receiver down when the import ends: the alert stays in the outbox; the next command that scores (or the
    console's worker) delivers it."""
    monkeypatch.setenv("HRI_MONITOR_BACKOFF_SECONDS", "0")
    run = register_cli()
    assert run("init").returncode == 0
    with Receiver([{"status": 503}, {"status": 200}]) as receiver:
        run("monitors", "webhook-add", "ops", receiver.url())
        run("monitors", "add", "crit", "--figure", "critical_hallucinated_claims", "--threshold", "2")
        run("import", _jsonl(tmp_path, "triage.jsonl", TRIAGE))
        first = run("import", _jsonl(tmp_path, "more.jsonl", [MORE]))
        assert first.returncode == 0 and "0 alerts delivered, 1 to retry later" in first.stderr
        second = run("rescore")
        assert "1 alert delivered" in second.stderr
    assert [json.loads(r["body"])["delivery"]["attempt"] for r in receiver.requests] == [1, 2]


def test_a_check_that_fails_leaves_the_commands_outcome(register_cli, tmp_path, monkeypatch):
    from register.monitors import check as check_mod

    run = register_cli()
    run("init")
    run("monitors", "add", "crit", "--figure", "critical_hallucinated_claims", "--threshold", "2")

    def broken(*_args, **_kwargs):
        raise RuntimeError("the check broke")

    monkeypatch.setattr(worker_mod, "check", broken)
    imported = run("import", _jsonl(tmp_path, "triage.jsonl", TRIAGE))
    assert imported.returncode == 0 and "monitors: not checked (RuntimeError: the check broke)" in imported.stderr
    monkeypatch.setattr(worker_mod, "check", check_mod.check)
    assert run("rescore").returncode == 0  # the runs of both commands are checked now
    store = Store(run.db)
    try:
        assert store.scalar("SELECT run_ids FROM monitor_checks") == [1, 2]
    finally:
        store.close()


def test_the_console_worker_checks_after_a_write_and_delivers(store, tmp_path):
    with Receiver() as receiver:
        save_webhook(store, worker_mod.MONITOR_ACTOR, "ops", receiver.url())
        save_monitor(store, worker_mod.MONITOR_ACTOR, "crit", "critical_hallucinated_claims", 0)
        running = worker_mod.start_worker(store, poll_seconds=0.05)
        try:
            assert worker_mod.start_worker(store, poll_seconds=0.05) is running  # one per store and process
            import_records(store, tmp_path, [MORE], "more.jsonl")
            running.wake()
            deadline = time.monotonic() + 30
            while not receiver.requests and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            running.stop()
    assert not running.running and running.last_error is None
    assert json.loads(receiver.requests[0]["body"])["state"] == "fired"
