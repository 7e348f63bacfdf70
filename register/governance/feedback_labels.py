"""Feedback labels that carry no validation record of the register: "validated outside the register".

The H dimension "should include only validated feedback" (paper section V.A). A VALIDATED_NEGATIVE_FEEDBACK
label that the register validated has a feedback item (``register.feedback``) validated on that claim; a
label that came in with an import has none, and nobody here can say who confirmed it, how or when. Such
labels still score (the file says they were validated), but they are shown as validated outside the
register and the pre-submission checklist names them (``register.governance.checks``, item 7).
"""

from __future__ import annotations

import pandas as pd

from hri_core import Label
from register.db.store import Store

__all__ = ["OUTSIDE_REGISTER", "validated_outside_register"]

OUTSIDE_REGISTER = "validated outside the register"


def validated_outside_register(store: Store, *, limit: int | None = None) -> pd.DataFrame:
    """Current claims labelled VALIDATED_NEGATIVE_FEEDBACK with no validated (or since resolved) feedback item
    on that claim: response_id, revision, claim_id, feedback_at, feedback_count, feedback_resolved (by
    response and claim position)."""
    return store.frame(
        "SELECT c.response_id, c.revision, c.claim_id, c.feedback_at, c.feedback_count, c.feedback_resolved "
        "FROM claims c WHERE c.is_current AND list_contains(c.labels, ?) AND NOT EXISTS ("
        "  SELECT 1 FROM feedback_items f WHERE f.response_id = c.response_id "
        "  AND f.validated_claim_id = c.claim_id AND f.state IN ('validated', 'resolved')) "
        "ORDER BY c.response_id, c.claim_idx LIMIT ?",
        [Label.VALIDATED_NEGATIVE_FEEDBACK.value, 2**62 if limit is None else int(limit)])
