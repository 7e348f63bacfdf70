"""AppTest of the Review queue page's pending label changes: a confirmation that would lower an answer's decision
waits there, marked in the queue, and a second reviewer approves it (issue 33, item 3)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register import Actor
from register.ingest.pending import PENDING_MARK, list_pending
from register.verify.proposals import Decision, decide_proposals, list_proposals
from register.verify.stored import verify_stored
from tests.helpers.accounts import login
from tests.helpers.actors import enrol
from tests.helpers.feedback import import_records
from tests.helpers.paths import REPO_ROOT
from tests.register.verify.test_judge_never_overwrites import AbstainingJudge
from tests.register.verify.test_lower_risk_pending import CONTRADICTED

APP = str(REPO_ROOT / "app.py")
PROPOSER, VERIFIER = Actor("ann-proposer", "annotator"), Actor("rita-verifier", "reviewer")


def test_a_reviewer_approves_a_pending_lower_risk_change_from_the_queue(seeded_db, tmp_path):
    enrol(seeded_db, PROPOSER, VERIFIER)
    # the oldest answer: first on the queue's first page, however many answers the demo queues; in a use case the
    # demo's register approves, so the Scope check does not hold it whatever its label
    record = {**CONTRADICTED, "created_at": "2000-01-01T00:00:00Z", "use_case": "hr-policy"}
    import_records(seeded_db, tmp_path, [record], "low.jsonl")
    verify_stored(seeded_db, VERIFIER, ["r-low"], AbstainingJudge())
    (proposal,) = list_proposals(seeded_db, response_id="r-low")
    decide_proposals(seeded_db, PROPOSER, [Decision(proposal["proposal_id"], "confirm", label="SUPPORTED")])
    (change,) = list_pending(seeded_db)
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "reviewer")
    at.run()
    at.switch_page("pages/review_queue.py").run()
    assert not at.exception, at.exception
    queue = at.dataframe(key="queue_table").value
    assert PENDING_MARK in queue.set_index("response_id").loc["r-low", "why"]
    assert at.selectbox(key="pending_change_pick").value == change["change_id"]
    at.radio(key=f"pending_change_{change['change_id']}_choice").set_value("approve")
    next(b for b in at.button if b.label == "Record").click().run()
    assert not at.exception, at.exception
    assert seeded_db.scalar("SELECT labels FROM claims WHERE is_current AND response_id = 'r-low'") == ["SUPPORTED"]
    assert list_pending(seeded_db, status="approved")[0]["decided_by"] == "test-reviewer"
