"""End to end in Chromium, the journey of issue 33's "Done when": an adjudicated High answer verified by the judge
keeps its labels, score and decision; a person's confirmation that would lower its decision waits, marked in the
review queue, until a second person approves it; and releasing an answer decided block takes a risk acceptance
one reviewer proposes and a second approves (the proposer's own approval is refused).

The server holds the DuckDB file (one process at a time), so the test stops it to read the record between the
acts and serves the same file again (``restart``). Screenshots: tests/artifacts/journey-*.png."""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.helpers.browser import E2E_PASSWORD, browser_login, browser_logout, metrics, screenshot, wait_metric
from tests.helpers.console_records import ALL_DIMS, claim

pytestmark = pytest.mark.browser

SOURCE = "ref-9-nist-ai-rmf"  # a registered tier-1 source of the demo: the claims pass Authority
# the oldest answers of the register: first in the review queue, however many answers the demo queues
# in a use case the demo's register approves: the Scope check alone would hold an unregistered one at review
ADJUDICATED = {
    "response_id": "r-journey", "question": "May a tenant withhold rent?", "use_case": "supplier-contracts",
    "model": "m-1",
    "created_at": "2000-01-01T00:00:00Z", "stakes": "high",
    "answer": "A tenant may always withhold rent. The landlord's file says so.",
    "retrieved_context": [{"id": "k1", "text": "Withholding rent is allowed only after notice.", "source_id": SOURCE}],
    "claims": [
        {"claim_id": "a1", "text": "A tenant may always withhold rent.", "labels": ["CONTRADICTED"],
         "criticality": 3, "category": "legal", "source_id": SOURCE, "span": "allowed only after notice",
         "contradicted_by": "context", "is_core": True},
        {"claim_id": "a2", "text": "The landlord's file says so.", "labels": ["ACCESS_GAP"], "criticality": 3,
         "category": "legal", "source_id": SOURCE, "span": "landlord file"}]}
BLOCKED = {"response_id": "r-journey-block", "use_case": "supplier-contracts", "model": "m-1", "question": "Cap?",
           "answer": "Unlimited liability.", "created_at": "2000-01-01T06:00:00Z",
           "claims": [claim("The liability cap is unlimited.", ["CONTRADICTED"], 3, dimensions=ALL_DIMS)]}
ANNOTATOR, SECOND_REVIEWER = "e2e-annotator", "e2e-second-reviewer"  # e2e-reviewer is one of the fixture's


def _prepare(db, before: dict) -> None:
    """The annotator's and the second reviewer's accounts; the record as it stands before the journey."""
    from register import Store
    from tests.helpers.accounts import create_accounts

    store = Store(db)
    try:
        create_accounts(store, {ANNOTATOR: "annotator"}, E2E_PASSWORD, label="E2E")
        create_accounts(store, {SECOND_REVIEWER: "reviewer"}, E2E_PASSWORD, label="E2E second")
    finally:
        store.close()
    before.update(_record(db))


def _record(db) -> dict:
    """What the register holds about the two answers, read with the server stopped: the current claims and score
    of each, the judge's proposals, the pending label changes, the risk acceptances and the review queue's first
    rows (oldest first: these two answers lead it) with why each is there."""
    from register import Store
    from register.console import review
    from register.console.queries.filters import Filters

    ids = [ADJUDICATED["response_id"], BLOCKED["response_id"]]
    store = Store(db)
    try:
        queue, _ = review.review_queue(store, Filters(), limit=5)
        return {
            "claims": store.dicts(
                "SELECT response_id, revision, claim_id, labels, criticality, category, source_id, span FROM claims "
                "WHERE is_current AND list_contains(?, response_id) ORDER BY response_id, claim_idx", [ids]),
            "scores": {r["response_id"]: r for r in store.dicts(
                "SELECT response_id, revision, run_id, score, band, decision FROM current_scores "
                "WHERE list_contains(?, response_id)", [ids])},
            "proposals": store.dicts(
                "SELECT claim_id, label, abstained, status FROM judge_proposals WHERE response_id = ? "
                "ORDER BY claim_idx", [ids[0]]),
            "pending": store.dicts(
                "SELECT change_id, response_id, base_revision, origin, status, decision_before, decision_after, "
                "proposed_by, decided_by, applied_revision FROM pending_label_changes ORDER BY change_id"),
            "acceptances": store.dicts(
                "SELECT response_id, release, status, proposed_by, decided_by FROM risk_acceptances "
                "ORDER BY acceptance_id"),
            "queue": dict(zip(queue["response_id"], queue["why"], strict=True)),
            "refused": store.dicts("SELECT actor_name, entity_id FROM audit_events WHERE action = 'denied' "
                                   "AND entity_type = 'risk_acceptance' ORDER BY seq"),
        }
    finally:
        store.close()


def _claims(record: dict, response_id: str) -> list[tuple]:
    return [(c["revision"], c["claim_id"], list(c["labels"]), c["criticality"], c["category"], c["source_id"],
             c["span"]) for c in record["claims"] if c["response_id"] == response_id]


def _wait_text(page, text: str, timeout: float = 60_000) -> None:
    """Wait until the page holds ``text`` (also text Playwright's locators do not see as visible)."""
    page.wait_for_function("t => document.body.textContent.includes(t)", arg=text, timeout=timeout)


def _open(page, link: str, heading: str) -> None:
    """Go to a page by its sidebar link; a click that a rerun in flight swallowed is made again."""
    for _ in range(3):
        page.get_by_role("link", name=link).click(timeout=30_000)
        with contextlib.suppress(PlaywrightTimeout):
            page.get_by_role("heading", name=heading).wait_for(timeout=20_000)
            return
    page.get_by_role("heading", name=heading).wait_for(timeout=10_000)


def _fresh(scope):
    """Elements of the current run only: while a page reruns, the previous run's are still in the DOM."""
    return scope.locator('[data-testid="stElementContainer"][data-stale="false"]')


def _selectbox(scope, label: str):
    """The selectbox labelled ``label`` (a combobox whose input shows the chosen option)."""
    return _fresh(scope).get_by_role("combobox", name=label, exact=True)


def _select(page, scope, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label`` inside ``scope``; wait until it shows."""
    box = _selectbox(scope, label)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    page.wait_for_function("([e, t]) => e.value === t", arg=[box.element_handle(), option], timeout=30_000)


def _radio(scope, group: str, choice: str) -> None:
    _fresh(scope).get_by_role("radiogroup", name=group).get_by_text(choice, exact=True).click()


def _verify_with_the_judge(page, response_id: str) -> None:
    """Claim verification: "Verify stored answers", also answers that already have claims, the offline judge."""
    _open(page, "Claim verification", "Claim verification")
    page.get_by_text("Verify stored answers: extract, link and judge their claims").click()
    page.get_by_text("Also answers that already have claims").click()
    _choose_answer(page, response_id)
    assert _selectbox(page, "Judge profile").input_value() == "offline-default"
    page.get_by_role("button", name="Verify the chosen answers").click()
    _wait_text(page, "1 answer(s), 2 claims, 2 UNLINKED; 2 proposals wait below, 0 applied", timeout=90_000)


def _choose_answer(page, response_id: str) -> None:
    """Pick ``response_id`` in the answers to verify: typed into the box, then its option. The toggle's rerun can
    replace the box while the test types (the answer is offered only once it has run): then it is typed again."""
    option = re.compile(rf"^{re.escape(response_id)} ·")
    for _ in range(3):
        answers = _fresh(page).get_by_test_id("stMultiSelect").filter(has_text="newest first")
        answers.locator("input").click(timeout=30_000)
        page.keyboard.type(response_id)
        with contextlib.suppress(PlaywrightTimeout):
            page.get_by_role("option", name=option).click(timeout=10_000)
            page.keyboard.press("Escape")
            answers.get_by_text(option).wait_for(timeout=10_000)
            return
        page.keyboard.press("Escape")
    raise AssertionError(f"{response_id} is not offered to verify")


def _open_detail(page, response_id: str) -> None:
    _open(page, "Response detail", "Response detail")
    box = page.get_by_role("textbox", name="Response id")
    box.fill(response_id)
    box.press("Enter")
    page.get_by_text("Why this decision").wait_for(timeout=60_000)


def _confirm_supported(page, response_id: str) -> None:
    """Labelling workbench, "Judge proposals to confirm": every proposal of ``response_id`` confirmed as SUPPORTED
    (the judge abstained on one and said UNSUPPORTED on the other), in one submission."""
    _open(page, "Labelling workbench", "Labelling workbench")
    page.get_by_test_id("stButtonGroup").get_by_text("Judge proposals to confirm").click()
    # the newest run's answer comes first
    page.wait_for_function("([e, t]) => e.value.startsWith(t)",
                           arg=[_selectbox(page, "Response").element_handle(timeout=30_000), response_id])
    form = page.get_by_test_id("stForm").filter(has_text="Record decisions")
    # Streamlit draws a form element by element: wait for both proposals' decision radios, not the first line
    expect(form.get_by_text(re.compile(r"^Decision on proposal \d+$"))).to_have_count(2, timeout=30_000)
    ids = re.findall(r"Decision on proposal (\d+)", form.inner_text())
    assert len(ids) == 2, ids
    for proposal_id in ids:
        _radio(form, f"Decision on proposal {proposal_id}", "Confirm with another label")
        _select(page, form, f"Another label for proposal {proposal_id}", "SUPPORTED")
    form.get_by_role("button", name="Record decisions").click()
    _wait_text(page, "would lower a decision and wait for a second reviewer")


def _queue(page, expected_size: int | None = None) -> None:
    _open(page, "Review queue", "Review queue")
    _selectbox(page, "Response to decide on").wait_for(timeout=60_000)
    if expected_size is not None:
        wait_metric(page, "In queue", f"{expected_size:,}")


def _pick_in_queue(page, response_id: str) -> None:
    if _selectbox(page, "Response to decide on").input_value() != response_id:
        _select(page, page, "Response to decide on", response_id)
    page.get_by_text(f"Decision on {response_id}").wait_for(timeout=30_000)


def test_the_judge_proposes_people_decide_and_a_block_answer_needs_two_reviewers(start_app, page, tmp_path):
    source = tmp_path / "journey.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in (ADJUDICATED, BLOCKED)) + "\n", encoding="utf-8")
    before: dict = {}
    server = start_app(imports=(source,), prepare=lambda db: _prepare(db, before))
    queued = server["expected"]["queue"]
    answer, blocked = ADJUDICATED["response_id"], BLOCKED["response_id"]
    assert before["scores"][answer]["band"] == "High" and before["scores"][answer]["decision"] == "review"
    assert before["scores"][blocked]["decision"] == "block"
    assert list(before["queue"])[:2] == [answer, blocked]

    # 1. the judge verifies the adjudicated answer: proposals beside the labels, nothing else changes
    browser_login(page, server["url"], "e2e-reviewer")
    _verify_with_the_judge(page, answer)
    _open_detail(page, answer)
    wait_metric(page, "Decision", "review")
    shown = metrics(page)
    assert (shown["HRI score"], shown["Band"]) == (f"{before['scores'][answer]['score']:.1f}", "High")
    page.get_by_text("revision 1 · profile").wait_for()
    page.get_by_text("Charts: the score's make-up and its history").click()  # drawn only when opened
    page.locator(".js-plotly-plot").nth(1).wait_for(timeout=30_000)  # the page drawn to its end
    screenshot(page, "journey-1-verified-detail")
    server["stop"]()
    verified = _record(server["db"])
    assert _claims(verified, answer) == _claims(before, answer)  # CONTRADICTED 3 and ACCESS_GAP 3, source, span
    assert verified["scores"][answer] == before["scores"][answer]  # same revision, score run, score and decision
    assert [(p["claim_id"], p["status"]) for p in verified["proposals"]] == [("a1", "proposed"), ("a2", "proposed")]
    assert any(p["abstained"] for p in verified["proposals"])  # an abstention: a proposal, never a label

    # 2. an annotator confirms SUPPORTED on both claims: it would lower the decision, so it waits
    server = server["restart"]()
    browser_login(page, server["url"], ANNOTATOR)
    _confirm_supported(page, answer)
    browser_logout(page)
    server["stop"]()
    held = _record(server["db"])
    (change,) = held["pending"]
    assert (change["response_id"], change["origin"], change["status"], change["proposed_by"]) == \
        (answer, "verification", "pending", ANNOTATOR)
    assert (change["decision_before"], change["decision_after"]) == ("review", "release")
    assert _claims(held, answer) == _claims(before, answer) and held["scores"][answer] == before["scores"][answer]
    assert "lower-risk change pending" in held["queue"][answer]

    # 3. a reviewer sees the answer marked in the queue and approves the change: only now the labels change
    server = server["restart"]()
    browser_login(page, server["url"], "e2e-reviewer")
    _queue(page, queued)
    _pick_in_queue(page, answer)
    # the mark leads the reasons: the grid's "Why in queue" cell, cut short, shows it too
    page.get_by_text(re.compile(r"^Why in queue: lower-risk change pending; decision review")).wait_for(
        timeout=30_000)
    pending = page.get_by_test_id("stExpander").filter(has_text="Lower-risk changes pending")
    pending.get_by_text(f"Change {change['change_id']}").first.wait_for(timeout=30_000)
    screenshot(page, "journey-2-queue-pending")
    approval = pending.get_by_test_id("stForm")
    _radio(approval, "Decision", "approve")
    approval.get_by_role("button", name="Record").click()
    pending.wait_for(state="detached", timeout=60_000)  # no change waits any more
    wait_metric(page, "In queue", f"{queued - 1:,}")

    # 4. the block answer: no release in the decision form; formal review by two reviewers
    _pick_in_queue(page, blocked)
    decision = page.get_by_test_id("stForm").filter(has_text=f"Decision on {blocked}")
    offered = [t.strip() for t in decision.get_by_role("radiogroup", name="Decision").locator("label")
               .all_inner_texts()]
    assert "Block" in offered and not {"Release", "Release with caution"} & set(offered), offered
    formal = page.get_by_test_id("stForm").filter(has=page.get_by_role("button", name="Propose risk acceptance"))
    _radio(formal, "Release", "Release with caution")
    formal.get_by_label("Why the risk is acceptable (required)").fill(
        "The contract owner accepts the exposure for this quarter.")
    screenshot(page, "journey-3-formal-review")
    formal.get_by_role("button", name="Propose risk acceptance").click()
    proposed = page.get_by_test_id("stExpander").filter(has_text="Risk acceptances proposed")
    proposed.wait_for(timeout=60_000)
    own = proposed.get_by_test_id("stForm")
    _radio(own, "Decision", "approve")
    own.get_by_role("button", name="Record").click()
    refusal = page.get_by_test_id("stAlert").filter(has_text="Needs a second person")
    refusal.wait_for(timeout=30_000)
    assert "four eyes" in refusal.inner_text()
    screenshot(page, "journey-3b-own-approval-refused")
    browser_logout(page)
    browser_login(page, server["url"], SECOND_REVIEWER)
    _queue(page, queued - 1)
    proposed = page.get_by_test_id("stExpander").filter(has_text="Risk acceptances proposed")
    other = proposed.get_by_test_id("stForm")
    _radio(other, "Decision", "approve")
    other.get_by_role("button", name="Record").click()
    proposed.wait_for(state="detached", timeout=60_000)
    wait_metric(page, "In queue", f"{queued - 2:,}")
    for gone in (answer, blocked):  # neither is offered: the queue's first answer is another
        expect(_selectbox(page, "Response to decide on")).not_to_have_value(gone)
    screenshot(page, "journey-4-queue-after-approval")
    server["stop"]()

    after = _record(server["db"])
    (approved,) = after["pending"]
    assert (approved["status"], approved["decided_by"], approved["applied_revision"]) == \
        ("approved", "e2e-reviewer", 2)
    # the approved revision: SUPPORTED with the criticality, category, source and span people gave
    assert _claims(after, answer) == [(2, c, ["SUPPORTED"], 3, "legal", SOURCE, span)
                                      for (_, c, _, _, _, _, span) in _claims(before, answer)]
    assert after["scores"][answer]["decision"] == "release"
    assert [(a["response_id"], a["release"], a["status"], a["proposed_by"], a["decided_by"])
            for a in after["acceptances"]] == \
        [(blocked, "release_with_caution", "accepted", "e2e-reviewer", SECOND_REVIEWER)]
    assert [r["actor_name"] for r in after["refused"]] == ["e2e-reviewer"]  # the proposer's own approval
    assert after["scores"][blocked]["decision"] == "block"  # accepted, not lowered: out of the queue
    assert answer not in after["queue"] and blocked not in after["queue"]
