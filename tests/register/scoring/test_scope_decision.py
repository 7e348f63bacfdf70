"""The Scope check's decision through the register (issue 37): an answer of a suspended or retired use case, or of
one unknown to a register that approves some use case, is decided at least review by the stored score rows, the
review queue takes it, and the register's writes to the use-case register decide the affected answers again."""

from __future__ import annotations

from datetime import date

from register import SYSTEM
from register.console.queries.filters import Filters
from register.console.review import review_queue
from register.governance.registers import RowChanges, add_row, save_use_cases
from register.governance.use_cases import approve_use_case, use_case_row
from register.scoring.preview import decision_of
from register.scoring.reproduce import load_response
from tests.helpers.actors import ANN, BOB, enrol
from tests.helpers.parity import load

OK_CLAIM = {"claim_id": "c1", "text": "Fine.", "labels": ["SUPPORTED"], "criticality": 1}


def _answers(store) -> None:
    load(store, [{"response_id": rid, "use_case": uc, "model": "m", "question": "Q?", "answer": "A.",
                  "created_at": "2026-04-01T09:00:00Z", "claims": [OK_CLAIM]}
                 for rid, uc in (("r-help", "helpdesk"), ("r-legal", "legal-drafts"), ("r-other", "other-bot"))])
    from register.scoring.profiles import active_profile
    from register.scoring.scorer import rescore
    rescore(store, SYSTEM, active_profile(store))


def decisions(store) -> dict[str, tuple[str, list[str]]]:
    return {rid: (d, list(reasons)) for rid, d, reasons in store.query(
        "SELECT response_id, decision, decision_reasons FROM current_scores")}


def queued(store) -> set[str]:
    frame, _ = review_queue(store, Filters(), limit=1000)
    return set(frame["response_id"])


def _use_case(store, use_case_id: str, status: str, **extra) -> None:
    row = {"use_case_id": use_case_id, "owner": "Olga Owner", "purpose": f"answers of {use_case_id}",
           "status": status, **extra}
    if status == "approved":
        row.update(approved_by="Abe Approver", review_by="2099-01-01")
    add_row(store, SYSTEM, "usecases", row)


def _set_status(store, use_case_id: str, status: str) -> None:
    row = use_case_row(store, use_case_id)
    values = {k: (list(v) if isinstance(v, (list, tuple)) else v) for k, v in row.items()
              if k not in ("row_version", "updated_at", "updated_by")}
    save_use_cases(store, SYSTEM, RowChanges(updates=[{"key": use_case_id, "row_version": row["row_version"],
                                                       "values": {**values, "status": status}}]))


def test_an_answer_in_a_suspended_use_case_is_decided_review_not_release(store):
    """Fails before the Scope check: the suspended use case's answer was released."""
    _use_case(store, "helpdesk", "approved")
    _use_case(store, "legal-drafts", "suspended")
    _answers(store)
    got = decisions(store)
    assert got["r-help"][0] == "release"
    assert got["r-legal"][0] == "review"
    assert "Scope: use case legal-drafts is suspended: at least review" in got["r-legal"][1]
    # unknown to a register that approves a use case
    assert got["r-other"][0] == "review"
    assert "Scope: use case other-bot is not in the use-case register: at least review" in got["r-other"][1]
    assert queued(store) >= {"r-legal", "r-other"} and "r-help" not in queued(store)


def test_a_register_without_use_cases_changes_nothing(store):
    _answers(store)
    assert {rid: d for rid, (d, _) in decisions(store).items()} == {"r-help": "release", "r-legal": "release",
                                                                    "r-other": "release"}
    assert not any(r.startswith("Scope:") for _, reasons in decisions(store).values() for r in reasons)


def test_a_register_of_proposals_only_holds_no_unknown_use_case(store):
    _use_case(store, "helpdesk", "proposed")
    _answers(store)
    assert {d for d, _ in decisions(store).values()} == {"release"}


def test_suspending_and_approving_decide_the_answers_again_at_once(store):
    enrol(store, ANN, BOB)
    _answers(store)
    _use_case(store, "helpdesk", "proposed")
    _use_case(store, "legal-drafts", "proposed")
    assert {d for d, _ in decisions(store).values()} == {"release"}
    # the register's first approval: the unknown use case's answer is held at once, the approved one released
    row = use_case_row(store, "helpdesk")
    approve_use_case(store, ANN, "helpdesk", row["row_version"], review_by=date(2099, 1, 1), reason="signed off")
    assert decisions(store)["r-other"][0] == "review" and decisions(store)["r-help"][0] == "release"
    assert store.scalar("SELECT scope FROM score_runs ORDER BY run_id DESC LIMIT 1") == "scope:all"
    # suspending one use case decides its answers again, and only those
    _set_status(store, "legal-drafts", "suspended")
    assert decisions(store)["r-legal"][0] == "review"
    assert store.one("SELECT scope, responses_scored FROM score_runs ORDER BY run_id DESC LIMIT 1") == {
        "scope": "scope:legal-drafts", "responses_scored": 1}
    _set_status(store, "helpdesk", "retired")
    assert decisions(store)["r-help"] == ("review", ["band Low: release",
                                                     "Scope: use case helpdesk is retired: at least review",
                                                     *decisions(store)["r-help"][1][2:]])


def test_the_pure_decision_agrees_with_the_stored_one(store):
    _use_case(store, "helpdesk", "approved")
    _use_case(store, "legal-drafts", "retired")
    _answers(store)
    stored = decisions(store)
    as_of = store.scalar("SELECT as_of FROM current_scores WHERE response_id = 'r-legal'")
    for rid in ("r-help", "r-legal", "r-other"):
        pure = decision_of(store, load_response(store, rid), as_of=as_of)
        assert (pure.decision, list(pure.reasons)) == stored[rid], rid


def test_the_allowed_check_reads_the_use_case_registers_requester_roles(store, tmp_path):
    """Fails before: "allowed" read only the older requester table (helpdesk: viewer), so a source restricted to
    reviewers stayed forbidden whatever the use-case register said."""
    from tests.helpers.authority import load_authority_register

    load_authority_register(store, tmp_path)
    assert any("failed allowed" in r for r in decisions(store)["au-restricted"][1])
    _use_case(store, "helpdesk", "approved", requester_roles="reviewer; contract-manager")
    decision, reasons = decisions(store)["au-restricted"]
    assert not any("failed allowed" in r for r in reasons), reasons
    # a register row without requester roles leaves the older table's in force
    _use_case(store, "other-desk", "proposed")
    from register.scoring.authority_rules import requester_roles
    assert requester_roles(store)["helpdesk"] == ("reviewer", "contract-manager")
    assert "other-desk" not in requester_roles(store)
