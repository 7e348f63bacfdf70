"""The inbox (``register.ingest.inbox``): files dropped into a folder imported by the process holding the
database, with the same importer as the CLI, moved to done/ or failed/ with their JSON report.

The watcher runs on the real file system: called directly (``poll_once``) and as its thread.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from register import SYSTEM, Store
from register.ingest import inbox as inbox_mod
from register.ingest.inbox import Inbox, InboxWatcher, hand_off, start_watcher, wait_for_reports, watcher_alive
from register.scoring.profiles import ensure_default_profile
from tests.helpers.intake import MIXED_CSV, MIXED_JSONL, cli_outcome, outcome, write_mixed_parquet


@pytest.fixture(autouse=True)
def _two_looks(monkeypatch):
    """A settle interval of 0: a file is taken at the second look that finds it unchanged (the writers that
    pause are tested in test_inbox_writers.py)."""
    monkeypatch.setenv("HRI_INBOX_SETTLE_SECONDS", "0")


@pytest.fixture
def folder(tmp_path) -> Path:
    return tmp_path / "inbox"


@pytest.fixture
def watcher(store, folder):
    w = InboxWatcher(store, folder, poll_seconds=0.05)
    yield w
    w.stop()


def _drop(source: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(source, folder / source.name))


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_a_dropped_file_imports_reports_and_quarantines_exactly_as_the_cli(store, watcher, folder, capsys,
                                                                          tmp_path, kind):
    source = {"jsonl": MIXED_JSONL, "csv": MIXED_CSV}.get(kind) or write_mixed_parquet(tmp_path / "mixed.parquet")
    expected = cli_outcome(source, tmp_path / "cli.duckdb", capsys)
    _drop(source, folder)
    assert watcher.poll_once() == []  # first look: size noted, not taken
    [result] = watcher.poll_once()
    assert result.outcome == "done"
    assert result.moved_to == folder / "done" / source.name and result.moved_to.read_bytes() == source.read_bytes()
    written = json.loads(result.report_path.read_text())
    assert result.report_path == folder / "done" / f"{source.name}.report.json"
    assert outcome(written, store) == expected
    assert written["inbox"]["file"] == source.name and written["inbox"]["actor"] == "inbox"
    assert not (folder / source.name).exists() and Inbox(folder).waiting() == []
    assert store.scalar("SELECT actor_name FROM import_batches WHERE source_name = ?", [source.name]) == "inbox"


def test_a_file_still_growing_is_not_taken_until_its_size_holds(watcher, folder, store):
    folder.mkdir()
    lines = MIXED_JSONL.read_text().splitlines(keepends=True)
    target = folder / "growing.jsonl"
    target.write_text(lines[0])
    assert watcher.poll_once() == []
    with target.open("a") as handle:  # the writer is not done: the size changed since the last look
        handle.write(lines[1])
    assert watcher.poll_once() == []
    assert target.exists() and store.scalar("SELECT count(*) FROM import_batches") == 0
    [result] = watcher.poll_once()  # unchanged since the last look: taken, whole
    assert result.report["records"] == 2 and result.report["accepted"] == 2


def test_hidden_and_partial_names_are_never_taken(watcher, folder, store):
    folder.mkdir()
    for name in (".hidden.jsonl", "copying.jsonl.partial", "x.jsonl.part", "y.jsonl.tmp", "z.jsonl~"):
        shutil.copy(MIXED_JSONL, folder / name)
    for _ in range(3):
        assert watcher.poll_once() == []
    assert store.scalar("SELECT count(*) FROM import_batches") == 0
    os.rename(folder / "copying.jsonl.partial", folder / "copying.jsonl")  # the writer's rename when done
    watcher.poll_once()
    [result] = watcher.poll_once()
    assert result.name == "copying.jsonl" and result.outcome == "done"


def test_a_refused_file_goes_to_failed_with_the_reason_and_writes_nothing(watcher, folder, store):
    folder.mkdir()
    (folder / "image.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    (folder / "notes.txt").write_text("not an import file")
    watcher.poll_once()
    results = {r.name: r for r in watcher.poll_once()}
    assert {r.outcome for r in results.values()} == {"failed"}
    png = json.loads((folder / "failed" / "image.jsonl.report.json").read_text())
    assert png["error"]["title"] == "File refused" and "PNG" in png["error"]["message"]
    txt = json.loads((folder / "failed" / "notes.txt.report.json").read_text())
    assert "not a supported" in txt["error"]["message"] or ".txt" in txt["error"]["message"]
    assert (folder / "failed" / "image.jsonl").exists()
    assert store.scalar("SELECT count(*) FROM import_batches") == 0


def test_the_same_name_twice_keeps_both_files_and_reports(watcher, folder):
    for _ in range(2):
        _drop(MIXED_JSONL, folder)
        watcher.poll_once()
        [result] = watcher.poll_once()
    first = json.loads((folder / "done" / "intake_mixed.jsonl.report.json").read_text())
    second = json.loads(result.report_path.read_text())
    assert result.moved_to.name.endswith("-intake_mixed.jsonl")
    assert result.moved_to != folder / "done" / MIXED_JSONL.name
    assert first["new_responses"] == 2 and second["new_responses"] == 0
    assert second["accepted"] == 4 and second["records"] == 8
    assert second["quarantined"] == 4  # still reported, but no second open quarantine row (same file, location, text)


def test_a_file_claimed_by_a_process_that_stopped_is_imported_at_the_next_start(store, folder):
    leftover = folder / ".claimed" / "deadbeef" / MIXED_JSONL.name
    leftover.parent.mkdir(parents=True)
    shutil.copy(MIXED_JSONL, leftover)
    w = InboxWatcher(store, folder, poll_seconds=0.05)
    [result] = w.poll_once()
    assert result.report["inbox"]["resumed"] is True and result.report["records"] == 8
    assert not leftover.parent.exists() and (folder / "done" / MIXED_JSONL.name).exists()
    assert w.poll_once() == []


def test_the_thread_imports_a_dropped_file_and_stops(store, folder):
    imported = threading.Event()
    w = InboxWatcher(store, folder, poll_seconds=0.05, on_import=lambda result: imported.set()).start()
    try:
        assert w.running
        folder.mkdir(exist_ok=True)
        partial = folder / ".intake_mixed.jsonl.partial"
        shutil.copy(MIXED_JSONL, partial)
        os.rename(partial, folder / MIXED_JSONL.name)
        assert imported.wait(60), "the watcher thread did not import the file"
    finally:
        w.stop()
    assert not w.running
    [result] = w.results
    assert result.outcome == "done" and result.report["quarantined"] == 4
    assert watcher_alive(folder) is not None  # it wrote its heartbeat


def test_two_sessions_starting_the_watcher_at_once_get_one_thread(store, folder):
    started: list[InboxWatcher] = []
    barrier = threading.Barrier(4)

    def start():
        barrier.wait()
        started.append(start_watcher(store, folder, poll_seconds=0.05))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len({id(w) for w in started}) == 1
        names = [t.name for t in threading.enumerate() if t.name == f"hri-inbox:{folder.resolve()}"]
        assert len(names) == 1
    finally:
        started[0].stop()


def test_two_watchers_on_one_folder_import_each_file_once(tmp_path, folder):
    store = Store(tmp_path / "one.duckdb")
    ensure_default_profile(store, SYSTEM)
    a, b = InboxWatcher(store, folder, poll_seconds=0.01), InboxWatcher(store, folder, poll_seconds=0.01)
    try:
        _drop(MIXED_JSONL, folder)
        a.poll_once(), b.poll_once()
        done = a.poll_once() + b.poll_once()
        assert len(done) == 1
        assert store.scalar("SELECT count(*) FROM import_batches") == 1
    finally:
        store.close()


def test_hand_off_never_overwrites_a_file_waiting_and_finds_its_report(store, folder, tmp_path):
    w = InboxWatcher(store, folder, poll_seconds=0.05)
    waiting = _drop(MIXED_JSONL, folder)  # someone else's file of the same name, not yet imported
    result: list = []
    handing = threading.Thread(target=lambda: result.append(hand_off(folder, [MIXED_JSONL], wait_free=30)))
    handing.start()
    time.sleep(0.3)
    assert waiting.read_bytes() == MIXED_JSONL.read_bytes() and handing.is_alive()  # waits its turn
    while handing.is_alive():
        w.poll_once()
        time.sleep(0.05)
    [handoff] = result[0]
    for _ in range(3):
        w.poll_once()
    assert wait_for_reports(folder, [handoff], timeout=5)
    assert handoff.report["inbox"]["sha256"] == handoff.sha256
    assert len(list((folder / "done").glob("*.report.json"))) == 2
    assert not [p for p in folder.iterdir() if p.name.endswith(".partial")]


def test_wait_for_reports_gives_up_after_its_timeout(folder):
    [handoff] = hand_off(folder, [MIXED_JSONL])
    assert wait_for_reports(folder, [handoff], timeout=0.3, poll=0.05) is False
    assert handoff.report is None and (folder / MIXED_JSONL.name).exists()  # left for the console


def test_the_heartbeat_says_whether_a_watcher_looks_in(folder, store):
    assert watcher_alive(folder) is None
    InboxWatcher(store, folder, poll_seconds=2).poll_once()
    beat = watcher_alive(folder)
    assert beat["pid"] == os.getpid() and beat["poll_seconds"] == 2
    assert watcher_alive(folder, now=time.time() + 11) is None  # three polls (at least 10 s) without a look


def test_the_inbox_defaults_to_a_folder_beside_the_database(monkeypatch, tmp_path):
    assert inbox_mod.inbox_for(tmp_path / "x" / "hri.duckdb") == tmp_path / "x" / "inbox"
    monkeypatch.setenv("HRI_INBOX", str(tmp_path / "elsewhere"))
    assert inbox_mod.inbox_for(tmp_path / "x" / "hri.duckdb") == tmp_path / "elsewhere"


def test_the_report_of_the_same_file_handed_a_moment_earlier_is_not_taken_for_this_handoff(store, folder):
    """The same file handed twice within a second: the second hand-off must wait for its own report, not
    return the first one's (it did, within the one-second slack on received_at, when the machine was slow)."""
    w = InboxWatcher(store, folder, poll_seconds=0.05)
    [first] = hand_off(folder, [MIXED_JSONL])
    for _ in range(3):  # a file is taken once its size stays the same between two looks
        w.poll_once()
    assert wait_for_reports(folder, [first], timeout=5, poll=0.05)
    [second] = hand_off(folder, [MIXED_JSONL])  # no watcher looks now: its report cannot exist yet
    assert wait_for_reports(folder, [second], timeout=0.3, poll=0.05) is False and second.report is None
    for _ in range(3):
        w.poll_once()
    assert wait_for_reports(folder, [second], timeout=5, poll=0.05)
    assert second.report["inbox"]["received_at"] > first.report["inbox"]["received_at"]
