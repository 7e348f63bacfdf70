"""One decision per answer that a person can act on: the most severe of what each part asks for, and why.

An answer carries three verdicts that used to be read apart: the band's action (paper Table VI, raised by
any fired floor's minimum action, Table IV), CLAIM's Authority checks of its claims' sources (seed 004:
allowed, current, authoritative) and CLAIM's Mitigation action (seed 004: answer, revise, ask, abstain,
escalate). The decision is the most severe of:

* the band's own action;
* each fired floor's minimum action;
* each claim carrying VALIDATED_NEGATIVE_FEEDBACK dated after the as-of time (``ScoreResult.late_feedback``): at
  least ``review`` (``LATE_FEEDBACK_DECISION``). The score counts such feedback 0 and fires no floor on it (section
  V.A decays feedback by its age, which it does not have yet; DOMAIN.md: it "never counts, in any floor"), so
  without this rule a confirmed negative verdict would release its answer where the same claim without a time
  (counted fresh and unresolved) does not. A person decides whether the time or the as-of time is wrong;
* each failed Authority check (``False``, not undecided): at least ``review`` on a core claim or one of
  criticality >= ``SERIOUS_CRITICALITY``, at least ``caution`` on any other claim;
* the Mitigation action: escalate or abstain at least ``review``, ask or revise at least ``caution``
  (``MITIGATION_MINIMUM``).

A response the scorer could not score fails closed: its decision is ``review`` whatever else is said.

``decision_reasons`` are short sentences in that order (band, floors, late feedback, Authority, mitigation), each
naming where it comes from. The register's SQL scorer writes the same sentences (a parity test holds them equal),
so every sentence is built by one of the ``*_reason`` functions below, whose wording the SQL repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from pydantic import BaseModel, ConfigDict

from .authority import AuthorityResult
from .mitigation import MitigationDecision
from .models import Response
from .profile import ACTIONS, Action, stricter_action
from .scoring import ScoreResult

__all__ = ["CHECK_PROBLEMS", "DECISIONS", "LATE_FEEDBACK_DECISION", "MITIGATION_MINIMUM", "SERIOUS_CRITICALITY",
           "AuthorityFinding", "Decision", "authority_findings", "authority_minimum", "authority_reason", "band_reason",
           "decide_answer", "decide_scored", "failure_reason", "floor_reason", "late_feedback_reason",
           "mitigation_reason"]

DECISIONS: tuple[str, ...] = ACTIONS  # release < caution < review < block
# Mitigation action -> the least severe decision it allows (seed 004: escalate and abstain hand the answer to a
# person; revise and ask change it before it goes out)
MITIGATION_MINIMUM: dict[str, Action] = {"answer": "release", "revise": "caution", "ask": "caution",
                                         "abstain": "review", "escalate": "review"}
# a failed Authority check on a claim of at least this criticality (or a core claim) needs a person
SERIOUS_CRITICALITY = 2
# the checks a finding can fail, in the order they are read, and the register's word for each failure
CHECK_PROBLEMS: tuple[tuple[str, str], ...] = (("allowed", "forbidden source"), ("current", "stale source"),
                                               ("authoritative", "insufficient authority"))
FAILED_SCORING_DECISION: Action = "review"  # a response the scorer could not score goes to a person
# a claim whose validated negative feedback is dated after the as-of time: a person looks (fail closed)
LATE_FEEDBACK_DECISION: Action = "review"


@dataclass(frozen=True, slots=True)
class AuthorityFinding:
    """One failed Authority check of a claim's source (``check``: allowed, current or authoritative)."""

    claim_id: str
    source_id: str
    check: str
    problem: str  # in the register's words: forbidden source, stale source, insufficient authority
    is_core: bool
    criticality: int

    @property
    def serious(self) -> bool:
        return self.is_core or self.criticality >= SERIOUS_CRITICALITY


class Decision(BaseModel):
    """The decision on an answer and its reasons (band, floors, Authority, mitigation, in that order)."""

    model_config = ConfigDict(frozen=True)

    decision: Action
    reasons: tuple[str, ...]


def authority_minimum(finding: AuthorityFinding) -> Action:
    """At least review on a core or serious claim, else at least caution."""
    return "review" if finding.serious else "caution"


def band_reason(band: str, band_action: str, *, no_claims: bool = False) -> str:
    """The first reason: the band's action, or the profile's no-claims action for an answer without claims."""
    return f"no claims: {band_action}" if no_claims else f"band {band}: {band_action}"


def floor_reason(rule_id: str, claim_id: str, label: str, criticality: int, min_action: str) -> str:
    return f"floor {rule_id} on claim {claim_id} ({label}, criticality {criticality}): at least {min_action}"


def late_feedback_reason(claim_id: str) -> str:
    return (f"claim {claim_id} carries validated negative feedback dated after the as-of time: "
            f"at least {LATE_FEEDBACK_DECISION}")


def authority_reason(finding: AuthorityFinding) -> str:
    kind = "core claim" if finding.is_core else "claim"
    return (f"Authority: {kind} {finding.claim_id} (criticality {finding.criticality}) rests on "
            f"{finding.source_id}, which failed {finding.check} ({finding.problem}): "
            f"at least {authority_minimum(finding)}")


def mitigation_reason(action: str, sentence: str) -> str:
    """``sentence`` is the Mitigation decision's own (``hri_core.mitigation.MitigationDecision.reason``,
    which starts with the action)."""
    return f"mitigation {sentence}: at least {MITIGATION_MINIMUM[action]}"


def failure_reason(failure: str) -> str:
    return f"scoring failed ({failure}): {FAILED_SCORING_DECISION}"


def decide_answer(*, band: str, band_action: str, floors: Sequence[tuple[str, str, str, int, str | None]] = (),
                  late_feedback: Sequence[str] = (), authority: Sequence[AuthorityFinding] = (),
                  mitigation: tuple[str, str] | None = None, scoring_failure: str | None = None,
                  no_claims: bool = False) -> Decision:
    """The decision on one answer.

    ``floors``: the fired floors as (rule id, claim id, label, criticality, minimum action or None), in the
    order the scorer lists them; only those with a minimum action say something about the decision.
    ``late_feedback``: the ids of the claims whose validated negative feedback is dated after the as-of time, in
    claim order (``ScoreResult.late_feedback``).
    ``authority``: the failed checks, in claim order. ``mitigation``: (action, sentence) of the Mitigation
    step, or None when none was decided. ``scoring_failure``: why the scorer could not score the response.
    ``no_claims``: the answer has no claims (``band_action`` is then the profile's no-claims action).
    """
    decision: str = band_action
    reasons = [band_reason(band, band_action, no_claims=no_claims)]
    for rule_id, claim_id, label, criticality, min_action in floors:
        if min_action is not None:
            decision = stricter_action(decision, min_action)
            reasons.append(floor_reason(rule_id, claim_id, label, criticality, min_action))
    for claim_id in late_feedback:
        decision = stricter_action(decision, LATE_FEEDBACK_DECISION)
        reasons.append(late_feedback_reason(claim_id))
    for finding in authority:
        decision = stricter_action(decision, authority_minimum(finding))
        reasons.append(authority_reason(finding))
    if mitigation is not None:
        action, sentence = mitigation
        decision = stricter_action(decision, MITIGATION_MINIMUM[action])
        reasons.append(mitigation_reason(action, sentence))
    if scoring_failure is not None:
        decision = stricter_action(decision, FAILED_SCORING_DECISION)
        reasons.append(failure_reason(scoring_failure))
    return Decision(decision=cast(Action, decision), reasons=tuple(reasons))  # every input is one of ACTIONS


def authority_findings(response: Response, results: Sequence[AuthorityResult], *,
                       unmarked_claims_core: bool) -> tuple[AuthorityFinding, ...]:
    """The failed (``False``, not undecided) checks of ``results`` (``hri_core.authority.check_response``'s, in
    claim order), each check in ``CHECK_PROBLEMS`` order. A claim without ``is_core`` counts as the mitigation
    policy's ``unmarked_claims_core`` says."""
    claims = {claim.claim_id: claim for claim in response.claims}
    out = []
    for result in results:
        claim = claims[result.claim_id]
        core = unmarked_claims_core if claim.is_core is None else claim.is_core
        for check, problem in CHECK_PROBLEMS:
            if getattr(result, check).passed is False:
                out.append(AuthorityFinding(claim_id=result.claim_id, source_id=result.source_id, check=check,
                                            problem=problem, is_core=core, criticality=claim.criticality))
    return tuple(out)


def decide_scored(score: ScoreResult, *, authority: Sequence[AuthorityFinding] = (),
                  mitigation: MitigationDecision | None = None) -> Decision:
    """``decide_answer`` of a ``hri_core.score_response`` result, its Authority findings and its Mitigation
    decision (``hri_core.mitigation.decide`` with the same Authority results)."""
    return decide_answer(
        # an answer without claims gets the profile's no-claims action in place of its band's
        band=score.band, band_action=score.action if score.no_claims else (score.band_action or score.action),
        floors=[(f.rule_id, f.claim_id, f.label.value, f.criticality, f.min_action) for f in score.floors],
        late_feedback=score.late_feedback, authority=authority,
        mitigation=None if mitigation is None else (mitigation.action, mitigation.reason), no_claims=score.no_claims)
