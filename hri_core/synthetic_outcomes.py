"""Synthetic outcomes drawn from known weights: the ground truth the outcome fit is tested against.

``outcome_records(n, weights, seed)`` takes ``n`` synthetic responses (``hri_core.synthetic``), scores them
with ``profile`` at ``as_of`` and draws each one's outcome from

    P(harmful) = logistic(intercept + slope * sum_k weights_k s_k)

so that a fit of the weights should find ``weights`` again, within sampling error. Each record is an
interchange response plus ``"outcome": 0 | 1``: the input of ``python -m hri_core fit-weights``. Pure and
deterministic: the same arguments give the same records.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from random import Random
from typing import Any

from .models import parse_response
from .profile import ScoringProfile, default_profile
from .scoring import score_response
from .synthetic import generate_responses
from .vocabulary import DIMENSIONS

__all__ = ["SYNTHETIC_AS_OF", "outcome_records"]

SYNTHETIC_AS_OF = datetime(2027, 1, 1, tzinfo=UTC)  # after every synthetic response (they span 2026)


def outcome_records(n: int, weights: dict[str, float], seed: int = 0, *, slope: float = 25.0,
                    intercept: float = -3.0, profile: ScoringProfile | None = None,
                    as_of: datetime = SYNTHETIC_AS_OF) -> list[dict[str, Any]]:
    """``n`` synthetic responses, each with an outcome drawn from the logistic model of the module docstring."""
    profile = profile or default_profile()
    draw = Random(seed)
    out = []
    for record in generate_responses(n, seed=seed):
        result = score_response(parse_response(record), profile, as_of)
        risk = math.fsum(weights[d.value] * result.dimensions[d] for d in DIMENSIONS)
        probability = 1.0 / (1.0 + math.exp(-(intercept + slope * risk)))
        out.append({**record, "outcome": int(draw.random() < probability)})
    return out
