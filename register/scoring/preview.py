"""The decision an answer would get, computed by the pure path on the register's current settings.

``decision_of`` scores one ``Response`` (stored or proposed) as the register would: the active scoring profile
(``hri_core.scoring.score_response``), the Authority checks of its claims' sources against the source register,
the authority rules and the use case's requesters (``hri_core.authority.check_response``), the Scope check against
the approved-use-case register (``hri_core.decision.scope_finding``), the Mitigation step
reading those findings (``hri_core.mitigation.decide``) and the one decision over them
(``hri_core.decision.decide_answer``). Comparing a proposed revision's decision with the current revision's at
the same ``as_of`` says whether a change would lower the answer's risk (``lowers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hri_core import Response, ScoringProfile, score_response
from hri_core.authority import AuthorityRules, SourceRecord, check_response
from hri_core.decision import DECISIONS, Decision, authority_findings, decide_scored, scope_finding
from hri_core.mitigation import MitigationPolicy, decide
from register.db.store import Store, utc_now
from register.scoring import mitigation as mitigation_store
from register.scoring.authority_rules import authority_rules, requester_roles
from register.scoring.profiles import active_profile

__all__ = ["RegisterSettings", "decision_of", "lowers", "register_settings", "use_case_statuses"]


@dataclass(frozen=True)
class RegisterSettings:
    """What the decision reads of the register besides the answer: read once for many answers."""

    profile: ScoringProfile
    rules: AuthorityRules
    roles: dict[str, tuple[str, ...]]
    policy: MitigationPolicy
    sources: dict[str, SourceRecord]
    use_cases: dict[str, str]  # the approved-use-case register's live rows: {use case id: status}


def use_case_statuses(store: Store) -> dict[str, str]:
    """``{use case id: status}`` of the approved-use-case register's live rows (the Scope check reads them)."""
    return dict(store.query("SELECT use_case_id, status FROM use_case_register WHERE NOT deleted"))


def register_settings(store: Store, responses: Sequence[Response] = ()) -> RegisterSettings:
    """The active profile, authority rules, use-case requesters, mitigation policy, the use cases' statuses, and the
    register's rows of the sources ``responses`` cite (deleted ones left out: they are unknown)."""
    cited = sorted({c.source_id for r in responses for c in r.claims if c.source_id})
    rows = store.dicts("SELECT source_id, source_type, authority_tier, valid_until, superseded_by, restricted_to "
                       "FROM sources WHERE NOT deleted AND list_contains(?, source_id)", [cited]) if cited else []
    return RegisterSettings(active_profile(store), authority_rules(store), requester_roles(store),
                            mitigation_store.active_policy(store),
                            {row["source_id"]: SourceRecord.model_validate(row) for row in rows},
                            use_case_statuses(store))


def decision_of(store: Store, response: Response, *, as_of: datetime | None = None,
                settings: RegisterSettings | None = None) -> Decision:
    """The decision ``response`` gets under the register's current profile, sources, authority rules, use-case
    requesters and mitigation policy, at ``as_of`` (default now). ``settings``: those, read once for many
    answers (``register_settings`` of every answer decided); by default read for this one."""
    as_of = as_of or utc_now()
    settings = settings or register_settings(store, [response])
    score = score_response(response, settings.profile, as_of)
    checks = check_response(response, settings.sources, as_of=as_of,
                            requester_roles=settings.roles.get(response.use_case or ""), rules=settings.rules)
    step = decide(response, settings.policy, authority={r.claim_id: r.failures for r in checks if r.failures})
    # the very path the parity tests hold the stored decision equal to (hri_core.decision)
    findings = authority_findings(response, checks, unmarked_claims_core=settings.policy.unmarked_claims_core)
    return decide_scored(score, authority=findings, mitigation=step,
                         scope=scope_finding(response.use_case, settings.use_cases))


def lowers(before: Decision, after: Decision) -> bool:
    """Whether ``after`` is a less severe decision than ``before``."""
    return DECISIONS.index(after.decision) < DECISIONS.index(before.decision)
