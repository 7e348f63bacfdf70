"""AppTest of the Use cases page (issue 37, item 1): the register shown, an edit saved through the grid and audited,
an edit that would approve refused, the owner's approval refused (four eyes) and a second person's recorded, the
register's strings escaped, a viewer reading only."""

from __future__ import annotations

import pytest

from register import Actor
from register import governance as gov
from tests.helpers.accounts import open_page
from ui.framework.text import escape_markdown

PAGE = "pages/use_cases.py"
SYSTEM = Actor("ops", "system")
HOSTILE_PURPOSE = "**Contracts** [click](javascript:alert(1)) <b>now</b> :red[x]"


@pytest.fixture
def register(seeded_db):
    """The seeded database with three use cases, one owned by the page's admin (test-admin), in place of the demo's
    own (deleted first, as a team replacing the example register would)."""
    demo = gov.list_use_cases(seeded_db)
    gov.save_use_cases(seeded_db, SYSTEM, gov.RowChanges(deletes=[
        {"key": key, "row_version": int(version)} for key, version in zip(demo.use_case_id, demo.row_version,
                                                                          strict=True)]))
    gov.save_use_cases(seeded_db, SYSTEM, gov.RowChanges(inserts=[{"values": v} for v in (
        {"use_case_id": "contracts", "owner": "alice", "purpose": HOSTILE_PURPOSE, "status": "proposed",
         "allowed_categories": "legal;contractual", "requester_roles": "buyer"},
        {"use_case_id": "hr", "owner": "test-admin", "purpose": "Explain leave policies", "status": "proposed",
         "allowed_categories": "general", "requester_roles": "employee"},
        {"use_case_id": "support", "owner": "carol", "purpose": "Answer product questions", "status": "approved",
         "allowed_categories": "general", "requester_roles": "customer", "approved_by": "dave",
         "review_by": "2020-01-31"},
    )]))
    return seeded_db


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _grid_key(at) -> str:
    return f"usecases_editor_{at.session_state['usecases_editor_gen']}"


def _problems(at):
    return next(d.value for d in at.dataframe if "problem" in d.value.columns)


def test_the_page_shows_the_register_with_its_strings_escaped(register):
    at = open_page(PAGE, "admin")
    assert _metrics(at) == {"Use cases": "3", "Approved": "1", "Approved, past review date": "1",
                            "Suspended or retired": "0"}
    grid = at.dataframe[0].value.set_index("use_case_id")
    assert grid.index.tolist() == ["contracts", "hr", "support"]
    assert grid.loc["contracts", "purpose"] == HOSTILE_PURPOSE  # the grid shows text literally
    assert list(grid.loc["support", "requester_roles"]) == ["customer"]
    # the approval tab's details render the purpose as markdown: escaped, never a link or bold
    assert at.selectbox(key="uc_approve_id").value == "contracts"
    shown = " ".join(str(m.value) for m in at.markdown)
    assert escape_markdown(HOSTILE_PURPOSE) in shown and "[click](javascript" not in shown


def test_a_grid_edit_is_saved_and_audited_and_an_edit_that_would_approve_is_refused(register):
    at = open_page(PAGE, "admin")
    at.session_state[_grid_key(at)] = {"edited_rows": {2: {"status": "suspended", "notes": "incident 42"}},
                                       "added_rows": [], "deleted_rows": []}
    at.button(key="usecases_save").click().run()
    assert not at.exception, at.exception
    assert register.query_one("SELECT status, notes, row_version FROM use_case_register WHERE use_case_id = "
                              "'support'") == ("suspended", "incident 42", 2)
    assert register.query_one("SELECT actor_name FROM audit_events WHERE action = 'use_case.update' AND "
                              "entity_id = 'support'") == ("test-admin",)
    at.session_state[_grid_key(at)] = {"edited_rows": {0: {"status": "approved"}}, "added_rows": [],
                                       "deleted_rows": []}
    at.button(key="usecases_save").click().run()
    problems = _problems(at).set_index("column")
    assert problems["row"].tolist() == [1, 1, 1]  # approved needs an approver and a review date: and an approval
    assert "an edit does not approve a use case" in problems.loc["status", "problem"]
    assert register.query_one("SELECT status FROM use_case_register WHERE use_case_id = 'contracts'") == ("proposed",)


def test_the_owner_may_not_approve_and_a_second_person_does(register):
    at = open_page(PAGE, "admin")
    at.selectbox(key="uc_approve_id").set_value("hr").run()
    at.text_input(key="uc_reason").set_value("my own, approved by me")
    at.get("form_submit_button")[-1].click().run()
    errors = " ".join(e.value for e in at.error)
    assert "Needs a second person" in errors and escape_markdown("test-admin owns use case hr") in errors
    assert register.query_one("SELECT status, approved_by FROM use_case_register WHERE use_case_id = 'hr'") == (
        "proposed", None)
    at.selectbox(key="uc_approve_id").set_value("contracts").run()
    at.text_input(key="uc_evidence_link").set_value("https://intranet.example/dpia/17")
    at.text_input(key="uc_reason").set_value("DPIA signed by legal")
    at.get("form_submit_button")[-1].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    status, approver, link, review_by = register.query_one(
        "SELECT status, approved_by, evidence_link, review_by FROM use_case_register WHERE use_case_id = 'contracts'")
    assert (status, approver, link) == ("approved", "test-admin", "https://intranet.example/dpia/17")
    assert review_by is not None
    assert _metrics(at)["Approved"] == "2"


def test_a_viewer_reads_the_register_without_editing_or_approving(register):
    at = open_page(PAGE, "viewer")
    assert _metrics(at)["Use cases"] == "3"
    assert not [b for b in at.button if b.key == "usecases_save"]
    captions = " ".join(str(c.value) for c in at.caption)
    assert "Read only" in captions and "Approving a use case needs an admin" in captions
