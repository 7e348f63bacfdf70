"""Which machine verdicts may set a claim's label without a person: the judge policy (versioned data, off by default).

Every verdict a judge gives is a *proposal*. A person confirms or rejects it, unless the active policy has a
rule that allows it: a rule names the judge profiles (``name`` or ``name@version``), the labels, the least
confidence, the claim categories, the stakes and the highest criticality it covers. A verdict is applied
only when one rule covers all of these; an abstention ("needs review") never is. With no policy, or a policy
without rules, nothing is applied: that is the default.

Two things no policy can allow (``JudgePolicy`` refuses a rule that would): an offline judge (backend
``offline-*``) clearing a claim (SUPPORTED) of a critical-information category or of high or critical stakes,
because word overlap cannot see a contradiction; and any rule without an explicit list of categories and
stakes (a policy says what it covers, it never covers "everything" by omission).

Pure: pydantic only. Callers: ``register.verify.policy`` (versions in the ``judge_policies`` table) and the
verification pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import HRIError
from .judging import JUDGE_LABELS
from .models import problems_from_validation
from .vocabulary import CATEGORIES, CRITICAL_INFORMATION_CATEGORIES, STAKES, Label

__all__ = ["HIGH_STAKES", "JudgePolicy", "JudgePolicyError", "PolicyRule", "judge_policy_from_dict",
           "offline_may_clear"]

HIGH_STAKES = frozenset({"high", "critical"})
OFFLINE_BACKEND_PREFIX = "offline-"


class JudgePolicyError(HRIError):
    """A judge policy is invalid."""

    title = "Invalid judge policy"


def offline_may_clear(category: str | None, stakes: str | None) -> bool:
    """Whether an offline judge may clear a claim at all: not of a critical category, not at high stakes."""
    return category not in CRITICAL_INFORMATION_CATEGORIES and stakes not in HIGH_STAKES


class PolicyRule(BaseModel):
    """One permission: these judges, these labels, from this confidence, for these categories and stakes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    profiles: tuple[str, ...] = Field(min_length=1)       # "offline-default" or "offline-default@1"
    backends: tuple[str, ...] = Field(min_length=1)       # the backends those profiles run on
    labels: tuple[Label, ...] = Field(min_length=1)
    min_confidence: float = Field(ge=0.5, le=1.0)
    categories: tuple[str, ...] = Field(min_length=1)     # "general" covers claims without a category
    stakes: tuple[str, ...] = Field(min_length=1)         # "unknown" covers responses without stakes
    max_criticality: int = Field(1, ge=1, le=5)

    @field_validator("labels")
    @classmethod
    def _judge_labels(cls, value: tuple[Label, ...]) -> tuple[Label, ...]:
        if any(label not in JUDGE_LABELS for label in value):
            raise ValueError(f"a judge sets only {', '.join(label.value for label in JUDGE_LABELS)}")
        return value

    @field_validator("categories")
    @classmethod
    def _categories(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in CATEGORIES]
        if unknown:
            raise ValueError(f"unknown categories {', '.join(unknown)}; known: {', '.join(CATEGORIES)}")
        return value

    @field_validator("stakes")
    @classmethod
    def _stakes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [s for s in value if s not in (*STAKES, "unknown")]
        if unknown:
            raise ValueError(f"unknown stakes {', '.join(unknown)}; known: {', '.join(STAKES)}, unknown")
        return value

    @model_validator(mode="after")
    def _offline_never_clears_critical(self) -> PolicyRule:
        offline = any(b.startswith(OFFLINE_BACKEND_PREFIX) for b in self.backends)
        if offline and Label.SUPPORTED in self.labels:
            critical = [c for c in self.categories if c in CRITICAL_INFORMATION_CATEGORIES]
            high = [s for s in self.stakes if s in HIGH_STAKES]
            if critical or high:
                raise ValueError("an offline judge may never clear (SUPPORTED) claims of critical categories "
                                 f"or high stakes: remove {', '.join(critical + high)}")
        return self

    def covers(self, *, profile: str, backend: str, label: Label, confidence: float, category: str | None,
               stakes: str | None, criticality: int) -> bool:
        """Whether this rule allows the verdict to be applied."""
        name = profile.split("@", 1)[0]
        return ((profile in self.profiles or name in self.profiles) and backend in self.backends
                and label in self.labels and confidence >= self.min_confidence
                and (category or "general") in self.categories and (stakes or "unknown") in self.stakes
                and criticality <= self.max_criticality
                and (not backend.startswith(OFFLINE_BACKEND_PREFIX) or label is not Label.SUPPORTED
                     or offline_may_clear(category, stakes)))


class JudgePolicy(BaseModel):
    """A versioned judge policy (see the module docstring); no rules = every verdict waits for a person."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1)
    description: str = ""
    rules: tuple[PolicyRule, ...] = ()

    def allows(self, *, profile: str, backend: str, label: Label | None, confidence: float, category: str | None,
               stakes: str | None, criticality: int) -> int | None:
        """The index of the first rule that applies the verdict, or None (a proposal for a person)."""
        if label is None:
            return None
        for index, rule in enumerate(self.rules):
            if rule.covers(profile=profile, backend=backend, label=label, confidence=confidence, category=category,
                           stakes=stakes, criticality=criticality):
                return index
        return None


def judge_policy_from_dict(data: Mapping[str, Any]) -> JudgePolicy:
    """Validate a decoded policy, naming every offending field."""
    try:
        return JudgePolicy.model_validate(dict(data))
    except ValidationError as error:
        raise JudgePolicyError(problems_from_validation(error), record=f"policy v{data.get('version')}") from error
