"""The labelling rubric as versioned data: what each label means, what each claim category demands.

The paper makes the rubric the reference of its labels: "the contribution m_ik is assigned according
to a labeling rubric" (section V) and checklist item 7 asks that "Claim labels, criticality weights,
and safety floors are reproducible from the documented rubric" (Table IX). A ``Rubric`` holds:

* per label (all eight, once each): a definition paraphrasing the paper, the paper's own words
  (``paper``, quoted from Tables II-IV and section V), examples, and the default dimensions, which
  must equal the scoring profile's (``profile_mismatches`` says where they differ);
* ``context_contradiction_dimensions``: where a CONTRADICTED claim contradicted by the retrieved
  context counts (Table III: "(F), and (C) if contradicted by context"), also the profile's;
* a criticality scale (v_i: 1 by default; "Higher values of v_i should be reserved for claims with
  higher operational consequence, such as legal, financial, safety, contractual, or compliance-critical
  claims", section V);
* per claim category (all ten, once each; ``vocabulary.CATEGORIES``): a description, whether it is
  critical information (seed 003: "legal, financial, safety, health, security, eligibility, or
  discrimination / bias risk"), a suggested criticality and an optional *minimum* criticality; a claim
  of that category labelled with a lower criticality is flagged by ``criticality_flags``;
* ``min_agreement_alpha``: the inter-annotator agreement (Krippendorff's alpha) below which labels
  made under this rubric are not trusted (checklist item 7; 0.667 is Krippendorff's lowest
  "tentative conclusions" level).

The shipped version 1 is ``data/rubrics/default.json`` (``DEFAULT_RUBRIC_FILE``, relative to the
repository root); the register reads it (this package does no I/O) and validates it with
``rubric_from_dict``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import FieldProblem, HRIError
from .fingerprint import fingerprint as json_fingerprint
from .models import Category, Response, problems_from_validation
from .profile import ScoringProfile
from .vocabulary import CATEGORIES, LABELS, Dimension, Label

__all__ = [
    "DEFAULT_RUBRIC_FILE", "CategoryGuide", "CriticalityFlag", "LabelGuide", "Rubric", "RubricError",
    "criticality_flags", "profile_mismatches", "rubric_from_dict",
]

DEFAULT_RUBRIC_FILE = "data/rubrics/default.json"  # relative to the repository root


class RubricError(HRIError):
    """A labelling rubric is invalid."""

    title = "Invalid labelling rubric"


def _dimension_tokens(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [v.strip().upper() if isinstance(v, str) else v for v in value]
    return value


class LabelGuide(BaseModel):
    """One label: its definition, the paper's words, examples, default dimensions."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    label: Label
    definition: str = Field(min_length=1)
    paper: str = Field(min_length=1)
    examples: tuple[str, ...] = ()
    default_dimensions: tuple[Dimension, ...]

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("default_dimensions", mode="before")
    @classmethod
    def _dimensions(cls, value: Any) -> Any:
        return _dimension_tokens(value)


class CategoryGuide(BaseModel):
    """One claim category: what it covers, how critical it is, the least criticality it may carry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: Category
    description: str = Field(min_length=1)
    critical_information: bool
    suggested_criticality: int = Field(ge=1)
    min_criticality: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _order(self) -> CategoryGuide:
        if self.min_criticality is not None and self.suggested_criticality < self.min_criticality:
            raise ValueError("suggested_criticality: must be >= min_criticality")
        return self


class Rubric(BaseModel):
    """The versioned labelling rubric (module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    version: int = Field(ge=1)
    sources: tuple[str, ...] = ()
    criticality_scale: dict[int, str]
    labels: tuple[LabelGuide, ...]
    context_contradiction_dimensions: tuple[Dimension, ...]
    categories: tuple[CategoryGuide, ...]
    min_agreement_alpha: float | None = Field(default=None, ge=-1.0, le=1.0)

    @field_validator("context_contradiction_dimensions", mode="before")
    @classmethod
    def _dimensions(cls, value: Any) -> Any:
        return _dimension_tokens(value)

    @model_validator(mode="after")
    def _complete(self) -> Rubric:
        problems = []
        seen_labels = [guide.label for guide in self.labels]
        for index, label in enumerate(seen_labels):
            if seen_labels.index(label) != index:
                problems.append(f"labels[{index}].label: {label.value} is described twice")
        missing = [label.value for label in LABELS if label not in seen_labels]
        if missing:
            problems.append(f"labels: missing {', '.join(missing)}")
        seen = [guide.category for guide in self.categories]
        for index, category in enumerate(seen):
            if seen.index(category) != index:
                problems.append(f"categories[{index}].category: {category} is described twice")
        absent = [category for category in CATEGORIES if category not in seen]
        if absent:
            problems.append(f"categories: missing {', '.join(absent)}")
        if 1 not in self.criticality_scale:
            problems.append("criticality_scale: must describe criticality 1 (the default)")
        if problems:
            raise ValueError(" | ".join(problems))
        return self

    def label_guide(self, label: Label | str) -> LabelGuide:
        """The guide of one label."""
        wanted = Label(label)
        return next(guide for guide in self.labels if guide.label == wanted)

    def category_guide(self, category: str) -> CategoryGuide:
        """The guide of one category (``KeyError`` for a category outside the vocabulary)."""
        for guide in self.categories:
            if guide.category == category:
                return guide
        raise KeyError(category)

    def fingerprint(self) -> str:
        """SHA-256 of the canonical JSON (name and version excluded): what a checklist sign-off binds to."""
        payload = self.model_dump(mode="json", exclude={"name", "version"})
        return json_fingerprint(payload)


def rubric_from_dict(data: Any) -> Rubric:
    """Validate a rubric from its JSON form; ``RubricError`` names every bad field (``labels[2].paper``)."""
    if not isinstance(data, dict):
        raise RubricError(f"a rubric must be a JSON object, got {type(data).__name__}")
    try:
        return Rubric.model_validate(data)
    except ValidationError as error:
        raise RubricError(problems_from_validation(error)) from error


def profile_mismatches(rubric: Rubric, profile: ScoringProfile) -> list[FieldProblem]:
    """Where the rubric's default dimensions disagree with the scoring profile's (empty: they agree).

    Labels are scored with the profile's dimensions, so a rubric that says otherwise would make
    annotators label for a score that is not computed (checklist item 7).
    """
    problems = []
    for index, guide in enumerate(rubric.labels):
        expected = profile.default_dimensions[guide.label]
        if set(guide.default_dimensions) != set(expected):
            problems.append(FieldProblem(
                f"labels[{index}].default_dimensions",
                f"{guide.label.value}: rubric says {_dims(guide.default_dimensions)}, profile "
                f"{profile.name} v{profile.version} says {_dims(expected)}"))
    if set(rubric.context_contradiction_dimensions) != set(profile.context_contradiction_dimensions):
        problems.append(FieldProblem(
            "context_contradiction_dimensions",
            f"rubric says {_dims(rubric.context_contradiction_dimensions)}, profile {profile.name} "
            f"v{profile.version} says {_dims(profile.context_contradiction_dimensions)}"))
    return problems


def _dims(dimensions: tuple[Dimension, ...]) -> str:
    return ",".join(d.value for d in dimensions) or "none"


class CriticalityFlag(BaseModel):
    """A claim whose criticality is below its category's minimum in the rubric."""

    model_config = ConfigDict(frozen=True)

    response_id: str
    claim_id: str
    category: str
    criticality: int
    min_criticality: int
    rubric_version: int
    message: str


def criticality_flags(response: Response, rubric: Rubric) -> tuple[CriticalityFlag, ...]:
    """Claims of ``response`` labelled below their category's minimum criticality, in claim order.

    A claim without a category, or of a category without a minimum, is never flagged (the rubric
    cannot say what it should be).
    """
    minimum = {guide.category: guide.min_criticality for guide in rubric.categories}
    flags = []
    for claim in response.claims:
        least = minimum.get(claim.category) if claim.category is not None else None
        if least is not None and claim.criticality < least:
            flags.append(CriticalityFlag(
                response_id=response.response_id, claim_id=claim.claim_id or "", category=claim.category or "",
                criticality=claim.criticality, min_criticality=least, rubric_version=rubric.version,
                message=f"a {claim.category} claim has criticality {claim.criticality}; rubric v{rubric.version} "
                        f"requires at least {least}"))
    return tuple(flags)
