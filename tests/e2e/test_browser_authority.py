"""End to end in Chromium: superseding a source in the source register makes the SUPPORTED claim of a scored
answer resting on it show as "stale source, proposed OUTDATED" on the detail page -- its stored label
unchanged -- and sends the answer to the review queue with that reason. Screenshots in tests/artifacts/."""

from __future__ import annotations

import json

import pytest

from tests.helpers.browser import browser_login, metrics, screenshot, wait_metric

pytestmark = pytest.mark.browser

SOURCE_ID, NEWER = "aaa-policy", "aaa-policy-2"  # sorted first in the source register's grid
SUPERSEDED_BY_COLUMN = 8  # source_id, title, ref, source_type, authority_tier, publisher, access_date, valid_until
# a use case the demo's use-case register approves: an unknown one would be held for review by the Scope check already
RECORD = {"response_id": "au-e2e", "use_case": "hr-policy", "model": "m", "created_at": "2025-01-02T09:00:00Z",
          "question": "May I work from abroad?", "answer": "Yes, for up to 30 days a year.",
          "claims": [{"claim_id": "c1", "text": "Remote work abroad is allowed for up to 30 days a year.",
                      "labels": ["SUPPORTED"], "criticality": 1, "source_id": SOURCE_ID}]}


def _prepare(tmp_path):
    def prepare(db) -> None:
        from register import SYSTEM, Store
        from register.governance.registers import add_row
        from register.ingest.importer import import_path

        store = Store(db)
        try:
            for source_id, title in ((SOURCE_ID, "Remote work policy 2024"), (NEWER, "Remote work policy 2025")):
                add_row(store, SYSTEM, "sources", {"source_id": source_id, "title": title,
                                                   "source_type": "approved internal policy / access-control record",
                                                   "authority_tier": 1})
            path = tmp_path / "authority-e2e.jsonl"
            path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
            import_path(store, SYSTEM, path)
        finally:
            store.close()
    return prepare


def _open(page, link: str, heading: str) -> None:
    for _ in range(3):
        try:
            page.get_by_role("link", name=link).first.click(timeout=30_000)
        except Exception:  # noqa: BLE001 - keep what the page showed, then fail
            screenshot(page, f"authority-navigation-{heading}")
            raise
        try:
            page.get_by_role("heading", name=heading).wait_for(timeout=20_000)
            return
        except Exception:  # noqa: BLE001 - a rerun still in flight can swallow the first click
            pass
    page.get_by_role("heading", name=heading).wait_for(timeout=10_000)


def _type_into_superseded_by(page, grid, by: str) -> None:
    box = grid.bounding_box()
    for attempt in range(12):
        page.mouse.click(box["x"] + 40, box["y"] + 35 + 18)  # first data row, first visible column
        for _ in range(SUPERSEDED_BY_COLUMN + (0, -1, 1, -2, 2, -3)[attempt % 6]):
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Enter")
        editor = page.locator("#portal textarea, #portal input.gdg-input").first
        try:
            editor.wait_for(timeout=3_000)
            if editor.is_enabled() and editor.input_value() == "":
                # the empty text cell of row 1 right of valid_until: superseded_by (archive link is a link cell)
                break
        except Exception:  # noqa: BLE001 - the grid may not have hydrated yet
            page.wait_for_timeout(500)
        page.keyboard.press("Escape")
        page.wait_for_timeout(300)
    else:
        raise AssertionError("could not open the superseded_by cell of the first row")
    editor.fill(by)
    page.keyboard.press("Enter")
    page.wait_for_timeout(500)


def _column_holding(grid, value: str) -> str | None:
    """The header of the first row's cell that shows ``value``, read from the grid's accessibility table (it
    lists the visible cells as text; the canvas does not)."""
    return grid.evaluate("""(el, value) => {
        const cell = Array.from(el.querySelectorAll('td[id^="glide-cell-"]'))
            .find(td => td.id.endsWith('-0') && td.textContent === value);
        if (!cell) return null;
        const th = el.querySelector(`th[aria-colindex="${cell.getAttribute('aria-colindex')}"]`);
        return th ? th.textContent : null; }""", value)


def _supersede_first_source(page, by: str) -> None:
    """Type ``by`` into the first row's "Superseded by" cell and save; an edit that landed in another empty
    text cell (the grid was still hydrating when the keys arrived) is discarded with Reload and tried again."""
    for _ in range(3):
        grid = page.get_by_test_id("stDataFrame").first
        grid.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # the canvas grid hydrates after the element appears
        _type_into_superseded_by(page, grid, by)
        column = _column_holding(grid, by)
        if column == "Superseded by":
            break
        page.get_by_role("button", name="Reload").click()  # discards the grid's unsaved edits
        page.wait_for_timeout(1500)
    else:
        raise AssertionError(f"the edit landed in {column!r}, not in 'Superseded by'")
    page.get_by_role("button", name="Save changes").click()
    page.get_by_text("Saved: 1 updated").wait_for(timeout=30_000)


def test_superseding_a_source_proposes_outdated_and_queues_the_answer(start_app, page, tmp_path):
    app = start_app(prepare=_prepare(tmp_path))
    browser_login(page, app["url"], "e2e-admin")
    _open(page, "Review queue", "Review queue")
    wait_metric(page, "In queue", f"{app['expected']['queue']:,}")
    before = int(metrics(page)["In queue"].replace(",", ""))

    _open(page, "Source register", "Source register")
    _supersede_first_source(page, NEWER)
    screenshot(page, "authority-source-superseded")

    _open(page, "Response detail", "Response detail")  # a page.goto would start a new (logged-out) session
    box = page.get_by_role("textbox", name="Response id")
    box.fill("au-e2e")
    box.press("Enter")
    warning = page.get_by_text("stale source, proposed OUTDATED").first
    warning.wait_for(timeout=30_000)
    text = page.get_by_test_id("stAlertContentWarning").filter(has_text="proposed OUTDATED").first.inner_text()
    assert f"superseded by {NEWER}" in text and "not applied" in text
    screenshot(page, "authority-detail-stale-source")

    _open(page, "Review queue", "Review queue")
    wait_metric(page, "In queue", f"{before + 1:,}")
    # oldest first: the 2025 answer is the one picked, with its reason shown
    # the supersession decided the answer again at once (issue 33): review, for the stale source
    page.get_by_text("Why in queue: decision review:").first.wait_for(timeout=30_000)
    page.get_by_text("failed current (stale source)").first.wait_for(timeout=10_000)
    page.get_by_text("Open the detail of").first.wait_for(timeout=10_000)
    assert "au-e2e" in page.get_by_text("Open the detail of").first.inner_text()
    screenshot(page, "authority-review-queue")
