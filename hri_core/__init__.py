"""hri_core: the pure computation of the Hallucination Risk Index.

No I/O, no database, no UI: models, profiles, scoring, floors, bands and feedback decay. The register
and the pages call these functions; the bulk SQL scorer is held to the same numbers by tests.
"""

from .errors import FieldProblem, HRIError, ProfileError, RecordError
from .feedback import decay_factor, scope_feedback_score
from .models import Claim, Response, parse_response
from .profile import Band, FloorRule, ScoringProfile, default_profile, profile_from_dict, recommended_profile
from .scoring import ClaimScore, FiredFloor, ScoreResult, score_response
from .vocabulary import DIMENSIONS, LABELS, Dimension, Label

__all__ = [
    "Band", "Claim", "ClaimScore", "DIMENSIONS", "Dimension", "FieldProblem", "FiredFloor", "FloorRule",
    "HRIError", "LABELS", "Label", "ProfileError", "RecordError", "Response", "ScoreResult",
    "ScoringProfile", "decay_factor", "default_profile", "parse_response", "profile_from_dict",
    "recommended_profile", "scope_feedback_score", "score_response",
]
