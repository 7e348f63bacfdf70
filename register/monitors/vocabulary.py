"""The figures a monitor may watch, by name: what each is, its unit and the range of its thresholds.

Kept apart from ``register.monitors.figures`` (which reads them, through the console's queries) so that the command
line's parser names them without loading pandas or the queries.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FIGURES", "S_H_WINDOW_DAYS", "Figure"]

# the Feedback page's default evaluation window (ui.features.feedback.DEFAULT_WINDOW), days
S_H_WINDOW_DAYS = 30


@dataclass(frozen=True)
class Figure:
    """A figure a monitor may watch: its name, what it is in words, its unit (``share``: 0 to 1; ``count``; ``score``:
    s_H, 0 to 1) and the range a threshold on it must lie in."""

    name: str
    title: str
    unit: str
    threshold_max: float | None  # a threshold must be below this (None: no bound); every threshold is >= 0


FIGURES: dict[str, Figure] = {f.name: f for f in (
    Figure("high_critical_share", "High + Critical share of current answers", "share", 1.0),
    Figure("scope_s_h", f"highest scope-level s_H (validated feedback, {S_H_WINDOW_DAYS}-day window)", "score", 1.0),
    Figure("authority_failing_answers", "answers failing Authority", "count", None),
    Figure("authority_failing_share", "share of current answers failing Authority", "share", 1.0),
    Figure("critical_hallucinated_claims", "critical-information claims labelled hallucinated", "count", None),
    Figure("critical_hallucination_share", "share of critical-information claims labelled hallucinated", "share",
           1.0),
)}


