"""The console's trust bugs, each seen in Chromium: the histogram against the band cards, "No claims" as its
own state, deep links through the login, the users page's defaults, the review form and the decision on
the response and in the audit trail, claim highlighting, the responses page's paging and filters, the add
form, "Normalise", the four-eyes message and signing a checklist run once. Screenshots land in
tests/artifacts/ to be looked at.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from hri_core import default_profile
from register.console.review import DECISIONS
from tests.helpers.browser import (
    E2E_PASSWORD,
    browser_login,
    metrics,
    screenshot,
    submit_login_form,
    wait_for_session_cookie,
    wait_metric,
)
from tests.helpers.cli import run_register
from ui.features.figures import band_colors
from ui.features.highlight import LABEL_COLORS

pytestmark = pytest.mark.browser


def _open(page, link: str, heading: str) -> None:
    """Go to a page by its sidebar link (a reload would start a new session) and wait for its heading."""
    for _ in range(3):
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=link, exact=True).click(timeout=30_000)
        try:
            page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=20_000)
            return
        except Exception:  # noqa: BLE001 - a rerun still in flight can swallow the first click
            page.wait_for_timeout(500)
    page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=10_000)


def _login_form(page, username: str) -> None:
    submit_login_form(page, username, E2E_PASSWORD)


def _type_date(page, label: str, year: int, month: int, day: int) -> None:
    """Type a date into a date field's year, month and day segments, and wait until the field holds it.

    The segments are checked before the form is submitted (and typed again, up to three times), so that a
    keystroke lost while the field re-renders fails here, by name, not later as a missing confirmation."""
    want = {"year": str(year), "month": str(month), "day": str(day)}
    for _ in range(3):
        page.get_by_role("spinbutton", name=f"year, {label}").click()
        page.keyboard.type(f"{year:04d}{month:02d}{day:02d}")
        page.keyboard.press("Escape")  # close the calendar the field opened
        page.get_by_test_id("stFloatingOverlayPortal").get_by_role("gridcell").first.wait_for(state="detached",
                                                                                               timeout=10_000)
        try:
            for part, value in want.items():
                expect(page.get_by_role("spinbutton", name=f"{part}, {label}")).to_have_attribute(
                    "aria-valuenow", value, timeout=10_000)
            return
        except AssertionError:
            continue
    raise AssertionError(f"the date field {label!r} did not take {year:04d}-{month:02d}-{day:02d}")


def _choose(page, selectbox_label: str, option: str, scope=None) -> None:
    """Pick ``option`` in the selectbox labelled ``selectbox_label`` (inside ``scope``, e.g. one form, when
    given: the users page has an "Account" box in two forms)."""
    (scope or page).get_by_test_id("stSelectbox").filter(has_text=selectbox_label).get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()


def _date_ranges_fit(page) -> bool:
    """Whether every date field on the page shows its whole value (its scroller does not hide the end)."""
    return page.evaluate("""() => [...document.querySelectorAll('[data-testid="stDateInputFieldsScroller"]')]
        .every(el => el.scrollWidth <= el.clientWidth + 1)""")


def _plot(page, title: str) -> dict:
    """The data of the Plotly chart titled ``title`` (the figure object Plotly keeps on its element)."""
    page.wait_for_function("""(title) => [...document.querySelectorAll('.js-plotly-plot')]
        .some(g => g.layout && g.layout.title && g.layout.title.text.includes(title))""", arg=title, timeout=30_000)
    return page.evaluate("""(title) => {
        const g = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.layout.title.text.includes(title));
        const t = g.data[0];
        return {x: [...t.x], width: [...t.width], y: [...t.y], color: [...t.marker.color],
                band: t.customdata.map(c => c[2])};
    }""", title)


# --- overview: histogram and band cards agree; "No claims" is its own state --------------------------------


def test_histogram_bars_add_up_to_the_band_cards_and_no_claims_stands_apart(start_app, page, tmp_path):
    extra = tmp_path / "edges.jsonl"
    records = [{"response_id": f"fifty-{i}", "created_at": "2026-06-01T10:00:00Z", "answer": "x",
                "claims": [{"text": "x", "labels": ["CONTRADICTED"], "criticality": 2}]} for i in range(5)]
    records += [{"response_id": f"empty-{i}", "created_at": "2026-06-01T10:00:00Z", "answer": "I cannot say.",
                 "claims": []} for i in range(3)]
    extra.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    counts = {}

    def prepare(db) -> None:
        from register import Store

        store = Store(db)
        try:
            counts["fifty"] = store.query_one("SELECT count(*) FROM scores WHERE is_current AND score = 50")[0]
            counts["none"] = store.query_one("SELECT count(*) FROM scores WHERE is_current AND no_claims")[0]
        finally:
            store.close()

    server = start_app(imports=(extra,), prepare=prepare)
    assert counts["fifty"] >= 5 and counts["none"] >= 3
    browser_login(page, server["url"], "e2e-viewer")
    wait_metric(page, "Responses", f"{server['expected']['responses']:,}")
    hist = _plot(page, "Score distribution")
    screenshot(page, "trust-overview")
    cards = {label.split(" → ")[0]: int(value.replace(",", "")) for label, value in metrics(page).items()
             if " → " in label}
    profile = default_profile()
    for band in profile.bands:
        bars = sum(y for y, b in zip(hist["y"], hist["band"], strict=True) if b == band.name)
        assert bars == cards[band.name], (band.name, bars, cards[band.name])
    colors = band_colors([b.name for b in profile.bands])
    fifty = [i for i, (x, w) in enumerate(zip(hist["x"], hist["width"], strict=True)) if x - w / 2 < 50 <= x + w / 2]
    assert [hist["band"][i] for i in fifty] == ["Medium"] and hist["color"][fifty[0]] == colors["Medium"]
    assert hist["y"][fifty[0]] >= counts["fifty"]
    assert cards["No claims"] == counts["none"]
    assert sum(hist["y"]) + counts["none"] == server["expected"]["responses"]
    page.get_by_text("without claims have no score").wait_for(timeout=10_000)


# --- deep links and the users page ----------------------------------------------------------------------


def test_deep_links_survive_the_login_and_the_users_form_changes_nothing_by_default(shared_app_server, page):
    url = shared_app_server["url"]
    # a first visit of the app (the server runs its navigation once; a fresh server would serve the pages
    # folder as a plain multipage app on its very first request, which hides the behaviour under test)
    page.goto(url)
    page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=60_000)
    # logged out, a deep link shows the login form, then the page asked for; logged in, the login's session cookie
    # opens the next deep link at once (its navigation, drawn before the page runs, already the admin's)
    for path, heading, logged_in in (("audit", "Audit trail", False), ("users", "Users", True)):
        page.goto(f"{url}/{path}")
        if not logged_in:
            page.get_by_role("heading", name="HRI console — log in").wait_for(timeout=60_000)
            assert page.get_by_text("Page not found").count() == 0
            _login_form(page, "e2e-admin")
        page.get_by_role("heading", name=heading, exact=True).wait_for(timeout=60_000)
        assert page.url.rstrip("/").endswith(f"/{path}")
        assert page.get_by_text("Page not found").count() == 0
        wait_for_session_cookie(page)
    screenshot(page, "trust-users-deep-link")

    # one click on Apply with the untouched form changes nothing
    page.get_by_role("button", name="Apply").click()
    page.get_by_text("nothing was changed").wait_for(timeout=30_000)
    assert page.get_by_text("Logged in as").inner_text().count("(admin") == 1
    # a role change asks first, naming the account, its role now and the new one
    change_form = page.get_by_test_id("stForm").filter(has_text="Change an account")
    _choose(page, "Account", "e2e-viewer", change_form)
    _choose(page, "Change", "set role", change_form)
    _choose(page, "New role", "reviewer", change_form)
    page.get_by_role("button", name="Apply").click()
    question = page.get_by_text("Change the role of")
    question.wait_for(timeout=30_000)
    assert re.search(r"e2e-viewer\s+from viewer to reviewer\?", question.inner_text())
    screenshot(page, "trust-users-confirm")
    page.get_by_role("button", name="Change e2e-viewer's role to reviewer").click()
    page.get_by_text("Change the role of").wait_for(state="detached", timeout=30_000)
    page.get_by_text("role reviewer done").wait_for(timeout=30_000)


# --- review: nothing preselected; the decision on the response and in the audit trail ---------------------


def test_a_decision_shows_on_the_response_and_is_found_in_the_audit_trail_by_its_id(shared_app_server, page):
    browser_login(page, shared_app_server["url"], "e2e-reviewer")
    _open(page, "Review queue", "Review queue")
    page.get_by_text("Decision on").wait_for(timeout=30_000)
    decision = page.get_by_test_id("stRadio").filter(has_text="Decision")
    decision.locator("input[type=radio]").first.wait_for(state="attached", timeout=30_000)
    assert decision.locator("input[type=radio]").count() == len(DECISIONS)
    assert decision.locator("input[type=radio]:checked").count() == 0  # nothing preselected
    rid = page.get_by_test_id("stMarkdownContainer").filter(has_text="Decision on").locator("code").inner_text()
    decision.get_by_text("Block", exact=True).click()
    page.get_by_label("Reason (required)").fill("Contradicts the signed contract.")
    before = int(metrics(page)["In queue"].replace(",", ""))
    page.get_by_role("button", name="Record decision").click()
    wait_metric(page, "In queue", f"{before - 1:,}")

    _open(page, "Response detail", "Response detail")
    box = page.get_by_role("textbox", name="Response id")
    box.fill(rid)
    box.press("Enter")
    wait_metric(page, "Review decision", "Block")
    page.get_by_text("Decided by e2e-reviewer").wait_for(timeout=10_000)
    screenshot(page, "trust-detail-decided")

    _open(page, "Audit trail", "Audit trail")
    page.get_by_test_id("stDateInput").first.wait_for(timeout=30_000)
    assert _date_ranges_fit(page), "the audit page's date range is cut off"
    record = page.get_by_role("textbox", name="Record id (exact)")
    record.fill(rid)
    record.press("Enter")
    # a response id finds the answer's whole life (its import, scoring and the decision); the toggle narrows it to
    # the events filed under the id itself: the review decision alone
    page.get_by_text("Only the events filed under this exact id").wait_for(timeout=30_000)
    screenshot(page, "trust-audit-answer-life")
    page.get_by_text("Only the events filed under this exact id").click()
    page.get_by_text("1 matching events").wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    screenshot(page, "trust-audit-by-response-id")


# --- highlighting, paging, filters, date range ---------------------------------------------------------------


def test_claims_highlighted_responses_paged_and_filters_only_where_they_apply(shared_app_server, page):
    url = shared_app_server["url"]
    page.goto(f"{url}/?from=2026-01-01&to=2026-12-31")
    _login_form(page, "e2e-reviewer")
    page.get_by_role("heading", name="Overview").wait_for(timeout=60_000)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_text("Filters", exact=True).wait_for(timeout=30_000)
    date_box = sidebar.get_by_test_id("stDateInputField")
    shown = re.sub(r"\s+", "", date_box.inner_text())
    assert re.fullmatch(r"2026-01-01[–-]2026-\d\d-\d\d", shown), shown
    screenshot(page, "trust-date-range")
    assert _date_ranges_fit(page), "the date range is cut off in the sidebar"

    _open(page, "Responses", "Responses")
    page_box = page.get_by_role("spinbutton", name="Page")
    page_box.fill("3")
    page_box.press("Enter")
    page.get_by_text(re.compile(r"page 3 of \d+")).wait_for(timeout=30_000)
    search = page.get_by_role("textbox", name="Search question, answer and claims")
    search.fill("ISO 27001")
    search.press("Enter")
    page.get_by_text(re.compile(r"page 1 of 1 ")).wait_for(timeout=30_000)
    search.fill("no answer says zyxwvut")
    search.press("Enter")
    page.get_by_text("No responses match the search").wait_for(timeout=30_000)
    assert page.get_by_text("python -m register import").count() == 0
    screenshot(page, "trust-responses-no-hits")

    _open(page, "Response detail", "Response detail")
    assert sidebar.get_by_text("Filters", exact=True).count() == 0  # they do not change this page
    box = page.get_by_role("textbox", name="Response id")
    box.fill("fcgpt-017")
    box.press("Enter")
    answer = page.locator(".hri-answer")
    answer.wait_for(timeout=30_000)
    claims = answer.locator("sup").evaluate_all("els => els.flatMap(e => e.dataset.claims.split(','))")
    assert sorted(map(int, claims)) == list(range(1, 10))  # all nine claims placed
    kavanaugh = answer.locator("mark", has_text="Brett Kavanaugh")
    assert kavanaugh.get_attribute("data-label") == "CONTRADICTED"
    assert "\n" in answer.inner_text()  # line breaks kept
    styles = answer.locator("mark").evaluate_all("els => els.map(e => getComputedStyle(e).borderBottomColor)")
    assert len(set(styles)) >= 2  # CONTRADICTED and SUPPORTED told apart
    legend = page.locator(".hri-legend")
    assert "CONTRADICTED" in legend.inner_text() and "SUPPORTED" in legend.inner_text()
    assert LABEL_COLORS["CONTRADICTED"].lower() in kavanaugh.get_attribute("style").lower()
    page.wait_for_timeout(500)
    screenshot(page, "trust-highlight-fcgpt-017")

    _open(page, "Source register", "Source register")
    assert sidebar.get_by_text("Filters", exact=True).count() == 0
    _open(page, "Overview", "Overview")
    sidebar.get_by_text("Filters", exact=True).wait_for(timeout=30_000)  # the selection is still there
    assert re.sub(r"\s+", "", date_box.inner_text()) == shown


# --- add form, Normalise, four eyes, signing once ----------------------------------------------------------


def test_add_form_normalise_four_eyes_and_one_sign_off_per_reviewer(start_app, page):
    def prepare(db) -> None:
        from register import Actor, Store
        from register.scoring.profiles import create_draft

        run_register("--db", db, "checklist", "run", "--record")
        store = Store(db)
        try:
            create_draft(store, Actor("e2e-admin", "admin"), {}, name="admin's own draft")
        finally:
            store.close()

    server = start_app(prepare=prepare)
    browser_login(page, server["url"], "e2e-admin")

    # first: adding a source below changes the register, which makes the run stale (no longer signable)
    _open(page, "Pre-submission checklist", "Pre-submission checklist")
    page.get_by_role("button", name="Sign", exact=True).click()
    page.get_by_text("You signed this run").wait_for(timeout=60_000)
    assert page.get_by_role("button", name="Sign", exact=True).count() == 0
    screenshot(page, "trust-checklist-signed")

    _open(page, "Source register", "Source register")
    page.get_by_role("tab", name="Add one source").click()
    title = page.get_by_role("textbox", name="Title", exact=True)
    title.fill("A vendor blog post")
    page.get_by_label("URL or reference").fill("https://vendor.example/post")
    _choose(page, "Source type", "web page")
    page.get_by_role("button", name="Add source").click()
    error = page.get_by_text("fix this field")
    error.wait_for(timeout=30_000)
    assert "Access date" in page.get_by_test_id("stAlertContentError").inner_text()
    assert "row 1" not in page.get_by_test_id("stAlertContentError").inner_text()
    assert title.input_value() == "A vendor blog post"  # kept
    screenshot(page, "trust-add-source-refused")
    _type_date(page, "Access date", 2026, 11, 1)
    page.get_by_role("button", name="Add source").click()
    page.get_by_test_id("stToast").filter(has_text="src-a-vendor-blog-post").wait_for(timeout=60_000)  # readable id
    page.wait_for_function("() => [...document.querySelectorAll('input[aria-label=\"Title\"]')]"
                           ".every(el => el.value === '')", timeout=30_000)  # saved: the form starts empty

    _open(page, "Scoring profiles", "Scoring profiles")
    weight = page.get_by_role("spinbutton", name=re.compile("^F — "))
    weight.fill("0.35")
    weight.press("Enter")
    wait_metric(page, "Weight sum", "1.1000")
    page.get_by_role("button", name="Normalise weights to sum 1").click()
    wait_metric(page, "Weight sum", "1.0000")
    page.wait_for_timeout(1000)
    assert "created with a default value" not in server["log"].read_text()
    page.get_by_role("tab", name="Impact & publish").click()
    page.get_by_label("Reason for publishing (required)").fill("ready")
    page.get_by_role("button", name="Publish and rescore").click()
    refusal = page.get_by_text("a second person must approve it (four eyes)")
    refusal.wait_for(timeout=60_000)
    screenshot(page, "trust-four-eyes")


# --- an older profile version chosen in the sidebar --------------------------------------------------------


def _options(page) -> list[str]:
    """The options of the open multiselect, without the "Select all" entry Streamlit adds."""
    return [text for text in page.get_by_role("option").all_inner_texts() if text != "Select all"]


def test_an_older_profile_version_and_its_bands_are_chosen_in_the_sidebar(start_app, page):
    """The Profile version box opens, lists the versions with scores, and under the version chosen the Band
    filter offers that version's bands (the active one's names matched none of an older version's scores)."""
    counted = {}

    def prepare(db) -> None:
        from register import SYSTEM, Store
        from register.scoring.profiles import activate, create_draft, get_profile
        from register.scoring.scorer import rescore

        store = Store(db)
        try:
            counted["v1_high"] = store.query_one(
                "SELECT count(*) FROM (SELECT response_id, arg_max(band, run_id) AS band FROM scores s "
                "JOIN responses r USING (response_id, revision) WHERE r.is_current AND s.profile_version = 1 "
                "GROUP BY response_id) WHERE band = 'High'")[0]
            version = create_draft(store, SYSTEM, {"bands": [{"name": "Green", "upper": 30, "action": "release"},
                                                             {"name": "Red", "upper": 100, "action": "block"}]})
            activate(store, SYSTEM, version, "e2e: other band names")
            rescore(store, SYSTEM, get_profile(store, version))
        finally:
            store.close()

    server = start_app(prepare=prepare)
    assert counted["v1_high"] > 0
    browser_login(page, server["url"], "e2e-viewer")
    wait_metric(page, "Responses", f"{server['expected']['responses']:,}")
    sidebar = page.get_by_test_id("stSidebar")
    band = sidebar.get_by_test_id("stMultiSelect").filter(has_text="Band")
    band.locator("input").click()
    assert _options(page) == ["Green", "Red", "No claims"]
    page.keyboard.press("Escape")

    _choose(page, "Profile version", "Version 1", scope=sidebar)
    band.locator("input").click()
    expect(page.get_by_role("option", name="High", exact=True)).to_be_visible(timeout=30_000)
    assert "Green" not in _options(page)
    page.get_by_role("option", name="High", exact=True).click()
    page.keyboard.press("Escape")
    wait_metric(page, "Responses", f"{counted['v1_high']:,}")
    assert "pv=1" in page.url and "band=High" in page.url
    screenshot(page, "trust-older-profile-version")
