"""The one error family of hri_core.

Every error names *where* the problem is (a dotted field path, and a record or line when known),
so that a user can fix exactly that field. Callers that render errors (CLI, register, pages) use
``HRIError.as_dict()`` and never parse the message text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FieldProblem:
    """One problem with one field: ``loc`` is a dotted path such as ``claims[2].labels[0]``."""

    loc: str
    message: str

    def __str__(self) -> str:
        return f"{self.loc}: {self.message}" if self.loc else self.message


class HRIError(ValueError):
    """Base error of the package. Subclasses ValueError so generic callers can catch it."""

    title = "Invalid input"

    def __init__(self, problems: list[FieldProblem] | str, *, record: str | None = None):
        if isinstance(problems, str):
            problems = [FieldProblem("", problems)]
        self.problems: list[FieldProblem] = list(problems)
        self.record = record
        where = f"record {record}: " if record else ""
        super().__init__(where + "; ".join(str(p) for p in self.problems))

    def as_dict(self) -> dict[str, Any]:
        """Structured form used by every renderer (CLI stderr, quarantine reasons, pages)."""
        return {
            "error": type(self).__name__,
            "title": self.title,
            "record": self.record,
            "problems": [{"field": p.loc, "message": p.message} for p in self.problems],
        }


class RecordError(HRIError):
    """A response record in the interchange format is invalid."""

    title = "Invalid response record"


class ProfileError(HRIError):
    """A scoring profile is invalid (weights, contributions, floors, bands...)."""

    title = "Invalid scoring profile"


@dataclass
class ParseFailure:
    """A line or row that could not become a record, kept with its raw text and reasons."""

    line: int
    raw: str
    error: HRIError
    response_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
