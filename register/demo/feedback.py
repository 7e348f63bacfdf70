"""The demo's feedback history: validated feedback on a few Factcheck-GPT answers, resolved months ago.

The Evidence page's feedback-loop panel (HRI paper, section XVI: "evaluate how HRI-guided feedback loops affect
answer quality over time") compares a scope's answers before and after its validated feedback was resolved. The
demo's answers were created over 2026, so a history recorded at set-up time would leave no "after": this one is
recorded at the times it happened (``register.feedback.items``' ``at``, which only the system role may give).

Users reported a claim of ``FEEDBACK_ANSWERS`` (answers whose annotators found a claim contradicted by the evidence)
in early August 2026; a reviewer validated each by a source check a week later; the fix (the assistant now reads
the cited page before stating a date or a number) resolved them in September. Every step goes through the ordinary
feedback functions: the reports, the four-eyes validation, the revisions and rescoring, the audit trail. A
resolution that would lower its answer's decision waits for a second reviewer like any other, and the demo's
approver approves it at the resolution time.

Called by ``register.demo.seed_demo``; skipped (with a note) when the set-up is not run by the system role, and a
second run adds nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime

from register.access.permissions import SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Store, utc_now
from register.feedback.items import report_feedback, resolve_feedback, validate_feedback
from register.ingest.approvals import approve_change
from register.ingest.pending import pending_follow_up

__all__ = ["FEEDBACK_ANSWERS", "RESOLVED_AT", "record_feedback_history"]

# (response id, the claim reported, what the user wrote)
FEEDBACK_ANSWERS = (
    ("fcgpt-001", "fcgpt-001-1", "The oldest justice in 1980 was not William O. Douglas: he had retired in 1975."),
    ("fcgpt-002", "fcgpt-002-1", "Donald Trump is not a black president."),
    ("fcgpt-003", "fcgpt-003-1", "Hillary Clinton was never President of the United States."),
)
REPORTED_AT = datetime(2026, 8, 3, 10, 0, tzinfo=UTC)
VALIDATED_AT = datetime(2026, 8, 10, 15, 0, tzinfo=UTC)
RESOLVED_AT = datetime(2026, 9, 7, 9, 0, tzinfo=UTC)
RESOLUTION = "Release 2026.09: the assistant reads the cited page before it states a date, a rank or a number."

REPORTER = Actor("demo-reporter", SYSTEM_ROLE)  # the demo's people: a user, a reviewer and a second reviewer
REVIEWER = Actor("demo-reviewer", SYSTEM_ROLE)
APPROVER = Actor("demo-approver", SYSTEM_ROLE)


def record_feedback_history(store: Store, actor: Actor, answers=FEEDBACK_ANSWERS) -> dict:
    """Report, validate and resolve feedback on ``answers`` at the history's times; returns what was recorded:
    ``{"resolved": n, "note": ...}`` (a note when nothing was, saying why). Needs ``Permission.FEEDBACK_VALIDATE``
    (checked first: a refused account learns nothing)."""
    authorize(store, actor, Permission.FEEDBACK_VALIDATE, entity_type="demo")
    if actor.role != SYSTEM_ROLE:
        return {"resolved": 0, "note": "the feedback history is recorded only when the system sets up the demo"}
    if utc_now() < RESOLVED_AT:
        return {"resolved": 0, "note": f"this machine's clock is before {RESOLVED_AT.date()}: no feedback history"}
    present = {r for (r,) in store.query("SELECT response_id FROM responses WHERE is_current AND response_id "
                                         "LIKE 'fcgpt-%'")}
    reported = {r for (r,) in store.query("SELECT DISTINCT response_id FROM feedback_items")}
    resolved = 0
    for response_id, claim_id, text in answers:
        if response_id not in present or response_id in reported:
            continue
        feedback_id = report_feedback(store, REPORTER, response_id, text, 0.8, claim_id=claim_id, at=REPORTED_AT)
        validate_feedback(store, REVIEWER, feedback_id, "source_check", at=VALIDATED_AT,
                          note="Checked against the cited page.")
        if resolve_feedback(store, REVIEWER, feedback_id, RESOLUTION, at=RESOLVED_AT) is None:
            change = pending_follow_up(store, "feedback_resolve", "feedback_id", feedback_id)
            if change is not None:  # held: it lowers the decision, so a second reviewer approves it
                approve_change(store, APPROVER, change, note="Checked the release notes.")
        resolved += 1
    return {"resolved": resolved, "note": None}
