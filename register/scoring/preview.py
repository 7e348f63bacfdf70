"""The decision an answer would get, computed by the pure path on the register's current settings.

``decision_of`` scores one ``Response`` (stored or proposed) as the register would: the active scoring profile
(``hri_core.scoring.score_response``), the Authority checks of its claims' sources against the source register,
the authority rules and the use case's requesters (``hri_core.authority.check_response``), the Mitigation step
reading those findings (``hri_core.mitigation.decide``) and the one decision over them
(``hri_core.decision.decide_answer``). Comparing a proposed revision's decision with the current revision's at
the same ``as_of`` says whether a change would lower the answer's risk (``lowers``).
"""

from __future__ import annotations

from datetime import datetime

from hri_core import Response, score_response
from hri_core.authority import SourceRecord, check_response
from hri_core.decision import DECISIONS, AuthorityFinding, Decision, decide_answer
from hri_core.mitigation import decide
from register.db.store import Store, utc_now
from register.scoring import mitigation as mitigation_store
from register.scoring.authority_rules import authority_rules, requester_roles
from register.scoring.profiles import active_profile

__all__ = ["decision_of", "lowers"]

# each Authority check in the register's words (hri_core.decision.AuthorityFinding.problem)
_PROBLEMS = {"allowed": "forbidden source", "current": "stale source", "authoritative": "insufficient authority"}


def _sources(store: Store, response: Response) -> dict[str, SourceRecord]:
    cited = sorted({c.source_id for c in response.claims if c.source_id})
    if not cited:
        return {}
    rows = store.dicts("SELECT source_id, source_type, authority_tier, valid_until, superseded_by, restricted_to "
                       "FROM sources WHERE NOT deleted AND list_contains(?, source_id)", [cited])
    return {row["source_id"]: SourceRecord.model_validate(row) for row in rows}


def decision_of(store: Store, response: Response, *, as_of: datetime | None = None) -> Decision:
    """The decision ``response`` gets under the register's current profile, sources, authority rules, use-case
    requesters and mitigation policy, at ``as_of`` (default now)."""
    as_of = as_of or utc_now()
    score = score_response(response, active_profile(store), as_of)
    roles = requester_roles(store).get(response.use_case or "")
    checks = check_response(response, _sources(store, response), as_of=as_of, requester_roles=roles,
                            rules=authority_rules(store))
    claims = {c.claim_id: c for c in response.claims}
    findings = []
    for result in checks:
        claim = claims.get(result.claim_id)
        for check in ("allowed", "current", "authoritative"):
            if getattr(result, check).passed is False:  # failed, not undecided
                findings.append(AuthorityFinding(result.claim_id, result.source_id, check, _PROBLEMS[check],
                                                 bool(claim and claim.is_core), claim.criticality if claim else 1))
    failures = {r.claim_id: r.failures for r in checks if r.failures}
    step = decide(response, mitigation_store.active_policy(store), authority=failures)
    return decide_answer(band=score.band, band_action=score.band_action or score.action,
                         floors=[(f.rule_id, f.claim_id, f.label.value, f.criticality, f.min_action)
                                 for f in score.floors],
                         authority=findings, mitigation=(step.action, step.reason))


def lowers(before: Decision, after: Decision) -> bool:
    """Whether ``after`` is a less severe decision than ``before``."""
    return DECISIONS.index(after.decision) < DECISIONS.index(before.decision)
