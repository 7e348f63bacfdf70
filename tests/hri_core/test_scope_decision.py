"""The Scope check's part of the one decision per answer (issue 37): at least review when the answer's use case is
suspended or retired, or unknown to an approved-use-case register that approves some use case; never lowered."""

from __future__ import annotations

import pytest

from hri_core.decision import ScopeFinding, decide_answer, scope_finding, scope_reason
from hri_core.profile import ACTIONS

REGISTER = {"helpdesk": "approved", "legal-drafts": "suspended", "old-bot": "retired", "pilot": "proposed"}


@pytest.mark.parametrize(("use_case", "held"), [("helpdesk", None), ("pilot", None),
                                                 ("legal-drafts", ScopeFinding("legal-drafts", "suspended")),
                                                 ("old-bot", ScopeFinding("old-bot", "retired")),
                                                 ("nobody-knows", ScopeFinding("nobody-knows", None)),
                                                 (None, ScopeFinding(None, None))])
def test_which_use_cases_the_scope_check_holds(use_case, held):
    assert scope_finding(use_case, REGISTER) == held


def test_a_register_without_an_approved_use_case_holds_no_unknown_one():
    """A team that keeps no register (or only proposals) sees no change; a suspended use case is held anyway."""
    assert scope_finding("anything", {}) is None
    assert scope_finding("anything", {"pilot": "proposed"}) is None
    assert scope_finding("pilot", {"pilot": "suspended"}) == ScopeFinding("pilot", "suspended")


@pytest.mark.parametrize("band_action", ACTIONS)
def test_the_scope_check_raises_to_review_and_never_lowers(band_action):
    finding = ScopeFinding("legal-drafts", "suspended")
    decision = decide_answer(band="B", band_action=band_action, scope=finding)
    assert decision.decision == ("block" if band_action == "block" else "review")
    assert decision.reasons == (f"band B: {band_action}", "Scope: use case legal-drafts is suspended: at least review")


def test_the_scope_reason_is_second_after_the_band():
    decision = decide_answer(band="Low", band_action="release", scope=ScopeFinding(None, None),
                             mitigation=("answer", "answer: fine"))
    assert decision.reasons[:2] == ("band Low: release",
                                    "Scope: the answer names no use case of the use-case register: at least review")
    assert scope_reason(ScopeFinding("x", None)) == "Scope: use case x is not in the use-case register: at least review"
