"""The Scope check's findings (issue 37): an answer whose use case is unknown, not approved, suspended, retired or
past its review date, and a claim outside its use case's allowed categories, each get an OUT_OF_SCOPE proposal with
its reason, beside the Authority findings; checklist item 9 lists the use cases; an empty register finds nothing."""

from __future__ import annotations

from datetime import UTC, date, datetime

from register import SYSTEM
from register.governance.checks import run_checks
from register.governance.registers import add_row
from register.scoring.authority import findings
from tests.helpers.parity import load

TODAY = date(2026, 6, 1)


def _claim(cid: str, category: str | None = None, labels=("SUPPORTED",)) -> dict:
    claim = {"claim_id": cid, "text": f"Claim {cid}.", "labels": list(labels), "criticality": 1}
    return {**claim, "category": category} if category else claim


def _load(store) -> None:
    load(store, [
        {"response_id": "r-ok", "use_case": "helpdesk", "claims": [_claim("c1", "general"), _claim("c2")]},
        {"response_id": "r-legal", "use_case": "helpdesk", "claims": [_claim("c1", "legal"),
                                                                       _claim("c2", "legal", ("OUT_OF_SCOPE",))]},
        {"response_id": "r-pilot", "use_case": "pilot", "claims": [_claim("c1")]},
        {"response_id": "r-old", "use_case": "old-bot", "claims": [_claim("c1")]},
        {"response_id": "r-late", "use_case": "late", "claims": [_claim("c1")]},
        {"response_id": "r-who", "use_case": "nobody", "claims": [_claim("c1")]},
    ])


def _register(store) -> None:
    for uc, status, extra in (("helpdesk", "approved", {"allowed_categories": "general; financial"}),
                              ("pilot", "proposed", {}), ("old-bot", "retired", {}),
                              ("late", "approved", {"review_by": "2026-05-01"})):
        row = {"use_case_id": uc, "owner": "Olga", "purpose": uc, "status": status, **extra}
        if status == "approved":
            row = {"approved_by": "Abe", "review_by": "2099-01-01", **row}
        add_row(store, SYSTEM, "usecases", row)


def scope_rows(store) -> list[tuple]:
    frame = findings(store, now=datetime(2026, 6, 1, 12, tzinfo=UTC))
    frame = frame[frame["check"] == "scope"]
    return [(r["response_id"], r["claim_id"] if isinstance(r["claim_id"], str) else None, r["problem"],
             r["proposed_label"] if isinstance(r["proposed_label"], str) else None)
            for _, r in frame.iterrows()]


def test_an_empty_use_case_register_finds_nothing(store):
    _load(store)
    assert scope_rows(store) == []
    item = next(c for c in run_checks(store, today=TODAY)["checks"] if c["no"] == 9)
    assert item["status"] == "pass" and "no use case is registered" in item["note"]


def test_each_out_of_scope_answer_and_claim_gets_an_out_of_scope_proposal_with_its_reason(store):
    _load(store)
    _register(store)
    assert scope_rows(store) == [
        ("r-late", None, "review date passed", "OUT_OF_SCOPE"),
        ("r-legal", "c1", "category outside the use case", "OUT_OF_SCOPE"),
        ("r-legal", "c2", "category outside the use case", None),  # it carries the label already
        ("r-old", None, "use case retired", "OUT_OF_SCOPE"),
        ("r-pilot", None, "use case not approved", "OUT_OF_SCOPE"),
        ("r-who", None, "unknown use case", "OUT_OF_SCOPE"),
    ]
    frame = findings(store)
    reason = frame[(frame["response_id"] == "r-legal") & (frame["claim_id"] == "c1")]["reason"].iloc[0]
    assert reason == "category legal is not among use case helpdesk's allowed categories (general, financial)"


def test_checklist_item_9_lists_each_use_case_out_of_scope_with_its_answers(store):
    _load(store)
    _register(store)
    item = next(c for c in run_checks(store, today=TODAY)["checks"] if c["no"] == 9)
    assert item["title"] == "Every answer's use case is approved and within its review date."
    assert item["status"] == "fail"
    assert [(o["entity_id"], o["label"]) for o in item["offending"]] == [
        ("late", "1 current answer(s)"), ("nobody", "1 current answer(s)"), ("old-bot", "1 current answer(s)"),
        ("pilot", "1 current answer(s)")]
    assert next(o for o in item["offending"] if o["entity_id"] == "late")["reason"] == \
        "use case late was to be reviewed by 2026-05-01"
    # the Authority item reads none of them
    assert next(c for c in run_checks(store, today=TODAY)["checks"] if c["no"] == 8)["status"] == "pass"
