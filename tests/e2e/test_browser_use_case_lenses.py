"""End to end in Chromium, the journey of issue 37's "Done when": an admin registers a use case (a CSV import on the
Use cases page), suspends it (the same row imported again, status suspended) and sees its answers queued with the
Scope reason in the Review queue; then binds a draft profile to another use case, previews its impact on the Scoring
profiles page (limited to that use case's answers) and a second admin approves the lens version, which publishes the
draft for that use case only (four eyes). The overview's profile filter on the bound version then shows its answers.

Screenshots: tests/artifacts/use-case-lens-*.png."""

from __future__ import annotations

import contextlib
import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.conftest import E2E_ACCOUNTS
from tests.helpers.browser import browser_login, browser_logout, screenshot, wait_metric

pytestmark = pytest.mark.browser

ACCOUNTS = {**E2E_ACCOUNTS, "e2e-admin-two": "admin"}
HEADER = "use_case_id,owner,purpose,status,allowed_categories,requester_roles,approved_by,review_by\n"
WEIGHTS = {"F": 0.3, "C": 0.2, "U": 0.15, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.05}


NEW_USE_CASE = "travel-desk"  # answers of a use case the demo's register does not list yet


def _prepare(found: dict):
    """Before the server starts: answers of a use case not yet registered, the use cases by answers, and a draft the
    first admin made. The use case to bind is the most answered one the demo's lenses leave to the default."""
    def prepare(db) -> None:
        import json
        from pathlib import Path

        from hri_core.synthetic import generate_responses
        from register import SYSTEM, Actor, Store
        from register.ingest.importer import import_path
        from register.scoring.lenses import bound_use_cases
        from register.scoring.profiles import create_draft

        travel = Path(db).with_name("travel-desk.jsonl")
        records = [{**r, "response_id": f"travel-{i}", "use_case": NEW_USE_CASE,
                    "claims": [{**c, "claim_id": f"travel-{i}-{k}"} for k, c in enumerate(r["claims"], 1)]}
                   for i, r in enumerate(generate_responses(6, seed=37))]
        travel.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        with contextlib.closing(Store(db)) as store:
            import_path(store, SYSTEM, travel)
            rows = store.query("SELECT use_case, count(*) FROM responses WHERE is_current AND use_case IS NOT NULL "
                               "AND response_key IN (SELECT response_key FROM scores WHERE is_current) "
                               "GROUP BY 1 ORDER BY 2 DESC, 1")
            found["counts"] = dict(rows)
            bound = bound_use_cases(store)
            found["registered"] = store.scalar("SELECT count(*) FROM use_case_register WHERE NOT deleted")
            found["suspend"] = NEW_USE_CASE
            found["bind"] = next(name for name, _ in rows if name not in bound and name != NEW_USE_CASE)
            found["draft"] = create_draft(store, Actor("e2e-admin", "admin"), {"weights": WEIGHTS},
                                          name="contracts-strict")
    return prepare


def _wait_text(page, text: str, timeout: float = 90_000) -> None:
    """Wait until the page holds ``text`` (also text Playwright's locators do not see as visible)."""
    page.wait_for_function("t => document.body.textContent.includes(t)", arg=text, timeout=timeout)


def _fresh(scope):
    """Elements of the current run only: while a page reruns, the previous run's are still in the DOM."""
    return scope.locator('[data-testid="stElementContainer"][data-stale="false"]')


def _open(page, url: str, heading: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=heading).first.wait_for(timeout=60_000)


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name, exact=True).click(timeout=30_000)


def _import(page, path, expected: str) -> None:
    """Upload ``path`` in the Import / export tab and import it; wait for the summary ``expected`` starts."""
    _tab(page, "Import / export")
    page.locator("input[type=file]").set_input_files(str(path))
    button = page.get_by_role("button", name="Import", exact=True)
    for _ in range(3):  # a click that a rerun in flight swallowed is made again
        button.click(timeout=30_000)
        with contextlib.suppress(PlaywrightTimeout):
            _wait_text(page, expected, timeout=30_000)
            return
    _wait_text(page, expected)


def _approve(page, reason: str) -> None:
    """Approve the lens version waiting, in the Profiles and lenses tab, with ``reason``."""
    _tab(page, "Profiles and lenses")
    approve = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name=re.compile("^Approve lens")))
    approve.get_by_role("textbox", name="Reason").fill(reason)
    approve.get_by_role("button", name=re.compile("^Approve lens")).click()


def test_a_suspended_use_case_is_queued_and_a_bound_profile_is_published_for_its_use_case(start_app, page, tmp_path):
    found: dict = {}
    app = start_app(accounts=ACCOUNTS, prepare=_prepare(found))
    url, suspend, bind, draft = app["url"], found["suspend"], found["bind"], found["draft"]
    browser_login(page, url, "e2e-admin")

    # 1. register a use case (status proposed), then suspend it: the same row imported again
    _open(page, f"{url}/use-cases", "Use cases")
    registered = tmp_path / "register.csv"
    registered.write_text(HEADER + f"{suspend},Olivia Owner,Answers for {suspend},proposed,,staff,,\n")
    _import(page, registered, "1 rows: 1 new")
    wait_metric(page, "Use cases", f"{found['registered'] + 1:,}")  # the counts above the import are read again
    screenshot(page, "use-case-lens-1-registered")
    suspended = tmp_path / "suspend.csv"
    suspended.write_text(HEADER + f"{suspend},Olivia Owner,Answers for {suspend},suspended,,staff,,\n")
    _open(page, f"{url}/use-cases", "Use cases")
    _import(page, suspended, "1 rows: 0 new, 1 updated")
    screenshot(page, "use-case-lens-2-suspended")

    # 2. its answers are in the review queue, with the Scope check's reason
    _open(page, f"{url}/review?uc={suspend}", "Review queue")
    reason = f"Scope: use case {suspend} is suspended: at least review"
    _wait_text(page, reason)
    wait_metric(page, "In queue", f"{found['counts'][suspend]:,}")
    assert page.get_by_text(re.compile(r"^Why in queue: .*" + re.escape(reason))).count()
    screenshot(page, "use-case-lens-3-queue-scope-reason")

    # 3. bind the draft to another use case: a lens version that waits for a second person
    _open(page, f"{url}/use-cases", "Use cases")
    _tab(page, "Profiles and lenses")
    form = page.get_by_test_id("stForm").filter(
        has=page.get_by_role("button", name="Save lens (waits for a second person)"))
    form.get_by_role("textbox", name="Use case").fill(bind)
    form.get_by_role("combobox", name="Profile").click()
    page.get_by_role("option", name=f"v{draft} contracts-strict (draft)", exact=True).click()
    form.get_by_role("textbox", name="Reason").fill("stricter weights for this use case")
    form.get_by_role("button", name="Save lens (waits for a second person)").click()
    _wait_text(page, "waits for a second person: stricter weights for this use case")
    screenshot(page, "use-case-lens-4-lens-saved")

    # 4. the publish tab says which use case the draft would be bound to; the preview is limited to its answers
    _open(page, f"{url}/profiles", "Scoring profiles")
    _tab(page, "Impact & publish")
    _wait_text(page, f"would be bound to use cases {bind} by lens version")
    page.get_by_role("button", name="Preview impact", exact=True).click()
    _wait_text(page, f"Full rescore of the answers of use cases {bind} only.")
    wait_metric(page, "Responses compared", f"{found['counts'][bind]:,}")
    screenshot(page, "use-case-lens-5-preview-limited")

    # 5. the admin who saved the lens version cannot approve it
    _open(page, f"{url}/use-cases", "Use cases")
    _approve(page, "my own binding")
    page.get_by_test_id("stAlert").filter(has_text="Needs a second person").first.wait_for(timeout=60_000)
    screenshot(page, "use-case-lens-6-own-approval-refused")
    browser_logout(page)

    # 6. a second admin approves the lens version: the draft is published for that use case (four eyes)
    browser_login(page, url, "e2e-admin-two")
    _open(page, f"{url}/use-cases", "Use cases")
    _approve(page, "checked the limited preview")
    _wait_text(page, " in force")
    page.wait_for_function("t => !document.body.textContent.includes(t)", arg="waits for a second person: stricter",
                           timeout=60_000)  # the page drawn again: the binding in force, nothing waiting
    screenshot(page, "use-case-lens-7-approved")

    # 7. the overview's profile filter on the bound version shows the answers it scored
    _open(page, f"{url}/?pv={draft}", "Overview")
    wait_metric(page, "Responses", f"{found['counts'][bind]:,}")
    screenshot(page, "use-case-lens-8-overview-bound-version")

    app["stop"]()
    from register import Store
    with contextlib.closing(Store(app["db"])) as store:
        assert store.scalar("SELECT status FROM scoring_profiles WHERE profile_version = ?", [draft]) == "bound"
        under = dict(store.query("SELECT r.use_case, count(*) FROM current_scores s JOIN responses r "
                                 "ON r.response_key = s.response_key WHERE s.profile_version = ? GROUP BY 1", [draft]))
        assert under == {bind: found["counts"][bind]}
        held = store.scalar("SELECT count(*) FROM current_scores s JOIN responses r ON r.response_key = s.response_key "
                            "WHERE r.use_case = ? AND s.decision IN ('review', 'block')", [suspend])
        assert held == found["counts"][suspend]
