"""End to end in Chromium: a critical-information test set drafted offline from the demo register, edited by a
person (two questions made critical), run against a replayed assistant (a real local HTTP endpoint) and verified
offline; the Claim verification page reports hallucination on the critical questions alone (seed 003)."""

from __future__ import annotations

import pytest

from tests.helpers.browser import browser_login, screenshot

pytestmark = pytest.mark.browser

EDITS = {"reg-vii-1": ("How many questions does TruthfulQA contain?", "safety"),
         "reg-vii-6": ("Which dimensions does the proposed HRI combine?", "financial")}
ANSWERS = [{"match": "TruthfulQA contain", "content": "TruthfulQA contains 817 questions across 38 categories."},
           {"match": "proposed HRI combine", "content": "The HRI is a weather index used by ski resorts."}]


def _prepare(db) -> None:
    from register import Actor, Store
    from register.verify.judge_cli import judge_for, load_profile
    from register.verify.llm_client import ChatClient
    from register.verify.testsets import draft_from_register, run_test_set, save_test_set
    from tests.helpers.llm_server import ReplayServer

    annotator = Actor("e2e-reviewer", "reviewer")  # one of the fixture's accounts; reviewers may label
    store = Store(db)
    try:
        drafts = draft_from_register(store)
        assert save_test_set(store, annotator, "critical", drafts) == 1
        edited = [{**item, "question": EDITS[item["item_id"]][0], "category": EDITS[item["item_id"]][1],
                   "draft": False} if item["item_id"] in EDITS else item for item in drafts]
        assert save_test_set(store, annotator, "critical", edited, note="two questions made critical") == 2
        with ReplayServer(ANSWERS) as server:  # every other question: 404, counted as unanswered
            client = ChatClient(server.url, "replay-assistant", None, timeout=2, retries=0)
            run_test_set(store, annotator, "critical", judge_for(load_profile("offline-default")), assistant=client)
    finally:
        store.close()


def test_a_critical_test_set_run_is_reported_on_the_verification_page(start_app, page):
    server = start_app(prepare=_prepare)
    browser_login(page, server["url"], "e2e-reviewer")
    page.get_by_role("link", name="Claim verification").click()
    page.get_by_role("heading", name="Claim verification").wait_for(timeout=30_000)
    section = page.get_by_test_id("stExpander").filter(has_text="Critical-information test sets")
    # the run's figures, then each critical question's
    tables = section.get_by_test_id("stDataFrame")
    tables.first.wait_for(timeout=30_000)
    tables.nth(1).wait_for(timeout=30_000)
    page.wait_for_timeout(1000)
    screenshot(page, "verification-test-set-report")
    server["stop"]()

    from register import Store
    from register.verify.testsets import critical_report

    store = Store(server["db"])
    try:
        (row,) = critical_report(store, "critical")
    finally:
        store.close()
    # two critical questions: the TruthfulQA answer matches its target, the HRI answer is made up
    # (right, but an offline judge never clears a safety claim: it needs review)
    assert (row["model"], row["version"], row["critical_questions"], row["hallucinated"], row["needs_review"]) == (
        "replay-assistant", 2, 2, 1, 1)
    assert row["unanswered"] == 7 - 2  # seven questions, two answered
