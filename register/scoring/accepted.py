"""Which block answers a risk acceptance currently releases: one SQL definition for the review queue
(``register.console.queries.queue``) and the release report (``register.governance.report``).

The acceptances themselves are proposed and approved in ``register.console.risk_acceptance`` (migration 036).
"""

from __future__ import annotations

from datetime import date

from register.db.sql import Params

__all__ = ["in_force_select"]


def in_force_select(p: Params, today: date) -> str:
    """A SELECT of ``(response_key, decision_at)`` of the risk acceptances in force on ``today``: accepted and not
    expired. The caller joins it on the current revision's key and its decision: an acceptance of an older
    revision, or of a decision the answer no longer has, matches nothing (re-opened)."""
    return ("SELECT DISTINCT response_key, decision_at FROM risk_acceptances "
            f"WHERE status = 'accepted' AND expires_on >= {p(today)}::DATE")
