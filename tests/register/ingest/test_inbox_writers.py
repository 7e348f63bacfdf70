"""The inbox against writers that take their time and entries that are not plain files (issue 34, class 4).

A real writer process (``tests.helpers.slow_writer``) appends 200 records through one open handle with
pauses longer than a poll, one of them in the middle of a line: every record must be stored once and
none quarantined, whether the watcher waits for the file to settle, sees the writer's open handle, or
finds the file grown under an import. A symbolic link, a hard link, a FIFO, a socket or a folder dropped
into the inbox is refused unread, named in a report and an audit event; what a link points at appears
nowhere in the database.

Intervals are short (polls of 50 ms, a settle interval under a second) so that the tests stay fast.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from register.db.store import Change
from register.ingest import inbox as inbox_mod
from register.ingest import inbox_claims, inbox_entries
from register.ingest.inbox import InboxWatcher
from tests.helpers.hostile import INBOX_ENTRIES, INBOX_SECRET, SECRET_FILE, inbox_outside
from tests.helpers.paths import REPO_ROOT
from tests.helpers.slow_writer import record

COUNT = 200
ALL_RECORDS = b"".join(record(n) for n in range(1, COUNT + 1))


@pytest.fixture(autouse=True)
def _two_looks(monkeypatch):
    """A settle interval of 0 unless a test sets one: an entry is judged at the second look that finds it
    unchanged."""
    monkeypatch.setenv("HRI_INBOX_SETTLE_SECONDS", "0")


@pytest.fixture
def folder(tmp_path) -> Path:
    path = tmp_path / "inbox"
    path.mkdir()
    return path


@pytest.fixture
def blind(monkeypatch):
    """The watcher cannot see who holds a file open (a writer of another user, or on another machine):
    only the settle interval and the checks after an import protect the file."""
    monkeypatch.setattr(inbox_entries, "open_for_writing", lambda paths: set())
    monkeypatch.setattr(inbox_claims, "open_for_writing", lambda paths: set())


def _settle(monkeypatch, seconds: float) -> None:
    monkeypatch.setenv("HRI_INBOX_SETTLE_SECONDS", str(seconds))


def _writer(path: Path, *args: str | int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.helpers.slow_writer", str(path), str(COUNT),
                             *map(str, args)], cwd=REPO_ROOT)


def _wait(condition: Callable[[], object], timeout: float = 30.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.02)


def _assert_every_record_stored_once(store, folder: Path, name: str) -> None:
    rows = store.query("SELECT response_id, count(*) FROM responses GROUP BY response_id ORDER BY 1")
    assert len(rows) == COUNT, f"{len(rows)} of {COUNT} records stored"
    assert {n for _, n in rows} == {1}  # none twice (no second revision of any)
    assert [r for r, _ in rows] == [f"w-{n:04d}" for n in range(1, COUNT + 1)]
    assert store.scalar("SELECT count(*) FROM quarantine") == 0
    assert store.scalar("SELECT sum(records_total) FROM import_batches") == COUNT  # each line read once
    assert (folder / "done" / name).read_bytes() == ALL_RECORDS
    assert not [p for p in (folder / ".claimed").rglob("*") if p.is_file() and not p.name.startswith(".")]


def _run_until_done(store, folder: Path, writer: subprocess.Popen, **options) -> InboxWatcher:
    watcher = InboxWatcher(store, folder, poll_seconds=0.05, **options).start()
    try:
        writer.wait(60)
        _wait(lambda: watcher.results, what="the file's report")
    finally:
        watcher.stop()
    return watcher


def test_a_writer_pausing_longer_than_a_poll_but_not_the_settle_interval_loses_nothing(
        store, folder, monkeypatch, blind):
    """Before: the file was taken after two equal looks 50 ms apart, and 150 of 200 records were lost."""
    _settle(monkeypatch, 1.0)
    target = folder / "slow.jsonl"
    writer = _writer(target, "--pause-every", 40, "--pause", 0.2, "--mid-line", 120)
    watcher = _run_until_done(store, folder, writer)
    [result] = watcher.results
    assert result.outcome == "done" and result.report["records"] == COUNT
    _assert_every_record_stored_once(store, folder, target.name)


@pytest.mark.skipif(not Path("/proc/self/fdinfo").is_dir(), reason="open handles are seen through /proc (Linux)")
def test_a_writer_holding_the_file_open_is_waited_for_however_long_it_pauses(store, folder, monkeypatch):
    """Pauses of 0.3 s against a settle interval of 0.1 s: only the writer's open handle says it is not done."""
    _settle(monkeypatch, 0.1)
    target = folder / "held_open.jsonl"
    writer = _writer(target, "--pause-every", 50, "--pause", 0.3, "--mid-line", 120)
    watcher = _run_until_done(store, folder, writer)
    [result] = watcher.results
    assert result.outcome == "done" and result.report["records"] == COUNT
    assert store.scalar("SELECT count(*) FROM import_batches") == 1  # taken once, whole
    _assert_every_record_stored_once(store, folder, target.name)


def test_a_file_growing_during_the_import_is_read_on_from_where_the_import_stopped(
        store, folder, tmp_path, monkeypatch, blind):
    """The writer stops after record 119 long enough for the file to be taken, then writes on while each
    import runs; during the first it stops again, in the middle of record 150. The half line is never a
    record; what was appended is imported on later looks; the file reaches done/ whole. Before: 149 of 200
    stored (the half line quarantined), the rest written into done/ after its report."""
    _settle(monkeypatch, 0.2)
    control = tmp_path / "control"
    control.mkdir()
    target = folder / "growing.jsonl"
    writer = _writer(target, "--hold-at", 119, "--mid-line", 150, "--hold-at", 150, "--control", control)
    real_import = inbox_claims.import_path
    calls: list[int] = []

    def import_while_the_writer_writes(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:  # records 120 to 149 and half of 150 arrive during the first import
            (control / "go-119").touch()
            _wait(lambda: (control / "held-150").exists(), what="the writer in the middle of 150")
        elif len(calls) == 2:  # the rest during the second
            (control / "go-150").touch()
            writer.wait(30)
        return real_import(*args, **kwargs)

    monkeypatch.setattr(inbox_claims, "import_path", import_while_the_writer_writes)
    _wait(lambda: (control / "held-119").exists(), what="the writer at 119")
    watcher = InboxWatcher(store, folder, poll_seconds=0.05).start()
    try:
        _wait(lambda: watcher.results, what="the file's report")
    finally:
        watcher.stop()
        (control / "go-150").touch()  # whatever happened, let the writer finish
        writer.wait(30)
    [result] = watcher.results
    assert result.outcome == "done"
    assert [b["records"] for b in result.report["batches"]] == [119, 30, 51]
    assert result.report["records"] == COUNT and result.report["quarantined"] == 0
    assert result.report["inbox"]["bytes"] == len(ALL_RECORDS)
    assert result.report["inbox"]["sha256"] == hashlib.sha256(ALL_RECORDS).hexdigest()
    _assert_every_record_stored_once(store, folder, target.name)


def test_a_line_without_its_newline_waits_a_settle_interval_before_it_counts_as_the_last_record(
        store, folder, monkeypatch, blind):
    """A writer paused in the middle of its last line, longer than the settle interval: the file is taken but
    not imported yet; the writer finishes the line a moment later and the file goes in whole, as one part."""
    _settle(monkeypatch, 0.3)
    target = folder / "unfinished.jsonl"
    target.write_bytes(ALL_RECORDS[:-40])  # record 200 cut in the middle
    watcher = InboxWatcher(store, folder, poll_seconds=0.05)
    _wait(lambda: watcher.poll_once() or not target.exists(), 10, "the file taken")
    assert store.scalar("SELECT count(*) FROM import_batches") == 0 and not watcher.results
    with _claimed_path(folder).open("ab") as handle:  # the writer's handle followed the file
        handle.write(ALL_RECORDS[-40:])
    [result] = _until_reported(watcher)
    assert [b["records"] for b in result.report["batches"]] == [COUNT]
    _assert_every_record_stored_once(store, folder, target.name)


def test_a_later_part_names_its_records_by_their_lines_in_the_file(store, folder, monkeypatch, blind):
    """A record quarantined in a later part is "line 4" of the file, as a direct import of the whole file says."""
    (folder / "parts.jsonl").write_bytes(record(1) + record(2) + record(3))

    def append() -> None:  # a broken line and one more record, while the first three are imported
        with _claimed_path(folder).open("ab") as handle:
            handle.write(b'{"response_id": "broken", "claims": [{"labels": ["NOPE"]}]}\n' + record(5))

    _while_importing(monkeypatch, append)
    [result] = _until_reported(InboxWatcher(store, folder, poll_seconds=0.05))
    assert [b["records"] for b in result.report["batches"]] == [3, 2]
    assert store.query("SELECT location, response_id FROM quarantine") == [("line 4", "broken")]
    assert [q["location"] for q in result.report["quarantined_records"]] == ["line 4"]
    assert store.scalar("SELECT count(*) FROM responses") == 4


def _claimed_path(folder: Path) -> Path:
    """The one file claimed in ``folder`` (where a writer's open handle now writes)."""
    [entry] = [p for p in (folder / ".claimed").glob("*/*") if not p.name.startswith(".")]
    return entry


# --- entries that are not regular files -----------------------------------------------------------------


REFUSED = sorted(name for name, (_, outcome) in INBOX_ENTRIES.items() if outcome.refused)


@pytest.mark.parametrize("name", REFUSED)
def test_an_entry_that_is_not_a_regular_file_is_refused_unread_and_named(store, folder, tmp_path, name):
    build, expected = INBOX_ENTRIES[name]
    outside = inbox_outside(tmp_path / "outside")
    build(folder / name, outside)
    watcher = InboxWatcher(store, folder, poll_seconds=0.05)
    [result] = _look_without_blocking(watcher) + _look_without_blocking(watcher)
    assert result.outcome == "failed" and result.name == name
    report = json.loads(result.report_path.read_text())
    assert report["error"]["title"] == "File refused" and expected.refused in report["error"]["message"]
    assert name in report["error"]["message"] and report["inbox"]["sha256"] is None
    assert os.path.lexists(folder / "failed" / name) and not os.path.lexists(folder / name)  # moved as it is
    event = store.one("SELECT entity_id, after FROM audit_events WHERE action = 'inbox.refused'")
    assert event["entity_id"] == name and expected.refused in json.loads(event["after"])["reason"]
    assert store.scalar("SELECT count(*) FROM import_batches") == 0
    _assert_nowhere(store, INBOX_SECRET)
    assert INBOX_SECRET not in result.report_path.read_text()
    assert (outside / SECRET_FILE).read_text().count(INBOX_SECRET) == 1  # what it pointed at, untouched


def test_the_inbox_corpus_at_once_refuses_the_hostile_entries_and_imports_the_rest(store, folder, tmp_path):
    outside = inbox_outside(tmp_path / "outside")
    for name, (build, _) in INBOX_ENTRIES.items():
        build(folder / name, outside)
    watcher = InboxWatcher(store, folder, poll_seconds=0.05)
    results: dict[str, object] = {}
    deadline = time.monotonic() + 20
    while len(results) < len(INBOX_ENTRIES):
        assert time.monotonic() < deadline, f"no report for {set(INBOX_ENTRIES) - set(results)}"
        results.update((r.name, r) for r in _look_without_blocking(watcher, timeout=60))  # imports in it
    for name, (_, expected) in INBOX_ENTRIES.items():
        report = results[name].report
        if expected.refused:
            assert results[name].outcome == "failed" and expected.refused in report["error"]["message"], name
        else:  # one part, as a direct import (a file without its last newline waits, then goes in whole)
            assert results[name].outcome == "done" and len(report["batches"]) == 1, name
            assert (report["records"], report["quarantined"]) == (expected.records, expected.quarantined), name
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'inbox.refused'") == len(REFUSED)
    _assert_nowhere(store, INBOX_SECRET)


def test_a_socket_is_refused_unread(store, tmp_path):
    short = Path(tempfile.mkdtemp(prefix="hri-inbox-"))  # a socket's path must be short (about 100 bytes)
    try:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(short / "s.jsonl"))
        server.close()  # the socket file stays
        watcher = InboxWatcher(store, short, poll_seconds=0.05)
        [result] = watcher.poll_once() + watcher.poll_once()
        assert result.outcome == "failed" and "a socket" in result.report["error"]["message"]
    finally:
        shutil.rmtree(short, ignore_errors=True)


def test_the_console_s_own_keyring_through_a_link_never_reaches_the_quarantine(store, folder):
    """The probe's case: a link to the register's audit keyring was imported and its secret quarantined."""
    store.write(inbox_mod.INBOX_ACTOR, "test.touch", lambda tx: Change("test", "x"))  # keyring now exists
    keyring = store.keyring.path
    secret = json.loads(keyring.read_text())["keys"]
    [key] = [entry["secret"] for entry in secret.values()]
    (folder / "keys.jsonl").symlink_to(keyring)
    watcher = InboxWatcher(store, folder, poll_seconds=0.05)
    [result] = watcher.poll_once() + watcher.poll_once()
    assert result.outcome == "failed" and "a symbolic link" in result.report["error"]["message"]
    _assert_nowhere(store, key)
    assert keyring.is_file() and not keyring.is_symlink()


def test_a_link_planted_among_the_claimed_files_is_refused_unread(store, folder, tmp_path):
    """A claimed file left by a stopped console is taken up at the next start: a link put there is not."""
    outside = inbox_outside(tmp_path / "outside")
    planted = folder / ".claimed" / "cafe" / "planted.jsonl"
    planted.parent.mkdir(parents=True)
    planted.symlink_to(outside / SECRET_FILE)
    [result] = InboxWatcher(store, folder, poll_seconds=0.05).poll_once()
    assert result.outcome == "failed" and "a symbolic link" in result.report["error"]["message"]
    assert os.path.islink(folder / "failed" / "planted.jsonl")
    _assert_nowhere(store, INBOX_SECRET)


def _look_without_blocking(watcher: InboxWatcher, timeout: float = 5.0) -> list:
    """One look, in a thread: a look that blocks (on a FIFO opened for reading) fails the test instead of
    hanging it (each FIFO is then opened for writing, which lets a reader go)."""
    found: list = []
    look = threading.Thread(target=lambda: found.extend(watcher.poll_once()), daemon=True)
    look.start()
    look.join(timeout)
    if look.is_alive():
        for candidate in watcher.inbox.root.rglob("*"):
            if stat.S_ISFIFO(candidate.lstat().st_mode):
                with contextlib.suppress(OSError):
                    os.close(os.open(candidate, os.O_WRONLY | os.O_NONBLOCK))
        look.join(5)
        raise AssertionError("the look blocked on an entry")
    return found


def _assert_nowhere(store, text: str) -> None:
    """``text`` in no text column of any table of the register (quarantine, responses, audit trail, ...)."""
    columns = store.query("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
                          "'main' AND (data_type LIKE 'VARCHAR%' OR data_type = 'JSON') "
                          "AND table_name IN (SELECT table_name FROM information_schema.tables "
                          "WHERE table_type = 'BASE TABLE')")
    assert columns
    found = store.query(" UNION ALL ".join(
        f"""SELECT '{table}.{column}' FROM "{table}" WHERE contains(CAST("{column}" AS VARCHAR), $text)"""
        for table, column in columns), {"text": text})
    assert found == [], f"{text[:12]}... found in {found}"


# --- files that change under an import, and a console that stops holding one ---------------------------


def _while_importing(monkeypatch, *changes: Callable[[], None]) -> list[int]:
    """Run ``changes[i]`` at the start of the i-th import (then import as usual)."""
    real_import = inbox_claims.import_path
    calls: list[int] = []

    def changing(*args, **kwargs):
        calls.append(1)
        if len(calls) <= len(changes):
            changes[len(calls) - 1]()
        return real_import(*args, **kwargs)

    monkeypatch.setattr(inbox_claims, "import_path", changing)
    return calls


def _until_reported(watcher: InboxWatcher, timeout: float = 20.0) -> list:
    deadline = time.monotonic() + timeout
    while not watcher.results:
        assert time.monotonic() < deadline, "no report"
        watcher.poll_once()
        time.sleep(0.02)
    return watcher.results


def test_a_csv_growing_during_its_import_is_imported_again_whole(store, folder, monkeypatch, blind):
    """A CSV has no lines to read on from (its rows group into responses): it is imported again whole once it
    stops changing; what the first import stored counts as unchanged."""
    target = folder / "claims.csv"
    target.write_text("response_id,labels\n" + "".join(f"c-{n},SUPPORTED\n" for n in range(1, 11)))

    def append() -> None:  # through the writer's handle, which followed the file into .claimed/
        with _claimed_path(folder).open("a") as handle:
            handle.write("".join(f"c-{n},SUPPORTED\n" for n in range(11, 16)))

    _while_importing(monkeypatch, append)
    [result] = _until_reported(InboxWatcher(store, folder, poll_seconds=0.05))
    assert result.outcome == "done"
    assert [(b["records"], b["new_responses"], b["unchanged"]) for b in result.report["batches"]] == \
        [(10, 10, 0), (15, 5, 10)]
    assert any("imported again whole" in note for note in result.report["notes"])
    assert store.scalar("SELECT count(DISTINCT response_id) FROM responses") == 15
    assert store.scalar("SELECT count(*) FROM responses") == 15
    assert result.report["inbox"]["sha256"] == hashlib.sha256(target.parent.joinpath("done", target.name)
                                                              .read_bytes()).hexdigest()


def test_a_file_rewritten_during_its_import_is_imported_again_from_its_start(store, folder, monkeypatch, blind):
    """Not an append: the bytes already read changed. There is no "where it stopped" to read on from."""
    target = folder / "rewritten.jsonl"
    target.write_bytes(b"".join(record(n) for n in range(1, 6)))

    def rewrite() -> None:
        with _claimed_path(folder).open("r+b") as handle:
            handle.write(b"".join(record(n) for n in range(101, 108)))  # the writer's handle, from byte 0

    _while_importing(monkeypatch, rewrite)
    [result] = _until_reported(InboxWatcher(store, folder, poll_seconds=0.05))
    assert result.outcome == "done" and [b["records"] for b in result.report["batches"]] == [5, 7]
    assert any("changed while it was imported" in note for note in result.report["notes"])
    ids = {r for (r,) in store.query("SELECT response_id FROM responses")}
    assert ids == {f"w-{n:04d}" for n in (*range(1, 6), *range(101, 108))}  # both versions kept: nothing lost
    assert store.scalar("SELECT count(*) FROM quarantine") == 0


def test_a_console_stopping_while_it_holds_a_file_is_followed_from_where_it_stood(store, folder, monkeypatch,
                                                                                    blind):
    """The first console imported 199 records and stopped while the writer was in the middle of the last; the
    next takes the claim up from its saved state: the lines imported are not read again."""
    _settle(monkeypatch, 0.3)
    target = folder / "interrupted.jsonl"
    target.write_bytes(ALL_RECORDS[:-len(record(COUNT))])

    def half_a_line() -> None:
        with _claimed_path(folder).open("ab") as handle:
            handle.write(record(COUNT)[:20])

    _while_importing(monkeypatch, half_a_line)
    first = InboxWatcher(store, folder, poll_seconds=0.05)
    _wait(lambda: first.poll_once() or store.scalar("SELECT count(*) FROM import_batches"), 10, "the first part")
    first.stop()  # lets its claim go (a process that ends loses its locks the same way)
    with _claimed_path(folder).open("ab") as handle:
        handle.write(record(COUNT)[20:])
    [result] = _until_reported(InboxWatcher(store, folder, poll_seconds=0.05))
    assert result.report["inbox"]["resumed"] is True and result.report["inbox"]["parts"] == 2
    assert [b["records"] for b in result.report["batches"]] == [COUNT - 1, 1]
    _assert_every_record_stored_once(store, folder, target.name)


def test_a_claim_another_watcher_holds_is_not_taken_up(store, folder, monkeypatch, blind):
    _settle(monkeypatch, 0.3)
    (folder / "held.jsonl").write_bytes(ALL_RECORDS[:-40])  # its unfinished last line keeps it waiting, claimed
    first = InboxWatcher(store, folder, poll_seconds=0.05)
    _wait(lambda: first.poll_once() or not (folder / "held.jsonl").exists(), 10, "the file taken")
    second = InboxWatcher(store, folder, poll_seconds=0.05)
    for _ in range(3):
        assert second.poll_once() == []
    assert _claimed_path(folder).exists() and store.scalar("SELECT count(*) FROM import_batches") == 0
    first.stop()
