"""AppTest of the Import page: an upload imports, reports and quarantines exactly as the CLI does (same counts
and quarantine on the same file), the quarantine grid fixes a record in place and discards another with a
reason, a viewer can neither see nor use the page, and the inbox section shows what the inbox did."""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from register import Actor
from register.errors import PermissionDenied
from register.ingest.importer import import_path
from register.ingest.inbox import InboxWatcher
from register.ingest.quarantine import quarantine_rows
from tests.helpers.accounts import open_page
from tests.helpers.intake import MIXED_CSV, MIXED_JSONL, cli_outcome, outcome, write_mixed_parquet
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
PAGE = "pages/intake.py"


@pytest.fixture(autouse=True)
def _no_watcher_thread(monkeypatch):
    """The page's own inbox section is tested with a watcher called directly; no thread in these tests."""
    monkeypatch.setenv("HRI_INBOX_POLL_SECONDS", "0")


def _open(login_as, role: str = "annotator") -> AppTest:
    return open_page(PAGE, role, timeout=120)  # login_as: the fixture's accounts, as open_page makes them


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _upload(at, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="intake_upload").set_value((name, content, "application/octet-stream"))
    at.run()
    at.button(key="intake_import").click().run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_an_upload_imports_reports_and_quarantines_exactly_as_the_cli(seeded_db, login_as, tmp_path, capsys, kind):
    source = {"jsonl": MIXED_JSONL, "csv": MIXED_CSV}.get(kind) or write_mixed_parquet(tmp_path / "mixed.parquet")
    expected = cli_outcome(source, tmp_path / "cli.duckdb", capsys)
    at = _open(login_as)
    _upload(at, source.name, source.read_bytes())
    report = at.session_state["intake_report"]
    assert outcome(report, seeded_db, source_name=source.name) == expected
    shown = _metrics(at)
    counts = expected["counts"]
    assert shown == {"Records": f"{counts['records']:,}", "Accepted": f"{counts['accepted']:,}",
                     "New": f"{counts['new_responses']:,}", "Revised": f"{counts['new_revisions']:,}",
                     "Unchanged": f"{counts['unchanged']:,}", "Quarantined": f"{counts['quarantined']:,}"}
    batches = next(d.value for d in at.dataframe if "quarantined" in d.value.columns)
    assert batches["file"].tolist() == [source.name]
    assert any("quarantined" in w.value for w in at.warning)
    grid = at.session_state[f"intake_q_editor_{at.session_state['intake_q_gen']}"]  # the grid is shown
    assert grid is not None
    assert seeded_db.scalar("SELECT actor_name FROM import_batches WHERE source_name = ?", [source.name]) == \
        "test-annotator"


def test_the_grid_fixes_one_record_in_place_and_discards_another_with_a_reason(seeded_db, login_as):
    at = _open(login_as)
    _upload(at, MIXED_JSONL.name, MIXED_JSONL.read_bytes())
    open_rows = quarantine_rows(seeded_db)
    frame_ids = [r["quarantine_id"] for r in open_rows]
    label_row = next(r for r in open_rows if r["response_id"] == "intake-3")
    broken_row = next(r for r in open_rows if r["location"] == "line 3")
    key = f"intake_q_editor_{at.session_state['intake_q_gen']}"
    at.session_state[key] = {"edited_rows": {
        frame_ids.index(label_row["quarantine_id"]): {
            "raw": label_row["raw"].replace("HALLUCINATED", "CONTRADICTED"), "action": "re-import"},
        frame_ids.index(broken_row["quarantine_id"]): {"action": "discard",
                                                       "discard_reason": "truncated line, sent again as intake-5"},
    }, "added_rows": [], "deleted_rows": []}
    at.button(key="intake_q_apply").click().run()
    assert not at.exception, at.exception
    messages = [s.value for s in at.success]
    assert f"#{label_row['quarantine_id']}: re-imported" in " ".join(messages)
    assert f"#{broken_row['quarantine_id']}: discarded" in messages
    status = dict(seeded_db.query("SELECT quarantine_id, status FROM quarantine WHERE quarantine_id IN (?, ?)",
                                  [label_row["quarantine_id"], broken_row["quarantine_id"]]))
    assert status == {label_row["quarantine_id"]: "resolved", broken_row["quarantine_id"]: "discarded"}
    assert seeded_db.scalar("SELECT count(*) FROM responses WHERE response_id = 'intake-3' AND is_current") == 1
    assert seeded_db.one("SELECT discarded_by, discard_reason FROM quarantine WHERE quarantine_id = ?",
                         [broken_row["quarantine_id"]]) == {"discarded_by": "test-annotator",
                                                            "discard_reason": "truncated line, sent again as intake-5"}
    at.segmented_control(key="intake_q_status").set_value("discarded").run()
    closed = next(d.value for d in at.dataframe if "discard_reason" in d.value.columns)
    assert closed["quarantine_id"].tolist() == [broken_row["quarantine_id"]]


def test_a_discard_without_a_reason_is_refused_and_the_row_stays_open(seeded_db, login_as):
    at = _open(login_as)
    _upload(at, MIXED_JSONL.name, MIXED_JSONL.read_bytes())
    row = quarantine_rows(seeded_db)[0]
    key = f"intake_q_editor_{at.session_state['intake_q_gen']}"
    at.session_state[key] = {"edited_rows": {0: {"action": "discard"}}, "added_rows": [], "deleted_rows": []}
    at.button(key="intake_q_apply").click().run()
    assert any("needs a reason" in e.value for e in at.error), [e.value for e in at.error]
    assert seeded_db.scalar("SELECT status FROM quarantine WHERE quarantine_id = ?", [row["quarantine_id"]]) == "open"


def test_a_viewer_does_not_see_the_page_and_cannot_import(seeded_db, login_as):
    at = AppTest.from_file(APP, default_timeout=120)
    login_as(at, "viewer")
    at.run()
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(PAGE)  # not in a viewer's navigation
    page = AppTest.from_file(str(REPO_ROOT / PAGE), default_timeout=120)  # opened directly anyway
    login_as(page, "viewer")
    page.run()
    assert not page.exception, page.exception
    assert any("annotator role" in w.value for w in page.warning)
    assert not page.get("file_uploader") and not page.dataframe
    with pytest.raises(PermissionDenied):  # the register refuses too, whatever a page shows
        import_path(seeded_db, Actor("test-viewer", "viewer"), MIXED_JSONL)
    assert seeded_db.scalar("SELECT count(*) FROM import_batches WHERE source_name = ?", [MIXED_JSONL.name]) == 0


def test_a_refused_upload_is_named_and_writes_nothing(seeded_db, login_as):
    at = _open(login_as)
    batches = seeded_db.scalar("SELECT count(*) FROM import_batches")
    _upload(at, "picture.jsonl", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    assert any("File refused" in e.value for e in at.error)
    assert seeded_db.scalar("SELECT count(*) FROM import_batches") == batches


def test_the_inbox_section_shows_the_latest_reports(seeded_db, login_as):
    inbox = seeded_db.path.parent / "inbox"
    inbox.mkdir()
    shutil.copy(MIXED_JSONL, inbox / MIXED_JSONL.name)
    watcher = InboxWatcher(seeded_db, inbox, poll_seconds=1, settle_seconds=0)
    watcher.poll_once()
    [result] = watcher.poll_once()
    at = _open(login_as)
    latest = next(d.value for d in at.dataframe if "moved to" in d.value.columns)
    assert latest.iloc[0]["file"] == MIXED_JSONL.name and latest.iloc[0]["outcome"] == "done"
    assert latest.iloc[0]["quarantined"] == result.report["quarantined"] == 4


def test_the_running_console_imports_a_dropped_file_with_one_watcher_for_every_session(seeded_db, login_as,
                                                                                      monkeypatch):
    import time

    import streamlit as st

    from ui.features.intake import ensure_inbox_watcher

    monkeypatch.setenv("HRI_INBOX_POLL_SECONDS", "0.1")
    monkeypatch.setenv("HRI_INBOX_SETTLE_SECONDS", "0.2")
    _open(login_as), _open(login_as, "reviewer")  # two sessions of one server process, each running app.py
    watcher = ensure_inbox_watcher()
    assert watcher is not None and watcher.running
    threads = [t for t in __import__("threading").enumerate() if t.name.startswith("hri-inbox:")]
    assert [t.name for t in threads] == [f"hri-inbox:{(seeded_db.path.parent / 'inbox').resolve()}"]
    inbox = seeded_db.path.parent / "inbox"
    shutil.copy(MIXED_JSONL, inbox / ".drop.partial")
    (inbox / ".drop.partial").rename(inbox / MIXED_JSONL.name)
    deadline = time.monotonic() + 60
    while not (inbox / "done" / f"{MIXED_JSONL.name}.report.json").exists():
        assert time.monotonic() < deadline, "the console's watcher did not import the dropped file"
        time.sleep(0.1)
    assert seeded_db.scalar("SELECT actor_name FROM import_batches WHERE source_name = ?", [MIXED_JSONL.name]) == \
        "inbox"
    st.cache_resource.clear()  # the resource released (server shutdown, cache cleared): the thread ends
    assert not watcher.running
