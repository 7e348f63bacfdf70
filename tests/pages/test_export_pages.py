"""Exports of the console's pages (issue 14, "the export trap"). The Responses page's is prepared once by DuckDB
into a temporary file, offered until the view changes, never rebuilt on a rerun, Excel only up to
HRI_EXCEL_MAX_ROWS; the audit page's is written by DuckDB when its button is clicked, never on a run."""

from __future__ import annotations

import csv
import io
import tempfile
from collections import Counter

import pytest

import register.console.exports
import register.console.queries.explorer
import register.db.audit
import register.governance.report
import ui.framework.exports
from tests.helpers.accounts import open_page
from tests.helpers.paths import REPO_ROOT


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """Counts of every function that builds export rows or bytes; export folders go to ``tmp_path``."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    counter: Counter[str] = Counter()

    def counted(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            counter[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counted(register.console.queries.explorer, "export_rows")
    counted(register.console.exports, "write_csv")
    counted(register.db.audit, "write_events_csv")
    counted(register.governance.report, "report_pdf")
    counted(register.governance.report, "report_markdown")
    for name in ("to_csv_bytes", "to_excel_bytes", "write_excel"):
        counted(ui.framework.exports, name)
    return counter


def _responses_page(role: str = "reviewer", page: str = "pages/responses.py"):
    return open_page(page, role)


def _prepare(at):
    next(b for b in at.button if b.label == "Prepare export").click().run()
    assert not at.exception, at.exception


def _downloads(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button")]


def _total(at) -> int:
    return int(next(c.value for c in at.caption if " responses · page " in c.value).split(" ")[0].replace(",", ""))


def test_a_rerun_after_prepare_export_builds_nothing(seeded_db, calls):
    at = _responses_page()
    assert _downloads(at) == [] and sum(calls.values()) == 0
    _prepare(at)
    assert _downloads(at) == ["Download CSV", "Download Excel"]
    prepared = calls.copy()
    for _ in range(3):  # any click on the page reruns it: the export is offered, not rebuilt
        at.run()
        assert _downloads(at) == ["Download CSV", "Download Excel"]
    at.toggle(key="responses_desc").set_value(False).run()  # a new order: same rows, still offered
    assert _downloads(at) == ["Download CSV", "Download Excel"]
    assert calls == prepared  # (before: the CSV and Excel bytes were built again on every one of these runs)
    # built once, by DuckDB's COPY and one Excel writer; the rows never passed through the old path
    assert prepared["write_csv"] == 1 and prepared["write_excel"] == 1
    assert not calls["export_rows"] and not calls["to_csv_bytes"] and not calls["to_excel_bytes"]
    export = at.session_state["responses_export"]
    assert export.rows == _total(at)
    with export.csv.open(encoding="utf-8", newline="") as handle:
        assert len(list(csv.reader(handle))) == export.rows + 1
    assert str(export.folder).startswith(tempfile.gettempdir()) and REPO_ROOT not in export.folder.parents


def test_a_new_export_replaces_the_files_of_the_last_and_another_view_is_not_offered(seeded_db, calls):
    at = _responses_page()
    _prepare(at)
    first = at.session_state["responses_export"]
    _prepare(at)
    second = at.session_state["responses_export"]
    assert second.folder != first.folder and not first.folder.exists() and second.csv.is_file()
    at.text_input(key="responses_search").set_value("ISO 27001 certification").run()
    assert _downloads(at) == []  # the prepared file holds another view
    _prepare(at)
    assert at.session_state["responses_export"].rows == _total(at) < second.rows
    assert not second.folder.exists()


def test_excel_is_not_offered_above_the_row_limit(seeded_db, calls, monkeypatch):
    monkeypatch.setenv("HRI_EXCEL_MAX_ROWS", "5")
    at = _responses_page()
    _prepare(at)
    assert _downloads(at) == ["Download CSV"]
    assert calls["write_excel"] == 0 and at.session_state["responses_export"].excel is None
    note = next(c.value for c in at.caption if c.value.startswith("No Excel file"))
    assert f"this export has {_total(at):,} rows" in note and "up to 5 (HRI_EXCEL_MAX_ROWS)" in note
    assert not any("highest-scoring" in c.value for c in at.caption)  # the whole view is in the file


def test_an_export_cut_at_its_row_limit_says_so(seeded_db, calls, monkeypatch):
    write = register.console.exports.write_csv
    monkeypatch.setattr(register.console.exports, "write_csv", lambda *a, **k: write(*a, **k, limit=7))
    at = _responses_page()
    _prepare(at)
    assert at.session_state["responses_export"].rows == 7 < _total(at)
    assert any(f"the 7 highest-scoring of the view's {_total(at):,} responses" in c.value for c in at.caption)


def test_an_export_whose_files_are_gone_asks_to_prepare_again(seeded_db, calls):
    at = _responses_page()
    _prepare(at)
    ui.framework.exports.discard(at.session_state["responses_export"])  # as the sweep of stale folders would
    at.run()
    assert not at.exception, at.exception
    assert _downloads(at) == [] and any("prepare it again" in i.value for i in at.info)


def test_the_audit_page_builds_no_export_on_a_run(seeded_db, calls):
    at = _responses_page(page="pages/audit.py")
    for _ in range(2):
        at.run()
    at.text_input(key="audit_actor").input("test-rev").run()
    assert not at.exception, at.exception
    assert _downloads(at) == ["Download CSV"]
    # before: the events were read again and turned into CSV bytes on every run
    assert not calls["to_csv_bytes"] and not calls["write_events_csv"]


def test_the_audit_download_is_written_by_duckdb_into_a_folder_removed_afterwards(seeded_db, tmp_path,
                                                                                    monkeypatch):
    from register.db.audit import EVENT_COLUMNS, EventFilter, write_events_csv

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    data = ui.framework.exports.written_bytes(lambda path: write_events_csv(seeded_db, EventFilter(), path))
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))
    assert rows[0] == list(EVENT_COLUMNS)
    assert len(rows) - 1 == seeded_db.scalar("SELECT count(*) FROM audit_events")
    assert not list(tmp_path.glob(ui.framework.exports.EXPORT_DIR_PREFIX + "*"))


def test_register_and_release_report_downloads_are_built_when_clicked_not_on_a_run(seeded_db, calls):
    at = _responses_page(page="pages/claims_register.py")
    at.run()
    assert {"Export CSV", "Export Excel", "Template (CSV)", "Template (Excel)"} <= set(_downloads(at))
    at = _responses_page(page="pages/checklist.py")
    next(b for b in at.button if b.label == "Run the checklist now").click().run()
    at.run()
    assert not at.exception, at.exception
    assert {"Release report (PDF)", "Release report (Markdown)"} <= set(_downloads(at))
    # before: both registers' files, both templates and the PDF report were built on every run
    assert not calls["to_csv_bytes"] and not calls["to_excel_bytes"] and not calls["report_pdf"]
    assert not calls["report_markdown"]
