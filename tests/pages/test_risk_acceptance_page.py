"""AppTest of formal review on the Review queue page: an answer decided block offers no release to one reviewer;
one reviewer proposes a risk acceptance, a second approves it, and the answer leaves the queue (issue 33, item 2).
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register.console.risk_acceptance import acceptances
from tests.helpers.accounts import login
from tests.helpers.console_records import ALL_DIMS, claim
from tests.helpers.feedback import import_records
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
# the oldest answer: first on the queue's first page, however many answers the demo queues
BLOCKED = {"response_id": "r-block", "use_case": "supplier-contracts", "model": "m", "question": "Cap?",
           "answer": "Unlimited liability.", "created_at": "2000-01-01T00:00:00Z",
           "claims": [claim("The liability cap is unlimited.", ["CONTRADICTED"], 3, dimensions=ALL_DIMS)]}


def _queue(role: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, role)
    at.run()
    at.switch_page("pages/review_queue.py").run()
    assert not at.exception, at.exception
    return at


def test_two_reviewers_release_a_block_answer_through_a_risk_acceptance(seeded_db, tmp_path):
    import_records(seeded_db, tmp_path, [BLOCKED], "block.jsonl")
    assert seeded_db.scalar("SELECT decision FROM scores WHERE is_current AND response_id = 'r-block'") == "block"
    at = _queue("reviewer")
    assert at.selectbox(key="queue_pick").value == "r-block"
    offered = at.radio(key="review_decision_choice").options
    assert "Block" in offered and not {"Release", "Release with caution"} & set(offered)  # labels shown
    at.radio(key="risk_release").set_value("release_with_caution")
    at.text_area(key="risk_reason").input("The contract owner accepts the exposure for this quarter.")
    next(b for b in at.button if b.label == "Propose risk acceptance").click().run()
    assert not at.exception, at.exception
    (proposed,) = acceptances(seeded_db, response_id="r-block").to_dict("records")
    assert (proposed["status"], proposed["proposed_by"]) == ("proposed", "test-reviewer")
    # its proposer cannot approve it: the page says so and nothing changes
    at.run()
    at.radio(key=f"risk_decide_{proposed['acceptance_id']}_choice").set_value("approve")
    next(b for b in at.button if b.label == "Record").click().run()
    assert any("second person" in e.value.lower() or "four eyes" in e.value.lower() for e in at.error)
    assert acceptances(seeded_db, response_id="r-block").iloc[0]["status"] == "proposed"
    # a second reviewer approves it
    at = _queue("admin")
    assert at.selectbox(key="risk_pending_pick").value == proposed["acceptance_id"]
    at.radio(key=f"risk_decide_{proposed['acceptance_id']}_choice").set_value("approve")
    next(b for b in at.button if b.label == "Record").click().run()
    assert not at.exception, at.exception
    row = acceptances(seeded_db, response_id="r-block").iloc[0]
    assert (row["status"], row["decided_by"]) == ("accepted", "test-admin")
    assert "r-block" not in set(at.dataframe(key="queue_table").value["response_id"])
