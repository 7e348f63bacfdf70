"""The checks every per-use-case table shares (``register.scoring.use_case_rows``): a missing, long or repeated
name and a long note are named by row and field, the same words in the Authority requesters and the lenses."""

from __future__ import annotations

from register.errors import Problem
from register.scoring.use_case_rows import MAX_NAME, MAX_NOTE, name_problems, note_problems


def test_each_row_names_one_use_case_once():
    seen: set[str] = set()
    found = [name_problems(n, name, seen) for n, name in enumerate(["hr", None, "x" * (MAX_NAME + 1), "hr", "it"], 1)]
    assert found[0] == [] and found[4] == []
    assert found[1] == [Problem(2, "use_case", "name the use case (as the answers' use_case field says it)")]
    assert found[2] == [Problem(3, "use_case", f"at most {MAX_NAME} characters")]
    assert found[3] == [Problem(4, "use_case", "'hr' is listed twice")]
    assert seen == {"hr", "it"}


def test_a_long_repeated_name_is_quoted_short():
    seen = {"y" * 150}
    (problem,) = name_problems(2, "y" * 150, seen)
    assert problem.message == f"{'y' * 60!r} is listed twice"


def test_a_note_is_short_or_absent():
    assert note_problems(1, None) == [] and note_problems(1, "n" * MAX_NOTE) == []
    assert note_problems(3, "n" * (MAX_NOTE + 1)) == [Problem(3, "note", f"at most {MAX_NOTE} characters")]
