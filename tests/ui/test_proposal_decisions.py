"""``ui.features.verification.decisions_from``: a form's choices on judge proposals become decisions, and each choice
that cannot be recorded is named by its proposal; undecided ones are left waiting."""

from __future__ import annotations

from hri_core.vocabulary import Label
from register.verify.proposals import Decision
from ui.features.verification import decisions_from


def test_confirm_correct_and_reject_become_decisions_and_blank_ones_wait():
    made, problems = decisions_from({1: ("confirm", None), 2: ("correct", "CONTRADICTED"), 3: ("reject", "SUPPORTED"),
                                     4: (None, "SUPPORTED")}, abstained=set())
    assert made == [Decision(1, "confirm"), Decision(2, "confirm", Label.CONTRADICTED), Decision(3, "reject")]
    assert problems == {}


def test_a_correction_without_a_label_and_a_confirmed_abstention_are_named_and_the_rest_go_through():
    made, problems = decisions_from({1: ("correct", None), 2: ("confirm", None), 3: ("reject", None),
                                     4: ("approve", None)}, abstained={2})
    assert made == [Decision(3, "reject")]
    assert set(problems) == {1, 2, 4}
    assert "choose the label" in problems[1] and "abstained" in problems[2] and "approve" in problems[4]
