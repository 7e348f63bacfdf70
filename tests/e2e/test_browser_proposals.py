"""End to end in Chromium: demo questions verified offline wait in the labelling workbench as judge proposals with
their provenance; a reviewer confirms one and rejects another, and the confirmed label reaches the claim."""

from __future__ import annotations

import pytest

from tests.helpers.browser import browser_login, screenshot

pytestmark = pytest.mark.browser


def _prepare(db, chosen: dict) -> None:
    from register import Actor, Store
    from register.verify.judge_cli import judge_for, load_profile
    from register.verify.pipeline import VerifyInput, read_inputs, verify
    from tests.helpers.paths import REPO_ROOT

    path = REPO_ROOT / "data" / "verify" / "factcheck_questions.jsonl"
    store = Store(db)
    try:
        items = [i for i in read_inputs(path.read_text(encoding="utf-8").splitlines()[:4])
                 if isinstance(i, VerifyInput)]
        verify(store, Actor("e2e-reviewer", "reviewer"), items, judge_for(load_profile("offline-default")),
               source_name=path.name)
        rid, = store.query_one("SELECT response_id FROM judge_proposals GROUP BY response_id ORDER BY max(run_id) "
                               "DESC, response_id LIMIT 1")  # the response the workbench shows first
        chosen["proposals"] = store.dicts("SELECT proposal_id, claim_id, label FROM judge_proposals "
                                          "WHERE response_id = ? ORDER BY claim_idx", [rid])
        chosen["response_id"] = rid
    finally:
        store.close()


def test_a_reviewer_confirms_and_rejects_judge_proposals_in_the_workbench(start_app, page):
    chosen: dict = {}
    server = start_app(prepare=lambda db: _prepare(db, chosen))
    sure = next(p for p in chosen["proposals"] if p["label"])
    other = next(p for p in chosen["proposals"] if p is not sure)
    browser_login(page, server["url"], "e2e-reviewer")
    page.get_by_role("link", name="Labelling workbench").click()
    page.get_by_role("heading", name="Labelling workbench").wait_for(timeout=30_000)
    page.get_by_test_id("stButtonGroup").get_by_text("Judge proposals to confirm").click()
    page.get_by_text("Provenance:").first.wait_for(timeout=30_000)
    for proposal, choice in ((sure, "Confirm the judge's verdict"), (other, "Reject")):
        group = page.get_by_role("radiogroup", name=f"Decision on proposal {proposal['proposal_id']}")
        group.get_by_text(choice, exact=True).click()
    screenshot(page, "labelling-workbench-proposals")
    page.get_by_role("button", name="Record decisions").click()
    page.get_by_text("Recorded: 1 confirmed").wait_for(timeout=30_000)
    server["stop"]()

    from register import Store

    store = Store(server["db"])
    try:
        status = dict(store.query("SELECT proposal_id, status FROM judge_proposals WHERE response_id = ?",
                                  [chosen["response_id"]]))
        labels = dict(store.query("SELECT claim_id, labels FROM claims WHERE is_current AND response_id = ?",
                                  [chosen["response_id"]]))
    finally:
        store.close()
    assert status[sure["proposal_id"]] == "confirmed" and status[other["proposal_id"]] == "rejected"
    assert list(labels[sure["claim_id"]]) == [sure["label"]] and list(labels[other["claim_id"]]) == ["UNSUPPORTED"]
