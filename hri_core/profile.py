"""Scoring profiles: every number the HRI uses (weights, contributions, floors, bands, decay).

A profile is the single home of the paper's *provisional design parameters*. Code never holds a
weight or a threshold of its own: the scorer, the register's SQL scorer and the pages all read them
from a ``ScoringProfile``. ``default_profile()`` returns the paper's values (Tables III, IV, VI and
DOMAIN.md section 3); ``profile_from_dict`` applies a partial override (``{"weights": {...}}``) on top
of the defaults and validates the result, naming every problem at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from .errors import FieldProblem, ProfileError
from .fingerprint import fingerprint as json_fingerprint
from .models import MAX_CRITICALITY, MAX_FEEDBACK_COUNT, problems_from_validation
from .vocabulary import DIMENSIONS, LABELS, Dimension, Label

WEIGHT_SUM_TOLERANCE = 1e-9
ACTIONS = ("release", "caution", "review", "block")  # in increasing severity
Action = Literal["release", "caution", "review", "block"]
ACTION_SEVERITY: dict[str, int] = {action: rank for rank, action in enumerate(ACTIONS)}
RELEASED_ACTIONS = ("release", "caution")  # the answer goes out without a person looking at it
REVIEW_ACTIONS = ("review", "block")  # a person looks first: the review queue
# A score is compared with the band bounds rounded to this many decimals (20.000000000000004 is 20, Low):
# ``band_for`` here and every band or bin computed from scores elsewhere (SQL, figures, calibration).
SCORE_DECIMALS = 9

# What a CONTRADICTED claim contradicted by the retrieved context hits when it names no dimensions
# (paper Table III: "(F), and (C) if contradicted by context").
CONTEXT_CONTRADICTION_DIMENSIONS: tuple[Dimension, ...] = (Dimension.F, Dimension.C)


def stricter_action(first: str, second: str) -> str:
    """The more severe of two actions (release < caution < review < block)."""
    return first if ACTION_SEVERITY[first] >= ACTION_SEVERITY[second] else second


class FloorRule(BaseModel):
    """A claim-level safety floor phi(c_i) (paper Table IV).

    Fires for a claim that carries ``label`` with ``min_criticality <= v_i <= max_criticality``.
    With ``condition="repeated_or_unresolved"`` (the feedback floor) it also needs the claim's
    feedback count >= ``min_feedback_count`` with its latest validation inside the profile's
    ``repeat_window_days``, or its feedback not marked resolved. A rule that reads feedback
    (``reads_feedback``) never fires on feedback validated after the scoring time.

    ``min_action`` (optional): when the rule fires, the response's action is at least this one,
    whatever band the score lands in (DOMAIN.md: "Floors may carry a minimum action"; Table IV's
    rationale for the CONTRADICTED v = 2 floor is "Confirmed contradiction requiring review"). The
    band itself is not changed: only the action is raised. Left out of dumps when None, so a profile
    without minimum actions keeps its canonical JSON and fingerprint.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule_id: str = Field(min_length=1)
    label: Label
    # bounded like the claims they read: a rule no claim can meet is a typo, and the SQL scorer binds them
    min_criticality: int = Field(default=1, ge=1, le=MAX_CRITICALITY)
    max_criticality: int | None = Field(default=None, ge=1, le=MAX_CRITICALITY)
    condition: Literal["criticality", "repeated_or_unresolved"] = "criticality"
    min_feedback_count: int = Field(default=2, ge=1, le=MAX_FEEDBACK_COUNT)
    value: float = Field(ge=0.0, le=1.0)
    min_action: Action | None = None

    @model_validator(mode="after")
    def _range(self) -> FloorRule:
        if self.max_criticality is not None and self.max_criticality < self.min_criticality:
            raise ValueError("max_criticality: must be >= min_criticality")
        return self

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("min_action", "") is None:
            del data["min_action"]
        return data

    @property
    def reads_feedback(self) -> bool:
        """Whether firing depends on the claim's feedback fields (its time, count or resolution), not only
        on its labels and criticality: the repeated-or-unresolved condition, or a floor on
        VALIDATED_NEGATIVE_FEEDBACK, which counts only once the feedback was validated."""
        return self.condition == "repeated_or_unresolved" or self.label == Label.VALIDATED_NEGATIVE_FEEDBACK

    def describe(self) -> str:
        """Human wording of the condition, e.g. ``CONTRADICTED with criticality >= 3``."""
        if self.condition == "repeated_or_unresolved":
            return f"{self.label.value} repeated (count >= {self.min_feedback_count} in the window) or unresolved"
        if self.max_criticality == self.min_criticality:
            crit = f"criticality = {self.min_criticality}"
        elif self.max_criticality is None:
            crit = f"criticality >= {self.min_criticality}"
        else:
            crit = f"criticality {self.min_criticality}-{self.max_criticality}"
        return f"{self.label.value} with {crit}"


class Band(BaseModel):
    """A risk band: scores up to ``upper`` (inclusive, on the 0-100 scale) get ``name`` and ``action``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    upper: float = Field(ge=0.0, le=100.0)
    action: Action


def _default_contributions() -> dict[Label, float]:
    return {
        Label.SUPPORTED: 0.0,
        Label.PARTIAL: 0.5,
        Label.UNSUPPORTED: 0.75,
        Label.CONTRADICTED: 1.0,
        Label.OUTDATED: 0.75,
        Label.OUT_OF_SCOPE: 0.75,
        Label.ACCESS_GAP: 0.6,
        Label.VALIDATED_NEGATIVE_FEEDBACK: 1.0,
    }


def _default_dimensions() -> dict[Label, tuple[Dimension, ...]]:
    return {
        Label.SUPPORTED: (),
        Label.PARTIAL: (Dimension.U,),
        Label.UNSUPPORTED: (Dimension.U,),
        Label.CONTRADICTED: (Dimension.F,),
        Label.OUTDATED: (Dimension.O,),
        Label.OUT_OF_SCOPE: (Dimension.S,),
        Label.ACCESS_GAP: (Dimension.P,),
        Label.VALIDATED_NEGATIVE_FEEDBACK: (Dimension.H,),
    }


def _default_floors() -> tuple[FloorRule, ...]:
    return (
        FloorRule(rule_id="contradicted-high", label=Label.CONTRADICTED, min_criticality=3, value=0.70),
        FloorRule(rule_id="contradicted-medium", label=Label.CONTRADICTED, min_criticality=2,
                  max_criticality=2, value=0.50),
        FloorRule(rule_id="access-gap-high", label=Label.ACCESS_GAP, min_criticality=3, value=0.55),
        FloorRule(rule_id="out-of-scope-high", label=Label.OUT_OF_SCOPE, min_criticality=3, value=0.55),
        FloorRule(rule_id="feedback-repeated-or-unresolved", label=Label.VALIDATED_NEGATIVE_FEEDBACK,
                  condition="repeated_or_unresolved", min_feedback_count=2, value=0.50),
    )


def _default_bands() -> tuple[Band, ...]:
    return (
        Band(name="Low", upper=20, action="release"),
        Band(name="Medium", upper=50, action="caution"),
        Band(name="High", upper=75, action="review"),
        Band(name="Critical", upper=100, action="block"),
    )


class ScoringProfile(BaseModel):
    """The versioned set of parameters that turns claim labels into an HRI score."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "paper-provisional"
    version: int = Field(default=1, ge=1)
    weights: dict[Dimension, float] = Field(
        default_factory=lambda: {
            Dimension.F: 0.25, Dimension.C: 0.20, Dimension.U: 0.15, Dimension.O: 0.10,
            Dimension.S: 0.10, Dimension.P: 0.10, Dimension.H: 0.10,
        }
    )
    contributions: dict[Label, float] = Field(default_factory=_default_contributions)
    default_dimensions: dict[Label, tuple[Dimension, ...]] = Field(default_factory=_default_dimensions)
    floors: tuple[FloorRule, ...] = Field(default_factory=_default_floors)
    bands: tuple[Band, ...] = Field(default_factory=_default_bands)
    feedback_half_life_days: float = Field(default=30.0, gt=0.0)
    # How far back the feedback floor's "repeated" looks (days): resolved feedback validated longer ago
    # stops firing it. None means twice the half-life (``repeat_window_days``). Left out of dumps when
    # None, so profiles stored before it existed keep their fingerprint.
    feedback_repeat_window_days: float | None = Field(default=None, gt=0.0, allow_inf_nan=False)
    # A response with no claims cannot be judged: it is flagged and routed here, never silently released.
    no_claims_action: Action = "review"
    # Default dimensions of the CONTRADICTED label on a claim with contradicted_by = "context" (and no
    # explicit dimensions). Set it to default_dimensions' CONTRADICTED value to turn the rule off.
    # Left out of dumps at its default, so profiles stored before it existed keep their fingerprint.
    context_contradiction_dimensions: tuple[Dimension, ...] = CONTEXT_CONTRADICTION_DIMENSIONS

    @field_validator("context_contradiction_dimensions", mode="before")
    @classmethod
    def _dimension_tokens(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [v.strip().upper() if isinstance(v, str) else v for v in value]
        return value

    @field_validator("context_contradiction_dimensions")
    @classmethod
    def _distinct_context_dimensions(cls, value: tuple[Dimension, ...]) -> tuple[Dimension, ...]:
        if not value:
            raise ValueError("must name at least one dimension (CONTRADICTED always counts somewhere)")
        return tuple(dict.fromkeys(value))

    @model_serializer(mode="wrap")
    def _serialise(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("feedback_repeat_window_days", 0) is None:
            del data["feedback_repeat_window_days"]
        if "context_contradiction_dimensions" in data and \
                self.context_contradiction_dimensions == CONTEXT_CONTRADICTION_DIMENSIONS:
            del data["context_contradiction_dimensions"]
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ScoringProfile:
        problems: list[str] = []
        missing = [d.value for d in DIMENSIONS if d not in self.weights]
        if missing:
            problems.append(f"weights: missing dimension(s) {', '.join(missing)}")
        for dim, weight in self.weights.items():
            if not (weight >= 0.0) or math.isinf(weight):
                problems.append(f"weights.{dim.value}: must be a finite number >= 0, got {weight}")
        total = math.fsum(self.weights.values())
        if not missing and abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
            problems.append(f"weights: must sum to 1 (tolerance {WEIGHT_SUM_TOLERANCE:g}), got {total:.12g}")
        for label in LABELS:
            if label not in self.contributions:
                problems.append(f"contributions.{label.value}: missing")
            elif not (0.0 <= self.contributions[label] <= 1.0):
                problems.append(f"contributions.{label.value}: must be in [0, 1], got {self.contributions[label]}")
            if label not in self.default_dimensions:
                problems.append(f"default_dimensions.{label.value}: missing")
        ids = [f.rule_id for f in self.floors]
        for i, rule_id in enumerate(ids):
            if ids.index(rule_id) != i:
                problems.append(f"floors[{i}].rule_id: duplicate rule id {rule_id!r}")
        if not self.bands:
            problems.append("bands: at least one band is required")
        else:
            uppers = [b.upper for b in self.bands]
            for i in range(1, len(uppers)):
                if uppers[i] <= uppers[i - 1]:
                    problems.append(f"bands[{i}].upper: must be greater than bands[{i - 1}].upper ({uppers[i - 1]})")
            if uppers[-1] != 100:
                problems.append(f"bands[{len(uppers) - 1}].upper: the last band must end at 100 to cover 0-100")
            names = [b.name for b in self.bands]
            for i, name in enumerate(names):
                if names.index(name) != i:
                    problems.append(f"bands[{i}].name: duplicate band name {name!r}")
        if problems:
            raise ValueError(" | ".join(problems))
        return self

    # --- derived values -------------------------------------------------------------------

    @property
    def decay_lambda(self) -> float:
        """Decay rate per day: ln 2 / half-life."""
        return math.log(2) / self.feedback_half_life_days

    @property
    def repeat_window_days(self) -> float:
        """The feedback floor's window in days: ``feedback_repeat_window_days``, else twice the half-life
        (feedback decayed to a quarter no longer counts as a repetition)."""
        if self.feedback_repeat_window_days is not None:
            return self.feedback_repeat_window_days
        return 2.0 * self.feedback_half_life_days

    def band_for(self, score: float) -> Band:
        """Band of a 0-100 score. Bounds are inclusive and compared at 9 decimals (20.000000000000004 is Low)."""
        return band_of(score, self.bands)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form (the format of profile files and of the register's profile rows)."""
        return self.model_dump(mode="json")

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON of the parameters (name and version excluded)."""
        payload = self.model_dump(mode="json", exclude={"name", "version"})
        return json_fingerprint(payload)


def band_of(score: float, bands: Sequence[Band]) -> Band:
    """The band of a 0-100 score among ``bands`` (uppers ascending, as a profile's): the first whose inclusive
    upper bound the score rounded to ``SCORE_DECIMALS`` does not exceed; the last one beyond them all."""
    rounded = round(score, SCORE_DECIMALS)
    for band in bands:
        if rounded <= band.upper:
            return band
    return bands[-1]


def default_profile() -> ScoringProfile:
    """The paper's provisional parameters (Tables III, IV, VI; default weights of DOMAIN.md)."""
    return ScoringProfile()


# Table IV's floors whose rationale asks for review: "Confirmed contradiction requiring review"
# (CONTRADICTED, v = 2) and "Confirmed unresolved feedback indicates persistent system risk"
# (repeated or unresolved VALIDATED_NEGATIVE_FEEDBACK, the floor issue 12 routes to review too).
REVIEW_FLOOR_IDS: tuple[str, ...] = ("contradicted-medium", "feedback-repeated-or-unresolved")


def recommended_profile() -> ScoringProfile:
    """The paper's parameters with Table IV's review rationale made operational.

    Identical to ``default_profile()`` except that the floors ``REVIEW_FLOOR_IDS`` carry
    ``min_action="review"``: a CONTRADICTED claim of criticality 2 scores 50 (Medium, "caution")
    under the default profile, yet Table IV calls it a "Confirmed contradiction requiring review";
    here it routes its answer to review. Named like the default (same paper) with version 2; the
    register numbers stored versions itself.
    """
    base = default_profile()
    floors = tuple(rule.model_copy(update={"min_action": "review"}) if rule.rule_id in REVIEW_FLOOR_IDS else rule
                   for rule in base.floors)
    return base.model_copy(update={"floors": floors, "version": 2})


# What a stored score row determines on its own: its dimension scores s_k, whether it failed closed or had
# no claims, and its fired floors (value, rule id) do not depend on these fields, so a profile differing
# from the one that scored it only here scores it exactly from those columns (``hri = max(min(1, sum_k
# w_k s_k), phi)``, then band, band action, no-claims action and the fired floors' minimum actions).
# Name and version are labels, not parameters. Every other field -- contributions, default dimensions,
# floors (values, conditions, minimum actions, order), decay, context-contradiction dimensions, and any
# field added later -- changes what the claims add up to and needs a rescore.
RECOMPUTABLE_FIELDS: frozenset[str] = frozenset({"weights", "bands", "no_claims_action"})
_LABEL_FIELDS = frozenset({"name", "version"})


def rescore_fields(draft: ScoringProfile, base: ScoringProfile) -> tuple[str, ...]:
    """The fields in which ``draft`` differs from ``base`` that stored score rows cannot absorb.

    Empty when ``draft`` differs from ``base`` only in ``RECOMPUTABLE_FIELDS`` (weights, band bounds,
    names and actions, the no-claims action) or its name and version: then every score ``base``
    produced can be turned into ``draft``'s exactly from the stored dimension scores and fired floors,
    without reading the claims. Otherwise the names of the other differing fields, in field order
    (e.g. ``("contributions", "floors")``): a full rescore is needed.
    """
    ignored = RECOMPUTABLE_FIELDS | _LABEL_FIELDS
    # the validated values themselves (not dumps, which leave some fields out at their defaults)
    return tuple(name for name in ScoringProfile.model_fields
                 if name not in ignored and getattr(draft, name) != getattr(base, name))


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key (so ``{"weights": {"F": 0.3, "C": 0.15}}`` keeps U..H); lists replace."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def profile_from_dict(data: dict[str, Any], base: ScoringProfile | None = None) -> ScoringProfile:
    """Build a profile from a (possibly partial) mapping laid over ``base`` (default: the paper's).

    Raises ``ProfileError`` listing every problem, each with its field path.
    """
    if not isinstance(data, dict):
        raise ProfileError(f"a profile must be a JSON object, got {type(data).__name__}")
    problems = [FieldProblem(k, "unknown profile field") for k in sorted(set(data) - set(ScoringProfile.model_fields))]
    base_dict = (base or default_profile()).to_dict()
    merged = _merge(base_dict, {k: v for k, v in data.items() if k in ScoringProfile.model_fields})
    try:
        profile = ScoringProfile.model_validate(merged)
    except ValidationError as error:
        problems += problems_from_validation(error)
        # pydantic skips the cross-field checks once any field fails; run them again with the base's
        # (valid) values standing in for the failed fields, so every problem is named at once.
        failed = {item["loc"][0] for item in error.errors() if item["loc"]}
        if failed:
            try:
                # a failed field the base leaves out of its dump (at its default) is simply dropped
                ScoringProfile.model_validate({k: base_dict[k] if k in failed else v for k, v in merged.items()
                                               if k not in failed or k in base_dict})
            except ValidationError as second:
                problems += problems_from_validation(second)
        raise ProfileError(problems) from error
    if problems:
        raise ProfileError(problems)
    return profile
