"""A CLAIM lens: which of CLAIM's steps run for a use case, and whether Mitigation hands its answers to a person.

Seed 004 calls CLAIM's steps "a lens, not a liturgy": "A casual internal search tool might run a cheap
Link-and-Inference pass and skip a formal Authority tier. A clinical decision-support tool runs all five with human
review wired into M by default". A lens names the steps that run, out of ``CLAIM_STEPS``:

* Scope: the answer's use case against the approved-use-case register (``hri_core.decision.scope_finding``);
* Link and Inference: the claims' labels and the evidence linked to them -- what the HRI score reads. They always run
  (``REQUIRED_STEPS``): without them there is no score to decide from;
* Authority: the claims' sources against the source register (``hri_core.authority``);
* Mitigation: seed 004's decision table (``hri_core.mitigation``); with ``human_review`` wired in, every answer is
  at least ``HUMAN_REVIEW_DECISION``.

A skipped step says nothing about the answer (its part of the decision is absent); it never lowers what the steps
that ran say: the decision is the most severe of the parts that ran (``hri_core.decision.decide_answer``). Pure:
no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from .profile import Action

__all__ = ["CLAIM_STEPS", "FULL_LENS", "HUMAN_REVIEW_DECISION", "REQUIRED_STEPS", "STEP_TITLES", "ClaimLens",
           "lens_problems", "steps_text"]

SCOPE, LINK, INFERENCE, AUTHORITY, MITIGATION = "scope", "link", "inference", "authority", "mitigation"
CLAIM_STEPS: tuple[str, ...] = (SCOPE, LINK, INFERENCE, AUTHORITY, MITIGATION)  # in the order they run
STEP_TITLES: dict[str, str] = {step: step.title() for step in CLAIM_STEPS}
REQUIRED_STEPS: tuple[str, ...] = (LINK, INFERENCE)  # the score is theirs
HUMAN_REVIEW_DECISION: Action = "review"  # human review wired into Mitigation: a person sees every answer


def lens_problems(steps: Iterable[str], human_review: bool) -> list[str]:
    """What is wrong with a lens of ``steps`` (and ``human_review``), in words; empty when it is a lens."""
    given = list(steps)
    problems = [f"{step!r} is not a CLAIM step; choose from {', '.join(CLAIM_STEPS)}"
                for step in given if step not in CLAIM_STEPS]
    problems += [f"the {step} step always runs: the score is the Link and Inference steps' result"
                 for step in REQUIRED_STEPS if step not in given]
    if human_review and MITIGATION not in given:
        problems.append("human review is wired into the Mitigation step: run Mitigation to wire it in")
    return problems


class ClaimLens(BaseModel):
    """The steps that run (a subset of ``CLAIM_STEPS``, kept in their order) and whether human review is wired into
    Mitigation. ``FULL_LENS`` (every step, no human review) is the default of a use case without a lens."""

    model_config = ConfigDict(frozen=True)

    steps: tuple[str, ...] = CLAIM_STEPS
    human_review: bool = False

    @field_validator("steps", mode="before")
    @classmethod
    def _ordered(cls, value: object) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else list(value)  # type: ignore[call-overload]
        unknown = [str(s) for s in items if s not in CLAIM_STEPS]
        if unknown:
            raise ValueError(f"not CLAIM steps: {', '.join(unknown)}; choose from {', '.join(CLAIM_STEPS)}")
        return tuple(step for step in CLAIM_STEPS if step in items)

    @model_validator(mode="after")
    def _complete(self) -> ClaimLens:
        problems = lens_problems(self.steps, self.human_review)
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def runs(self, step: str) -> bool:
        """Whether ``step`` (one of ``CLAIM_STEPS``) runs under this lens."""
        return step in self.steps


FULL_LENS = ClaimLens()


def steps_text(steps: Iterable[str] | None, human_review: bool | None) -> str:
    """The steps in words, for the response detail: "Scope, Link, Inference, Authority, Mitigation (human review)";
    ``steps`` None (a score written before lenses, or elsewhere): every step."""
    names = [STEP_TITLES[s] for s in (CLAIM_STEPS if steps is None else steps) if s in STEP_TITLES]
    text = ", ".join(names)
    return text + " (human review)" if human_review else text
