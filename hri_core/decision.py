"""One decision per answer that a person can act on: the most severe of what each part asks for, and why.

An answer carries three verdicts that used to be read apart: the band's action (paper Table VI, raised by
any fired floor's minimum action, Table IV), CLAIM's Authority checks of its claims' sources (seed 004:
allowed, current, authoritative) and CLAIM's Mitigation action (seed 004: answer, revise, ask, abstain,
escalate). The decision is the most severe of:

* the band's own action;
* the Scope check (paper Fig. 1; Table IV floors a request that "exceeds approved use case or policy boundary"):
  at least ``review`` (``SCOPE_DECISION``) when the answer's use case is suspended or retired in the
  approved-use-case register, or unknown to a register that approves some use case (``scope_finding``). A register
  without an approved use case says nothing of unknown ones (a team that keeps none sees no change); a proposed
  use case or one past its review date gets a proposal for a person (``register.scoring.scope``), not this rule;
* each fired floor's minimum action;
* each claim carrying VALIDATED_NEGATIVE_FEEDBACK dated after the as-of time (``ScoreResult.late_feedback``): at
  least ``review`` (``LATE_FEEDBACK_DECISION``). The score counts such feedback 0 and fires no floor on it (section
  V.A decays feedback by its age, which it does not have yet; DOMAIN.md: it "never counts, in any floor"), so
  without this rule a confirmed negative verdict would release its answer where the same claim without a time
  (counted fresh and unresolved) does not. A person decides whether the time or the as-of time is wrong;
* each failed Authority check (``False``, not undecided): at least ``review`` on a core claim or one of
  criticality >= ``SERIOUS_CRITICALITY``, at least ``caution`` on any other claim;
* the Mitigation action: escalate or abstain at least ``review``, ask or revise at least ``caution``
  (``MITIGATION_MINIMUM``);
* human review wired into Mitigation by the use case's CLAIM lens (``hri_core.lens``): at least ``review``
  (``HUMAN_REVIEW_DECISION``). A step the lens skips has no part here: the decision is the most severe of the
  parts that ran, never lower.

A response the scorer could not score fails closed: its decision is ``review`` whatever else is said.

``decision_reasons`` are short sentences in that order (band, Scope, floors, late feedback, Authority, mitigation,
human review),
each
naming where it comes from. The register's SQL scorer writes the same sentences (a parity test holds them equal),
so every sentence is built by one of the ``*_reason`` functions below, whose wording the SQL repeats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from pydantic import BaseModel, ConfigDict

from .authority import AuthorityResult
from .lens import HUMAN_REVIEW_DECISION
from .mitigation import MitigationDecision
from .models import Response
from .profile import ACTIONS, Action, stricter_action
from .scoring import ScoreResult
from .vocabulary import USE_CASE_APPROVED, USE_CASE_RETIRED, USE_CASE_SUSPENDED

__all__ = ["CHECK_PROBLEMS", "DECISIONS", "LATE_FEEDBACK_DECISION", "MITIGATION_MINIMUM", "SCOPE_DECISION",
           "SCOPE_HELD_STATUSES", "SERIOUS_CRITICALITY", "AuthorityFinding", "Decision", "ScopeFinding",
           "authority_findings", "authority_minimum", "authority_reason", "band_reason", "decide_answer",
           "decide_scored", "failure_reason", "floor_reason", "human_review_reason", "late_feedback_reason",
           "mitigation_reason", "scope_finding", "scope_reason"]

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
# the Scope check: an answer of a use case no longer approved, or unknown to a register that approves some, goes to a
# person (never lowered by it: it only raises)
SCOPE_DECISION: Action = "review"
SCOPE_HELD_STATUSES: tuple[str, ...] = (USE_CASE_SUSPENDED, USE_CASE_RETIRED)


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


@dataclass(frozen=True, slots=True)
class ScopeFinding:
    """The Scope check holds an answer for a person: its ``use_case`` (None: the answer names none) has ``status``
    in the approved-use-case register (suspended or retired), or None when the register does not know it."""

    use_case: str | None
    status: str | None


def scope_finding(use_case: str | None, statuses: Mapping[str, str]) -> ScopeFinding | None:
    """The Scope check of an answer of ``use_case`` against ``statuses`` (``{use case id: status}`` of the
    register's live rows): a finding when the use case is suspended or retired, or unknown (or not named) while some
    use case is approved; None otherwise (approved, proposed, or a register that approves nothing)."""
    status = statuses.get(use_case) if use_case is not None else None
    if status in SCOPE_HELD_STATUSES:
        return ScopeFinding(use_case, status)
    if status is None and USE_CASE_APPROVED in statuses.values():
        return ScopeFinding(use_case, None)
    return None


class Decision(BaseModel):
    """The decision on an answer and its reasons (band, Scope, floors, late feedback, Authority, mitigation, in that
    order)."""

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


def scope_reason(finding: ScopeFinding) -> str:
    if finding.use_case is None:
        return f"Scope: the answer names no use case of the use-case register: at least {SCOPE_DECISION}"
    if finding.status is None:
        return f"Scope: use case {finding.use_case} is not in the use-case register: at least {SCOPE_DECISION}"
    return f"Scope: use case {finding.use_case} is {finding.status}: at least {SCOPE_DECISION}"


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


def human_review_reason() -> str:
    """The sentence of human review wired into Mitigation by the use case's lens."""
    return f"Mitigation: human review wired in for this use case: at least {HUMAN_REVIEW_DECISION}"


def failure_reason(failure: str) -> str:
    return f"scoring failed ({failure}): {FAILED_SCORING_DECISION}"


def decide_answer(*, band: str, band_action: str, floors: Sequence[tuple[str, str, str, int, str | None]] = (),
                  late_feedback: Sequence[str] = (), authority: Sequence[AuthorityFinding] = (),
                  mitigation: tuple[str, str] | None = None, scoring_failure: str | None = None,
                  no_claims: bool = False, scope: ScopeFinding | None = None,
                  human_review: bool = False) -> Decision:
    """The decision on one answer.

    ``floors``: the fired floors as (rule id, claim id, label, criticality, minimum action or None), in the
    order the scorer lists them; only those with a minimum action say something about the decision.
    ``late_feedback``: the ids of the claims whose validated negative feedback is dated after the as-of time, in
    claim order (``ScoreResult.late_feedback``).
    ``authority``: the failed checks, in claim order. ``mitigation``: (action, sentence) of the Mitigation
    step, or None when none was decided. ``scoring_failure``: why the scorer could not score the response.
    ``no_claims``: the answer has no claims (``band_action`` is then the profile's no-claims action).
    ``scope``: the Scope check's finding (``scope_finding``), or None when the answer is in scope.
    ``human_review``: the use case's lens wires human review into Mitigation (at least review).
    """
    decision: str = band_action
    reasons = [band_reason(band, band_action, no_claims=no_claims)]
    if scope is not None:
        decision = stricter_action(decision, SCOPE_DECISION)
        reasons.append(scope_reason(scope))
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
    if human_review:
        decision = stricter_action(decision, HUMAN_REVIEW_DECISION)
        reasons.append(human_review_reason())
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
                  mitigation: MitigationDecision | None = None, scope: ScopeFinding | None = None,
                  human_review: bool = False) -> Decision:
    """``decide_answer`` of a ``hri_core.score_response`` result, its Authority findings, its Mitigation
    decision (``hri_core.mitigation.decide`` with the same Authority results), its Scope finding and whether its
    lens wires human review into Mitigation. A step a lens skips is passed as nothing (no findings, None)."""
    return decide_answer(
        # an answer without claims gets the profile's no-claims action in place of its band's
        band=score.band, band_action=score.action if score.no_claims else (score.band_action or score.action),
        floors=[(f.rule_id, f.claim_id, f.label.value, f.criticality, f.min_action) for f in score.floors],
        late_feedback=score.late_feedback, authority=authority,
        mitigation=None if mitigation is None else (mitigation.action, mitigation.reason), no_claims=score.no_claims,
        scope=scope, human_review=human_review)
