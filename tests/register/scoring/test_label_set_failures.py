"""A record stored before the label-set rule (``hri_core.vocabulary.LABEL_CONFLICTS``) fails closed in the scorer.

Imports, the workbench and every other entry refuse SUPPORTED beside another label and PARTIAL beside
UNSUPPORTED; a register may still hold such a claim from before. The scorer is never fed it as if it were
valid: the response's score row names the conflict (``scoring_failure``), carries the worst case and the action
``review``, so a person sees it in the review queue, while every other response is scored as usual.
"""

from __future__ import annotations

from datetime import UTC, datetime

from register import SYSTEM
from register.console.queries.filters import Filters
from register.console.review import review_queue
from register.ingest.importer import import_path
from register.scoring.profiles import active_profile
from register.scoring.scorer import rescore
from tests.register.scoring.test_scoring_failures import GOOD, current, store_unvalidated, write_jsonl

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
MIXED = {"response_id": "mixed", "claims": [{"labels": ["SUPPORTED", "UNSUPPORTED"], "criticality": 1},
                                            {"labels": ["PARTIAL", "UNSUPPORTED", "ACCESS_GAP"], "criticality": 2}]}


def test_a_stored_contradictory_label_set_fails_closed_to_review_saying_why(store, tmp_path):
    write_jsonl(tmp_path / "good.jsonl", GOOD[:2])
    import_path(store, SYSTEM, tmp_path / "good.jsonl")
    store_unvalidated(store, MIXED)

    summary = rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
    assert summary.responses_scored == 3
    assert set(summary.failed) == {"mixed"}
    why = summary.failed["mixed"]
    assert "labels that contradict each other" in why and "SUPPORTED stands alone" in why
    assert "PARTIAL and UNSUPPORTED exclude each other" in why
    scores = current(store)
    assert scores["mixed"][:3] == (100.0, "Critical", "review")
    for rid in ("good-0", "good-1"):
        assert scores[rid][3] is None

    queue, _ = review_queue(store, Filters(), now=AS_OF)
    reasons = dict(zip(queue["response_id"], queue["why"], strict=True))
    assert reasons["mixed"].startswith("decision review: ")
    assert "scoring failed (claims: a claim carries labels that contradict each other" in reasons["mixed"]
