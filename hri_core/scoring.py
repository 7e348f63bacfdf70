"""The Hallucination Risk Index of one response (paper sections IV-VIII, DOMAIN.md section 3).

    s_k   = sum_i v_i m_ik / sum_i v_i                 (k in F, C, U, O, S, P, H)
    add   = min(1, sum_k w_k s_k)
    hri   = max(add, max_i phi(c_i))                   (safety floors)
    score = 100 hri -> band -> action
    action = the stricter of the band's action and the min_action of every floor that fired

A floor's minimum action counts whenever it fires, not only when it is the decisive floor: its
rationale ("Confirmed contradiction requiring review", Table IV) is about its claim, and another,
higher floor firing on another claim does not make that claim less in need of review. The action is
raised only when strictly more severe than the band's; the first fired floor (claim order, then
profile order) with the strictest minimum is recorded as ``action_floor``. The band is never changed.

Default dimensions: a label hits the claim's explicit dimensions, else the profile's default ones,
except that a CONTRADICTED claim with ``contradicted_by = "context"`` hits the profile's
``context_contradiction_dimensions`` (F and C: Table III, "(F), and (C) if contradicted by context").

Validated negative feedback dated after the as-of time counts 0 and fires no floor (it did not exist yet), but the
result names its claims (``ScoreResult.late_feedback``): the decision fails closed on them (``hri_core.decision``).

``score_response`` is the reference implementation: the register's bulk SQL scorer must agree with
it to 1e-9 on every response (a property test holds them to that).
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from .feedback import decay_factor, late_feedback_claims, repeat_window_start
from .models import Claim, Response, ensure_utc
from .profile import ACTION_SEVERITY, FloorRule, ScoringProfile
from .vocabulary import DIMENSIONS, Dimension, Label


class ClaimScore(BaseModel):
    """What one claim adds to each dimension (m_ik) and which floors it fires."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    criticality: int
    labels: tuple[Label, ...]
    dimensions: tuple[Dimension, ...]  # the dimensions actually used (explicit or profile default)
    contributions: dict[Dimension, float]  # m_ik for every dimension (0 where the claim adds nothing)
    floor: float  # phi(c_i): 0 when no floor fires


class FiredFloor(BaseModel):
    """A safety floor that fired: which claim, which rule, which value."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    rule_id: str
    label: Label
    criticality: int
    value: float
    description: str
    min_action: str | None = None  # the rule's minimum action, if it has one


class ScoreResult(BaseModel):
    """Everything the console shows about a score, and enough to reproduce it."""

    model_config = ConfigDict(frozen=True)

    response_id: str
    profile_name: str
    profile_version: int
    as_of: datetime
    dimensions: dict[Dimension, float]
    hri_add: float
    hri: float
    score: float
    band: str
    action: str
    floors: tuple[FiredFloor, ...]
    decisive_floor: FiredFloor | None  # the floor that set HRI*, if it exceeded the additive score
    claims: tuple[ClaimScore, ...]
    no_claims: bool
    total_criticality: int
    band_action: str | None = None  # the band's own action, before any floor's minimum action
    action_floor: FiredFloor | None = None  # the fired floor whose min_action raised the action, if any
    # the claims carrying VALIDATED_NEGATIVE_FEEDBACK dated after ``as_of`` (counted 0 above): the decision on the
    # answer is at least review because of them (``hri_core.decision``), never release
    late_feedback: tuple[str, ...] = ()

    def to_output(self) -> dict[str, Any]:
        """The CLI / export form: flat numbers, dimension letters as keys."""
        return {
            "response_id": self.response_id,
            "hri_add": self.hri_add,
            "hri": self.hri,
            "score": self.score,
            "band": self.band,
            "action": self.action,
            "no_claims": self.no_claims,
            "dimensions": {d.value: v for d, v in self.dimensions.items()},
            "floors": [
                {"claim_id": f.claim_id, "rule_id": f.rule_id, "label": f.label.value, "value": f.value}
                for f in self.floors
            ],
            "decisive_floor": self.decisive_floor.claim_id if self.decisive_floor else None,
            "action_floor": ({"claim_id": self.action_floor.claim_id, "rule_id": self.action_floor.rule_id}
                             if self.action_floor else None),
            "profile": {"name": self.profile_name, "version": self.profile_version},
            "as_of": self.as_of.isoformat(),
            # claims whose validated negative feedback is dated after as_of: their answer needs a person
            "late_feedback": list(self.late_feedback),
        }


def claim_dimensions(claim: Claim, label: Label, profile: ScoringProfile) -> tuple[Dimension, ...]:
    """Dimensions a label of this claim hits: the claim's explicit list, else the profile default
    (for CONTRADICTED contradicted by the retrieved context: ``context_contradiction_dimensions``)."""
    if label == Label.SUPPORTED:
        return ()
    if claim.dimensions is not None:
        return claim.dimensions
    if label == Label.CONTRADICTED and claim.contradicted_by == "context":
        return profile.context_contradiction_dimensions
    return profile.default_dimensions[label]


def label_contribution(claim: Claim, label: Label, profile: ScoringProfile, as_of: datetime) -> float:
    """m for one label; validated negative feedback decays with its age at ``as_of``."""
    value = profile.contributions[label]
    if label == Label.VALIDATED_NEGATIVE_FEEDBACK:
        value *= decay_factor(claim.feedback_at, as_of, profile.decay_lambda)
    return value


def floor_fires(rule: FloorRule, claim: Claim, as_of: datetime, repeat_since: datetime | None) -> bool:
    """Whether a floor rule applies to a claim at ``as_of``.

    A rule that reads feedback (``FloorRule.reads_feedback``) never fires on feedback validated after
    ``as_of``. "Repeated" counts only while the claim's latest validation is at or after ``repeat_since``
    (``repeat_window_start`` of the profile's window; None: all time): the claim carries its count and
    latest validation time, not each item's, so a recent item keeps the earlier ones counted (fail closed).
    """
    if rule.label not in claim.labels:
        return False
    v = claim.criticality
    if v < rule.min_criticality or (rule.max_criticality is not None and v > rule.max_criticality):
        return False
    if rule.reads_feedback and claim.feedback_at is not None and claim.feedback_at > as_of:
        return False  # not validated yet at the scoring time
    if rule.condition == "repeated_or_unresolved":
        recent = claim.feedback_at is None or repeat_since is None or claim.feedback_at >= repeat_since
        repeated = recent and (claim.feedback_count or 0) >= rule.min_feedback_count
        unresolved = claim.feedback_resolved is not True  # unknown counts as unresolved: fail closed
        return repeated or unresolved
    return True


def score_claim(claim: Claim, profile: ScoringProfile, as_of: datetime) -> tuple[ClaimScore, list[FiredFloor]]:
    """m_ik of one claim (the max over its labels per dimension) and the floors it fires."""
    m = {d: 0.0 for d in DIMENSIONS}
    used: dict[Dimension, None] = {}
    for label in claim.labels:
        value = label_contribution(claim, label, profile, as_of)
        for dim in claim_dimensions(claim, label, profile):
            used[dim] = None
            m[dim] = max(m[dim], value)
    repeat_since = repeat_window_start(as_of, profile.repeat_window_days)
    fired = [
        FiredFloor(claim_id=claim.claim_id or "", rule_id=rule.rule_id, label=rule.label,
                   criticality=claim.criticality, value=rule.value, description=rule.describe(),
                   min_action=rule.min_action)
        for rule in profile.floors
        if floor_fires(rule, claim, as_of, repeat_since)
    ]
    phi = max((f.value for f in fired), default=0.0)
    return (
        ClaimScore(claim_id=claim.claim_id or "", criticality=claim.criticality, labels=claim.labels,
                   dimensions=tuple(used), contributions=m, floor=phi),
        fired,
    )


def score_response(response: Response, profile: ScoringProfile, as_of: datetime) -> ScoreResult:
    """Score one response under ``profile`` at time ``as_of`` (needed to decay feedback reproducibly)."""
    as_of = ensure_utc(as_of)
    claim_scores: list[ClaimScore] = []
    fired: list[FiredFloor] = []
    for claim in response.claims:
        claim_score, claim_fired = score_claim(claim, profile, as_of)
        claim_scores.append(claim_score)
        fired.extend(claim_fired)

    total_v = sum(c.criticality for c in response.claims)
    if total_v:
        dims = {d: math.fsum(c.criticality * c.contributions[d] for c in claim_scores) / total_v for d in DIMENSIONS}
    else:
        dims = {d: 0.0 for d in DIMENSIONS}
    hri_add = min(1.0, math.fsum(profile.weights[d] * dims[d] for d in DIMENSIONS))
    top_floor = max(fired, key=lambda f: f.value, default=None)
    hri = max(hri_add, top_floor.value if top_floor else 0.0)
    score = 100.0 * hri
    band = profile.band_for(score)
    no_claims = not response.claims
    action: str = profile.no_claims_action if no_claims else band.action
    action_floor = None
    for floor in fired:  # a strictly stricter minimum only: the first fired floor keeps a tie
        if floor.min_action is not None and ACTION_SEVERITY[floor.min_action] > ACTION_SEVERITY[action]:
            action, action_floor = floor.min_action, floor
    return ScoreResult(
        response_id=response.response_id,
        profile_name=profile.name,
        profile_version=profile.version,
        as_of=as_of,
        dimensions=dims,
        hri_add=hri_add,
        hri=hri,
        score=score,
        band=band.name,
        action=action,
        floors=tuple(fired),
        decisive_floor=top_floor if top_floor and top_floor.value > hri_add else None,
        claims=tuple(claim_scores),
        no_claims=no_claims,
        total_criticality=total_v,
        band_action=band.action,
        action_floor=action_floor,
        late_feedback=late_feedback_claims(response, as_of),
    )
