"""Markdown injection, end to end in Chromium: payloads (markdown images and links, raw HTML, ``javascript:``
links, autolinks, backtick breakouts, math, directives) in every field a user or a data file controls, and
every page opened. Every URL in the payloads points at a local logging server: nothing may reach it, no
dialog may open, and no page may hold a link or an image that points there.

Fields: use_case, model, response_id, question, answer, claim id/text/span/source (a JSONL import); source
id/title/ref/publisher/notes and claim id/statement/reviewer/notes (register CSV imports); the CLI's
``HRI_ACTOR`` (the checklist's "Run by", the registers' "updated by"); a draft profile's name and its
author; a Delphi session's title, facilitator and experts; a review decision's reason; an account's display
name (the one logged in); a search; a response id typed in and one in the URL; a ``focus`` link.
"""

from __future__ import annotations

import csv
import os
from urllib.parse import quote

import pytest

from tests.helpers.browser import E2E_PASSWORD, screenshot, submit_login_form, wait_for_session_cookie
from tests.helpers.cli import run_register
from tests.helpers.hostile_text import hostile, hostile_id, logging_server, write_hostile_responses

pytestmark = pytest.mark.browser

HOSTILE_ADMIN = "e2e-hostile"


@pytest.fixture
def logger():
    with logging_server() as server:
        yield server


def _write_registers(tmp_path, port: int) -> tuple:
    sources = tmp_path / "sources.csv"
    source_id = hostile_id(port, "src_id")
    with sources.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["source_id", "title", "ref", "source_type", "authority_tier", "publisher", "access_date", "notes"])
        w.writerow([source_id, hostile(port, "src_title"), hostile(port, "src_ref"), "web page", 3,
                    hostile(port, "src_publisher"), "2026-01-02", hostile(port, "src_notes", multiline=True)])
    claims = tmp_path / "claims.csv"
    claim_id = hostile_id(port, "reg_claim")
    with claims.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["claim_id", "statement", "claim_type", "source_type", "source_ref", "access_date",
                    "verification_status", "reviewer", "review_date", "notes"])
        # a verified claim resting on a web page: a rule violation, so it shows on the rules and checklist pages
        w.writerow([claim_id, hostile(port, "reg_statement"), "benchmark property or number", "web page", source_id,
                    "2026-01-02", "verified", hostile(port, "reg_reviewer"), "2026-01-03",
                    hostile(port, "reg_notes", multiline=True)])
    return sources, claims, claim_id


def _prepare(tmp_path, port: int, record: dict):
    sources, claims, _ = _write_registers(tmp_path, port)

    def prepare(db) -> None:
        from register import SYSTEM, Actor, Store
        from register.access.identity import change_own_password, create_user
        from register.console.review import record_decision
        from register.scoring import elicitation, profiles

        actor = hostile(port, "HRI_ACTOR")
        previous = os.environ.get("HRI_ACTOR")
        os.environ["HRI_ACTOR"] = actor  # the command line's acting user
        try:
            run_register("--db", db, "governance", "import", "sources", sources)
            run_register("--db", db, "governance", "import", "claims", claims)
            run_register("--db", db, "checklist", "run", "--record")
        finally:
            if previous is None:
                os.environ.pop("HRI_ACTOR")
            else:
                os.environ["HRI_ACTOR"] = previous
        store = Store(db)
        try:
            author = Actor(hostile_id(port, "author"), "system")
            profiles.create_draft(store, author, {}, name=hostile_id(port, "profile_name"))
            elicitation.open_session(store, author, hostile(port, "delphi_title"),
                                     [hostile_id(port, "expert"), HOSTILE_ADMIN], 0.05)
            queued = store.query_one("SELECT response_id FROM responses WHERE response_id <> ? AND is_current "
                                     "AND response_id NOT IN (SELECT response_id FROM review_decisions) "
                                     "ORDER BY response_id LIMIT 1", [record["response_id"]])[0]
            record_decision(store, author, queued, 1, "block", hostile(port, "reason", multiline=True))
            change_own_password(store, Actor(HOSTILE_ADMIN, "admin"),
                                create_user(store, SYSTEM, HOSTILE_ADMIN, "admin", hostile(port, "display_name")),
                                E2E_PASSWORD)
        finally:
            store.close()

    return prepare


def _login(page, url: str, heading: str) -> None:
    submit_login_form(page, HOSTILE_ADMIN, E2E_PASSWORD)
    page.get_by_role("heading", name=heading).wait_for(timeout=60_000)


def _leaks(page, port: int) -> list[str]:
    """Links, images, frames and media in the page that point at the logging server or run script."""
    return page.evaluate(
        """(port) => {
            const bad = [];
            const hit = (v) => v && (v.includes(':' + port) || /^\\s*(javascript|vbscript|data):/i.test(v));
            for (const el of document.querySelectorAll('a, area, img, image, iframe, frame, embed, object, '
                                                        + 'source, video, audio, link, use, script')) {
                for (const attr of ['href', 'src', 'data', 'srcset', 'xlink:href', 'poster']) {
                    const v = el.getAttribute(attr);
                    if (hit(v)) bad.push(el.tagName + ' ' + attr + '=' + v);
                }
            }
            document.querySelectorAll('.katex').forEach(() => bad.push('math rendered'));
            return bad;
        }""", port)


def _settle_and_check(page, logger: dict, dialogs: list, where: str) -> None:
    page.wait_for_timeout(1500)  # images and frames load as soon as they are in the DOM; give them time
    screenshot(page, f"injection-{where}")
    assert logger["requests"] == [], f"{where}: requests reached the logging server: {logger['requests']}"
    assert dialogs == [], f"{where}: dialogs opened: {dialogs}"
    assert _leaks(page, logger["port"]) == [], f"{where}: live links or images"


def _open(page, link: str, heading: str) -> None:
    for _ in range(3):
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click(timeout=30_000)
        try:
            page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=20_000)
            return
        except Exception:  # noqa: BLE001 - a rerun still in flight can swallow the first click
            page.wait_for_timeout(500)
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=10_000)


def test_payloads_in_every_field_load_nothing_and_link_nowhere(start_app, page, logger, tmp_path):
    port = logger["port"]
    record = write_hostile_responses(tmp_path / "hostile.jsonl", port)
    server = start_app(imports=(tmp_path / "hostile.jsonl",), prepare=_prepare(tmp_path, port, record))
    url = server["url"]
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    page.goto(url)
    _login(page, url, "Overview")
    page.get_by_test_id("stMetricValue").first.wait_for(timeout=30_000)
    page.locator(".js-plotly-plot").first.wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "overview")

    _open(page, "Responses", "Responses")
    search = page.get_by_role("textbox", name="Search question, answer and claims")
    search.fill("answer: ![img]")
    search.press("Enter")
    page.get_by_text("1 responses · page 1 of 1").wait_for(timeout=30_000)
    search.fill(hostile(port, "search"))
    search.press("Enter")
    page.get_by_text("No responses match").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "responses")

    _open(page, "Response detail", "Response detail")
    box = page.get_by_role("textbox", name="Response id")
    box.fill(record["response_id"])
    box.press("Enter")
    page.get_by_text("Recomputed from the stored labels").wait_for(timeout=30_000)
    page.get_by_text("use_case-![i](http").first.wait_for(timeout=10_000)  # shown as typed
    _settle_and_check(page, logger, dialogs, "detail")
    # the charts (claim and rule ids in their labels and hovers) are drawn only when opened: open them, check again
    page.get_by_text("Charts: the score's make-up and its history").click()
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "detail-charts")
    box.fill(hostile_id(port, "unknown_id"))
    box.press("Enter")
    page.get_by_text("does not exist").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "detail-not-found")

    _open(page, "Review queue", "Review queue")
    picker = page.get_by_test_id("stSelectbox").filter(has_text="Response to decide on")
    picker.click()
    page.get_by_role("option", name=record["response_id"]).click()
    page.get_by_text("(revision 1)").wait_for(timeout=30_000)
    page.get_by_text("Open the detail of").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "review-queue")

    _open(page, "Scoring profiles", "Scoring profiles")
    for tab in ("Version", "Compare", "Impact & publish"):
        page.get_by_role("tab", name=tab).click()
        page.wait_for_timeout(500)
    page.get_by_text("was created by").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "profiles")

    _open(page, "Weight elicitation", "Weight elicitation")
    page.get_by_role("tab", name="Delphi rounds").click()
    page.get_by_text("Facilitator").first.wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "elicitation")

    _open(page, "Calibration", "Calibration")
    _settle_and_check(page, logger, dialogs, "calibration")

    _open(page, "Source register", "Source register")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "sources")

    _open(page, "Claims register", "Claims register")
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "claims")

    _open(page, "Evidence rules", "Minimum evidence rules")
    page.get_by_text("Fix reg_claim").first.wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "evidence-rules")

    _open(page, "Pre-submission checklist", "Pre-submission checklist")
    page.get_by_text("Run by").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "checklist")

    _open(page, "Audit trail", "Audit trail")
    _settle_and_check(page, logger, dialogs, "audit")

    _open(page, "Users", "Users")
    _settle_and_check(page, logger, dialogs, "users")

    # links from outside: a focus link and an unknown response id in the URL (each a new Streamlit session, logged in
    # by the login's session cookie)
    claim_key = hostile_id(port, "reg_claim")
    wait_for_session_cookie(page)
    page.goto(f"{url}/claims?focus={quote(claim_key)}")
    page.get_by_role("heading", name="Claims register").wait_for(timeout=60_000)
    page.get_by_text("Fix claim").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "claims-focus")
    page.goto(f"{url}/response?response_id={quote(hostile_id(port, 'url_id'))}")
    page.get_by_role("heading", name="Response detail").wait_for(timeout=60_000)
    page.get_by_text("does not exist").wait_for(timeout=30_000)
    _settle_and_check(page, logger, dialogs, "detail-url-not-found")
