"""End to end in Chromium: the Responses page's export is prepared once and downloaded by a real click (the
download buttons read the prepared file only when clicked, which AppTest never does)."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest

from tests.helpers.browser import browser_login, screenshot

pytestmark = pytest.mark.browser


def test_prepare_then_download_the_responses_view_as_csv_and_excel(app_server, page, tmp_path):
    browser_login(page, app_server["url"], "e2e-reviewer")
    page.get_by_role("link", name="Responses").click()
    page.get_by_role("heading", name="Responses").wait_for(timeout=30_000)
    page.get_by_role("button", name="Prepare export").click()
    csv_button = page.get_by_role("button", name="Download CSV")
    csv_button.wait_for(timeout=60_000)
    screenshot(page, "responses-export-prepared")
    with page.expect_download(timeout=60_000) as download:
        csv_button.click()
    path = tmp_path / "view.csv"
    download.value.save_as(path)
    assert download.value.suggested_filename == "hri-responses.csv"
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))
    assert len(rows) == app_server["expected"]["responses"]  # the demo view, unfiltered, whole
    assert rows[0]["response_id"] == app_server["expected"]["first_by_score"]  # highest score first
    with page.expect_download(timeout=60_000) as download:
        page.get_by_role("button", name="Download Excel").click()
    workbook = tmp_path / "view.xlsx"
    download.value.save_as(workbook)
    assert zipfile.is_zipfile(workbook) and "xl/workbook.xml" in zipfile.ZipFile(workbook).namelist()
