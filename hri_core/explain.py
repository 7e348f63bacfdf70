"""Plain-language explanation of a score: why this response got its band and action.

Pure: takes the ``ScoreResult`` and the response it came from, returns one or two sentences a
compliance reviewer can read, e.g. "High because claim 3 (criticality 3) is CONTRADICTED by the
retrieved context: the 0.70 safety floor overrides the additive 0.17."
"""

from __future__ import annotations

from .models import Response
from .profile import ScoringProfile
from .scoring import ScoreResult
from .vocabulary import DIMENSION_NAMES, DIMENSIONS, Dimension, Label

_WHY = {
    Label.CONTRADICTED: "is CONTRADICTED",
    Label.ACCESS_GAP: "rests on evidence it may not access (ACCESS_GAP)",
    Label.OUT_OF_SCOPE: "is OUT_OF_SCOPE for the approved use case",
    Label.VALIDATED_NEGATIVE_FEEDBACK: "carries repeated or unresolved validated negative feedback",
}


def _claim_position(response: Response, claim_id: str) -> str:
    for index, claim in enumerate(response.claims, start=1):
        if claim.claim_id == claim_id:
            return f"claim {index}"
    return f"claim {claim_id}"


def _action(result: ScoreResult, response: Response) -> str:
    """``Action: x.``, saying which floor raised it above the band's own action when one did."""
    floor = result.action_floor
    if floor is None:
        return f"Action: {result.action}."
    return (f"Action: {result.action}, raised from the band's {result.band_action} because the floor on "
            f"{_claim_position(response, floor.claim_id)} ({floor.description}) requires at least {floor.min_action}.")


def explain(result: ScoreResult, response: Response, profile: ScoringProfile) -> str:
    """One or two sentences naming what decided the band: the floor and its claim, or the dimensions."""
    band = result.band
    if result.no_claims:
        return (f"No claims: the answer was not decomposed into checkable claims, so it cannot be judged; "
                f"it is routed to {result.action} (score 0 is not evidence of low risk).")
    floor = result.decisive_floor
    if floor is not None:
        claim = next(c for c in response.claims if c.claim_id == floor.claim_id)
        why = _WHY.get(floor.label, f"is {floor.label.value}")
        by_context = claim.contradicted_by == "context" if claim.dimensions is None else Dimension.C in claim.dimensions
        if floor.label == Label.CONTRADICTED and by_context:
            why += " by the retrieved context"
        return (f"{band} because {_claim_position(response, floor.claim_id)} (criticality {floor.criticality}) "
                f"{why}: the {floor.value:.2f} safety floor ({floor.description}) overrides the additive "
                f"{result.hri_add:.2f}. " + _action(result, response))
    weighted = sorted(((profile.weights[d] * result.dimensions[d], d) for d in DIMENSIONS), reverse=True)
    drivers = [f"{d.value} {DIMENSION_NAMES[d].lower()} ({value:.3f})" for value, d in weighted[:2] if value > 0]
    if not drivers:
        return f"{band} because every claim is supported (additive score 0). " + _action(result, response)
    return (f"{band} because the additive score {result.hri_add:.2f} is driven by " + " and ".join(drivers)
            + "; no safety floor set the score. " + _action(result, response))
