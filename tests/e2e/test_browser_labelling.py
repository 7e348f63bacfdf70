"""End to end in Chromium: two annotators label the same batch blind and disagree on one claim, a reviewer
adjudicates it, the response's score and band change, the audit trail shows each step, and the agreement page
shows the batch's alpha. Screenshots of the workbench, the adjudication queue and the agreement page."""

from __future__ import annotations

import pytest

from hri_core.agreement import Rating, krippendorff_alpha
from tests.helpers.browser import E2E_PASSWORD, browser_login, browser_logout, screenshot, wait_metric

pytestmark = pytest.mark.browser

ANNOTATORS = {"e2e-anna": "annotator", "e2e-ben": "annotator"}


def _prepare(db, chosen: dict) -> None:
    """Accounts for the annotators and a batch of one Low response with two claims, drawn by the reviewer."""
    from register import SYSTEM, Actor, Store
    from register.access.identity import change_own_password, create_user
    from register.labels.batches import Selection, create_batch

    store = Store(db)
    try:
        for name, role in ANNOTATORS.items():  # e2e-reviewer is one of the fixture's accounts
            change_own_password(store, Actor(name, role), create_user(store, SYSTEM, name, role), E2E_PASSWORD)
        rid, band, score = store.query_one(
            "SELECT r.response_id, s.band, s.score FROM responses r JOIN scores s ON s.response_id = r.response_id "
            "AND s.revision = r.revision AND s.is_current WHERE r.is_current AND r.claim_count = 2 AND s.band = 'Low' "
            "ORDER BY r.response_id LIMIT 1")
        create_batch(store, Actor("e2e-reviewer", "reviewer"), "pilot", Selection(response_ids=(rid,)),
                     list(ANNOTATORS))
        claims = [c for (c,) in store.query("SELECT claim_id FROM claims WHERE response_id = ? AND is_current "
                                            "ORDER BY claim_idx", [rid])]
        chosen.update({"response_id": rid, "band": band, "score": score, "claims": claims})
    finally:
        store.close()


def _wait_text(page, text: str, timeout: float = 90_000) -> None:
    """Wait until the page holds ``text`` (the progress bar's caption is not visible text to Playwright's text
    locator)."""
    page.wait_for_function("t => document.body.textContent.includes(t)", arg=text, timeout=timeout)


def _choose(page, label: str, option: str, scope=None) -> None:
    """Pick ``option`` in the multiselect labelled ``label`` (inside ``scope``, a form, when given), skipping
    stale elements: while a page reruns, the previous claim's widgets are still in the DOM beside the next one's."""
    fresh = (scope or page).locator(
        '[data-testid="stElementContainer"][data-stale="false"] [data-testid="stMultiSelect"]')
    box = fresh.filter(has=page.get_by_text(label, exact=True))
    box.locator("input").click()
    page.get_by_role("option", name=option, exact=True).click()
    page.keyboard.press("Escape")


def _label(page, claim_id: str, labels: str, criticality: str, done: int) -> None:
    """Label ``claim_id`` (the claim the workbench must show) and save; wait until ``done`` claims are labelled."""
    form = page.get_by_test_id("stForm").filter(has_text=f"Claim {claim_id}")
    form.wait_for(timeout=30_000)
    _choose(page, "Labels (one or more)", labels, scope=form)
    box = form.get_by_label("Criticality (v_i)")
    box.fill(criticality)
    box.press("Tab")
    form.get_by_role("button", name="Save and next").click()
    _wait_text(page, f"Batch progress: {done} of 2 claims labelled")


def _annotate(page, url: str, who: str, claims: list[str], first: tuple[str, str]) -> None:
    browser_login(page, url, who)
    page.get_by_role("link", name="Labelling workbench").click()
    page.get_by_role("heading", name="Labelling workbench").wait_for(timeout=30_000)
    _wait_text(page, "Batch progress: 0 of 2 claims labelled")
    _label(page, claims[0], *first, done=1)
    _label(page, claims[1], "SUPPORTED", "1", done=2)
    browser_logout(page)


def _audit_count(page, action: str, count: int) -> None:
    """Choose ``action`` in the audit trail's Action filter (typed, then its option pressed) and wait for ``count``
    matching events. The choice is made again until its tag shows in the box: under load a click on the option list
    could be lost (clean-clone runs stood at "All actions" with every event listed)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    actions = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("Action", exact=True))
    for _ in range(3):
        # typed first: the option list then holds only matching actions, so the wanted one is drawn (a long list
        # is drawn in part, and a click on it could land before it was)
        try:
            actions.locator("input").click()
            actions.locator("input").fill(action)
            page.get_by_role("option", name=action, exact=True).click(timeout=10_000)
            page.keyboard.press("Escape")
            actions.get_by_text(action, exact=True).wait_for(timeout=10_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    page.get_by_text(f"{count} matching events").wait_for(timeout=30_000)


def test_two_annotators_disagree_a_reviewer_adjudicates_and_the_score_changes(start_app, page):
    chosen: dict = {}
    server = start_app(prepare=lambda db: _prepare(db, chosen))
    url, rid = server["url"], chosen["response_id"]
    # anna: the first claim is contradicted and critical; ben: it is supported (the disagreement)
    claims = chosen["claims"]
    _annotate(page, url, "e2e-anna", claims, ("CONTRADICTED", "3"))
    browser_login(page, url, "e2e-ben")
    page.get_by_role("link", name="Labelling workbench").click()
    _wait_text(page, "Batch progress: 0 of 2 claims labelled")
    # blind: ben's form starts empty, and anna's labels are nowhere on his page
    assert "CONTRADICTED" not in page.get_by_test_id("stForm").first.inner_text()
    screenshot(page, "labelling-workbench")
    _label(page, claims[0], "SUPPORTED", "1", done=1)
    _label(page, claims[1], "SUPPORTED", "1", done=2)
    browser_logout(page)

    browser_login(page, url, "e2e-reviewer")
    page.get_by_role("link", name="Adjudication").click()
    wait_metric(page, "Disagreements to adjudicate", "1")
    page.get_by_test_id("stRadio").filter(has_text="Rule").get_by_text("Expert adjudication", exact=True).click()
    page.get_by_label("Reason (required)").fill("The retrieved source contradicts the claim.")
    _choose(page, "Labels", "CONTRADICTED")
    box = page.get_by_label("Criticality", exact=True)
    box.fill("3")
    box.press("Tab")
    page.wait_for_timeout(500)
    screenshot(page, "labelling-adjudication-queue")
    page.get_by_role("button", name="Record adjudication").click()
    result = page.get_by_text("New revision for")
    result.wait_for(timeout=60_000)
    assert "now scores 70.0 (High" in result.inner_text() and "revision 2" in result.inner_text()
    wait_metric(page, "Disagreements to adjudicate", "0")

    page.get_by_role("link", name="Audit trail").click()
    page.get_by_role("heading", name="Audit trail").wait_for(timeout=30_000)
    _audit_count(page, "label.batch_create", 1)
    _audit_count(page, "label.annotate", 5)   # + the four annotations
    _audit_count(page, "label.adjudicate", 6)
    _audit_count(page, "label.apply", 7)
    screenshot(page, "labelling-audit")

    page.get_by_role("link", name="Annotator agreement").click()
    page.get_by_role("heading", name="Annotator agreement").wait_for(timeout=30_000)
    expected = krippendorff_alpha([Rating("claim 1", "anna", "CONTRADICTED"), Rating("claim 1", "ben", "SUPPORTED"),
                                   Rating("claim 2", "anna", "SUPPORTED"), Rating("claim 2", "ben", "SUPPORTED")])
    wait_metric(page, "Labels alpha (nominal)", f"{expected.alpha:.3f}")
    page.wait_for_timeout(1000)
    screenshot(page, "labelling-agreement")
    server["stop"]()

    from register import Store

    store = Store(server["db"])
    try:
        after = store.one("SELECT revision, score, band FROM scores WHERE is_current AND response_id = ?", [rid])
        assert (chosen["band"], after["band"], after["revision"]) == ("Low", "High", 2)
        assert after["score"] > chosen["score"]
        steps = [a for (a,) in store.query(
            "SELECT action FROM audit_events WHERE (action LIKE 'label.%' OR action = 'scores.rescore') AND seq >= "
            "(SELECT seq FROM audit_events WHERE action = 'label.batch_create') ORDER BY seq")]
        assert steps[0] == "label.batch_create" and steps.count("label.annotate") == 4
        assert steps[-3:] == ["label.adjudicate", "scores.rescore", "label.apply"]
    finally:
        store.close()


def test_an_annotator_labels_a_whole_response_in_the_grid(start_app, page):
    """The workbench grid, driven by keyboard as an annotator would: select a cell, type, Enter; "Save the grid"
    stores each changed row as its own annotation."""
    chosen: dict = {}
    server = start_app(prepare=lambda db: _prepare(db, chosen))
    browser_login(page, server["url"], "e2e-anna")
    page.get_by_role("link", name="Labelling workbench").click()
    _wait_text(page, "Batch progress: 0 of 2 claims labelled")
    page.get_by_test_id("stButtonGroup").get_by_text("Grid", exact=True).click()
    grid = page.get_by_test_id("stDataFrame").locator("canvas").first
    grid.wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    box = grid.bounding_box()
    assert box is not None
    def cell(column_x: int, row: int) -> tuple[float, float]:
        return box["x"] + column_x, box["y"] + 35 + 17 + 35 * row  # below the header row

    def edit(column_x: int, row: int, value: str) -> None:
        """Open the cell's editor (double click), replace its value and commit it (a multiselect: Enter picks the
        option, Tab commits)."""
        page.mouse.dblclick(*cell(column_x, row))
        editor = page.locator("#portal input, #portal textarea").first  # the grid's overlay editor
        editor.wait_for(timeout=10_000)
        if column_x == LABELS:
            editor.click()
            page.keyboard.type(value)
        else:
            editor.fill(value)
        page.keyboard.press("Enter")
        if column_x == LABELS:
            page.keyboard.press("Tab")
        page.wait_for_timeout(300)

    # columns (pages/workbench.py widths): Claim 110, State 90, Text 300, Labels 200, Criticality 110
    LABELS, CRITICALITY = 110 + 90 + 300 + 100, 110 + 90 + 300 + 200 + 55
    for row, criticality in enumerate(("3", "2")):
        edit(LABELS, row, "SUPPORTED")
        edit(CRITICALITY, row, criticality)
    page.wait_for_timeout(500)
    screenshot(page, "labelling-workbench-grid")
    page.get_by_role("button", name="Save the grid").click()
    page.get_by_text("Saved 2 claims.").wait_for(timeout=30_000)
    _wait_text(page, "Batch progress: 2 of 2 claims labelled")
    server["stop"]()

    from register import Store

    store = Store(server["db"])
    try:
        rows = store.query("SELECT unit_id, labels, criticality, note FROM annotations WHERE annotator = 'e2e-anna' "
                           "ORDER BY position")
        assert [(u, list(labels), c, n) for u, labels, c, n in rows] == [
            (chosen["claims"][0], ["SUPPORTED"], 3, None), (chosen["claims"][1], ["SUPPORTED"], 2, None)]
        assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'label.annotate'") == 2
    finally:
        store.close()
