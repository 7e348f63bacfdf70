"""In Chromium, by keyboard (issue 33, item 5): typing a label into the workbench's label picker and pressing Enter
selects that label alone. Streamlit's multiselect used to offer "Select 2 matches" first for SUPPORTED (which
UNSUPPORTED contains), so Enter stored SUPPORTED + UNSUPPORTED. The note's Enter saves; the stored annotation
holds exactly the typed label. Screenshot: the picker after Enter."""

from __future__ import annotations

import pytest

from tests.e2e.test_browser_labelling import _prepare, _wait_text
from tests.helpers.browser import browser_login, screenshot

pytestmark = pytest.mark.browser


def _type_label(page, form, label: str) -> None:
    """Focus the form's label picker, type ``label`` and press Enter, then Escape (closes the list); wait until its
    tag shows."""
    # the fresh picker: while the page reruns, the previous claim's widgets are still in the DOM
    picker = _picker(page, form)
    picker.locator("input").focus()
    page.keyboard.type(label)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    picker.get_by_text(label, exact=True).wait_for(timeout=10_000)


def _picker(page, form):
    fresh = form.locator('[data-testid="stElementContainer"][data-stale="false"] [data-testid="stMultiSelect"]')
    return fresh.filter(has=page.get_by_text("Labels (one or more)", exact=True))


def _tags(page, form) -> list[str]:
    picker = _picker(page, form)
    return [tag.strip() for tag in picker.locator("[data-tag]").all_inner_texts()]


def test_typing_a_label_and_pressing_enter_selects_that_label_alone(start_app, page):
    chosen: dict = {}
    server = start_app(prepare=lambda db: _prepare(db, chosen))
    claims = chosen["claims"]
    browser_login(page, server["url"], "e2e-anna")
    page.get_by_role("link", name="Labelling workbench").click()
    _wait_text(page, "Batch progress: 0 of 2 claims labelled")

    for done, (claim_id, label) in enumerate(zip(claims, ("SUPPORTED", "UNSUPPORTED"), strict=True), start=1):
        form = page.get_by_test_id("stForm").filter(has_text=f"Claim {claim_id}")
        form.wait_for(timeout=30_000)
        _type_label(page, form, label)
        assert _tags(page, form) == [label]  # not SUPPORTED + UNSUPPORTED ("Select 2 matches")
        if done == 1:
            screenshot(page, "label-picker-after-enter")
        note = form.get_by_label("Note (Enter saves)")
        note.focus()
        page.keyboard.type("typed and Enter")
        page.keyboard.press("Enter")
        _wait_text(page, f"Batch progress: {done} of 2 claims labelled")
    server["stop"]()

    from register import Store

    store = Store(server["db"])
    try:
        rows = store.query("SELECT unit_id, labels, note FROM annotations WHERE annotator = 'e2e-anna' "
                           "ORDER BY position")
        assert [(unit, list(labels), note) for unit, labels, note in rows] == [
            (claims[0], ["SUPPORTED"], "typed and Enter"), (claims[1], ["UNSUPPORTED"], "typed and Enter")]
    finally:
        store.close()
