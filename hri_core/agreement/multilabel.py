"""Multi-label claims (a claim may carry several HRI labels): ``multilabel_agreement`` gives alpha per
label as a present/absent judgement, and alpha on each rater's *worst* label, worst by a severity
order passed in (``severity_from_contributions`` derives one from a profile's contributions).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import FieldProblem
from .alpha import AlphaResult, krippendorff_alpha
from .ratings import AgreementError, Level, Rating

__all__ = ["MultiLabelAgreement", "multilabel_agreement", "severity_from_contributions"]

# Per-label judgements of a multi-label claim are nominal present/absent values.
PRESENT, ABSENT = "present", "absent"


@dataclass(frozen=True)
class MultiLabelAgreement:
    """Alpha per label (present/absent, nominal) and alpha on each rater's worst label."""

    per_label: dict[str, AlphaResult]
    worst: AlphaResult
    severity: tuple[str, ...]


# --- multi-label claims --------------------------------------------------------------------------------


def severity_from_contributions(contributions: Mapping[str, float]) -> tuple[str, ...]:
    """Labels from most to least severe by their contribution (e.g. a profile's ``contributions``);
    ties keep the mapping's order (CONTRADICTED before VALIDATED_NEGATIVE_FEEDBACK in the paper's)."""
    names = list(contributions)
    return tuple(sorted(names, key=lambda name: (-contributions[name], names.index(name))))


def multilabel_agreement(ratings: Iterable[tuple[str, str, Collection[str]]], severity: Sequence[str], *,
                         labels: Sequence[str] | None = None, worst_level: Level = "nominal") -> MultiLabelAgreement:
    """Agreement on multi-label claims: ``ratings`` are ``(unit, rater, labels)`` with one or more labels.

    Per label in ``labels`` (default ``severity``): alpha of the present/absent judgement (nominal).
    Worst label: each rater's most severe label, by ``severity`` listed from most to least severe;
    alpha at ``worst_level`` (``"nominal"``, or ``"ordinal"`` along the severity order). Every label
    given must be in ``severity``; an empty label set is an error (a claim has at least one label).
    """
    severity = tuple(severity)
    rank = {label: i for i, label in enumerate(severity)}
    wanted = tuple(labels) if labels is not None else severity
    problems: list[FieldProblem] = []
    sets: list[tuple[str, str, frozenset[str]]] = []
    for unit, rater, given in ratings:
        where = f"unit {unit!r}, rater {rater!r}"
        chosen = frozenset([given] if isinstance(given, str) else given)  # one label given as a bare string
        if not chosen:
            problems.append(FieldProblem(where, "no label (a claim carries at least one)"))
        unknown = sorted(chosen - set(rank))
        if unknown:
            problems.append(FieldProblem(where, f"label(s) {', '.join(unknown)} not in the severity order"))
        sets.append((unit, rater, chosen))
    if problems:
        raise AgreementError(problems)
    per_label = {label: krippendorff_alpha([Rating(u, r, PRESENT if label in s else ABSENT) for u, r, s in sets])
                 for label in wanted}
    worst = [Rating(u, r, min(s, key=rank.__getitem__)) for u, r, s in sets]
    if worst_level not in ("nominal", "ordinal"):
        raise AgreementError([FieldProblem("worst_level", "must be nominal or ordinal (labels are categories)")])
    # ordinal ranks run lowest first: reverse the most-severe-first order
    order = tuple(reversed(severity)) if worst_level == "ordinal" else None
    return MultiLabelAgreement(per_label, krippendorff_alpha(worst, worst_level, order=order), severity)
