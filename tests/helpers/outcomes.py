"""Known outcomes put into a test register in one write: an outcome CSV of the answers scored, harm following the
score (with some noise, so the fit has something to learn and both outcomes occur), of one kind (``incident``,
by default): the demo set's own outcomes are review decisions."""

from __future__ import annotations

from register import Store
from register.scoring.calibration import import_outcomes_csv
from tests.helpers.actors import REVIEWER, enrol


def import_scored_outcomes(store: Store, n: int = 60, *, kind: str = "incident") -> list[str]:
    """Outcomes for ``n`` current answers with claims scored without failure (harmful: every third answer and
    those scoring 60 or more, except every seventh); returns their ids."""
    enrol(store, REVIEWER)
    rows = store.query("SELECT response_id, score FROM scores WHERE is_current AND NOT no_claims "
                       "AND scoring_failure IS NULL ORDER BY response_id LIMIT ?", [n])
    lines = ["response_id,outcome"]
    for i, (rid, score) in enumerate(rows):
        bad = (score >= 60 or i % 3 == 0) and i % 7 != 0
        lines.append(f"{rid},{'bad' if bad else 'good'}")
    import_outcomes_csv(store, REVIEWER, ("\n".join(lines) + "\n").encode(), "outcomes.csv", kind=kind)
    return [rid for rid, _ in rows]
