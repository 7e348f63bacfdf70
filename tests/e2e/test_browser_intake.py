"""End to end in Chromium: upload a file with bad records on the Import page and see the report and the
quarantine grid; drop another file into the inbox of the running console and see it imported. Both store
exactly what ``python -m register import`` stores for the same file (compared after the server stops).
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from register import Store
from tests.helpers.browser import browser_login, metrics, screenshot, wait_metric
from tests.helpers.intake import MIXED_CSV, MIXED_JSONL, cli_outcome, outcome

pytestmark = pytest.mark.browser


def test_upload_and_inbox_import_as_the_cli_does(start_app, page, tmp_path, capsys):
    expected_upload = cli_outcome(MIXED_JSONL, tmp_path / "cli-jsonl.duckdb", capsys)
    expected_inbox = cli_outcome(MIXED_CSV, tmp_path / "cli-csv.duckdb", capsys)
    server = start_app(env={"HRI_INBOX_POLL_SECONDS": "0.5", "HRI_INBOX_SETTLE_SECONDS": "0.5"})
    browser_login(page, server["url"], "e2e-reviewer")
    page.get_by_role("link", name="Import").click(timeout=30_000)
    page.get_by_role("heading", name="Import", exact=True).wait_for(timeout=30_000)
    page.locator("input[type=file]").set_input_files(str(MIXED_JSONL))
    page.get_by_text(MIXED_JSONL.name).first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Import", exact=True).click()
    wait_metric(page, "Quarantined", str(expected_upload["counts"]["quarantined"]), timeout=60_000)
    shown = metrics(page)
    counts = expected_upload["counts"]
    assert shown == {"Records": str(counts["records"]), "Accepted": str(counts["accepted"]),
                     "New": str(counts["new_responses"]), "Revised": str(counts["new_revisions"]),
                     "Unchanged": str(counts["unchanged"]), "Quarantined": str(counts["quarantined"])}
    page.get_by_role("heading", name="Quarantine").wait_for(timeout=30_000)
    page.get_by_test_id("stDataFrame").nth(1).wait_for(timeout=30_000)  # the report's table, then the grid
    page.wait_for_timeout(1500)  # the canvas grid hydrates after the element appears
    shot = screenshot(page, "intake-upload")
    assert shot.stat().st_size > 0

    inbox = server["db"].parent / "inbox"
    partial = inbox / f".{MIXED_CSV.name}.partial"
    shutil.copy(MIXED_CSV, partial)
    partial.rename(inbox / MIXED_CSV.name)  # dropped whole, as a careful writer does
    report_path = inbox / "done" / f"{MIXED_CSV.name}.report.json"
    deadline = time.monotonic() + 60
    while not report_path.exists():
        assert time.monotonic() < deadline, "the running console did not import the dropped file"
        time.sleep(0.2)
    page.get_by_role("link", name="Overview").click()  # away and back: the page reads the inbox again
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    page.get_by_role("link", name="Import").click()
    page.get_by_role("heading", name="Inbox").wait_for(timeout=60_000)
    page.get_by_test_id("stDataFrame").nth(2).wait_for(timeout=30_000)  # the inbox's latest reports
    page.wait_for_timeout(1000)
    screenshot(page, "intake-inbox")

    server["stop"]()  # the database is the server's until it stops
    store = Store(server["db"])
    try:
        stored = outcome(json.loads(report_path.read_text()), store, source_name=MIXED_CSV.name)
        assert stored == expected_inbox
        uploaded = store.query("SELECT source_name, location, response_id, raw, reasons, status FROM quarantine "
                               "WHERE source_name = ? ORDER BY location", [MIXED_JSONL.name])
        assert [(*r[:4], json.loads(r[4]), r[5]) for r in uploaded] == expected_upload["stored_quarantine"]
        assert store.scalar("SELECT actor_name FROM import_batches WHERE source_name = ?", [MIXED_JSONL.name]) == \
            "e2e-reviewer"
    finally:
        store.close()
