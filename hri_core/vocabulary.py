"""Closed vocabularies of the HRI: claim labels and risk dimensions (paper Tables II and III)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum


class Label(StrEnum):
    """A claim's verdict after comparison with evidence and operational constraints."""

    SUPPORTED = "SUPPORTED"
    PARTIAL = "PARTIAL"
    UNSUPPORTED = "UNSUPPORTED"
    CONTRADICTED = "CONTRADICTED"
    OUTDATED = "OUTDATED"
    OUT_OF_SCOPE = "OUT_OF_SCOPE"
    ACCESS_GAP = "ACCESS_GAP"
    VALIDATED_NEGATIVE_FEEDBACK = "VALIDATED_NEGATIVE_FEEDBACK"


class Dimension(StrEnum):
    """The seven risk dimensions, in the paper's order (which is also the summation order)."""

    F = "F"  # factual inconsistency
    C = "C"  # context deviation
    U = "U"  # unsupportedness
    O = "O"  # obsolescence  # noqa: E741
    S = "S"  # scope mismatch
    P = "P"  # permission gap
    H = "H"  # validated human feedback


LABELS: tuple[Label, ...] = tuple(Label)
DIMENSIONS: tuple[Dimension, ...] = tuple(Dimension)

DIMENSION_NAMES: dict[Dimension, str] = {
    Dimension.F: "Factual inconsistency",
    Dimension.C: "Context deviation",
    Dimension.U: "Unsupportedness",
    Dimension.O: "Obsolescence",
    Dimension.S: "Scope mismatch",
    Dimension.P: "Permission gap",
    Dimension.H: "Validated human feedback",
}

# Bit position of each label and dimension: the register stores claims with bit masks so that
# the bulk scorer can test membership with integer arithmetic instead of unnesting lists.
LABEL_BIT: dict[Label, int] = {label: 1 << i for i, label in enumerate(LABELS)}
DIMENSION_BIT: dict[Dimension, int] = {dim: 1 << i for i, dim in enumerate(DIMENSIONS)}


def label_mask(labels: Iterable[Label | str]) -> int:
    """Bit mask of a collection of labels."""
    mask = 0
    for label in labels:
        mask |= LABEL_BIT[Label(label)]
    return mask


def dimension_mask(dimensions: Iterable[Dimension | str]) -> int:
    """Bit mask of a collection of dimensions."""
    mask = 0
    for dim in dimensions:
        mask |= DIMENSION_BIT[Dimension(dim)]
    return mask

# --- richer answers (DOMAIN.md section 4): stakes, claim categories, contradiction source ---------

# How costly a wrong answer is for the use case (the CLAIM paper's examples: an internal tool is low,
# a clinical or legal answer high). Mitigation reads it; the score does not.
STAKES: tuple[str, ...] = ("low", "medium", "high", "critical")

# What a claim is about, for the labelling rubric's criticality guide and the authority rules. The
# first seven are seed 003's critical-information categories ("legal, financial, safety, health,
# security, eligibility, or discrimination / bias risk"); contractual and compliance complete the
# paper's "higher operational consequence, such as legal, financial, safety, contractual, or
# compliance-critical claims" (section V); general is everything else.
CATEGORIES: tuple[str, ...] = ("legal", "financial", "safety", "health", "security", "eligibility",
                               "discrimination/bias", "contractual", "compliance", "general")
CRITICAL_INFORMATION_CATEGORIES: tuple[str, ...] = CATEGORIES[:7]

# Where a contradiction was found: in the retrieved/provided context (Table III: "(F), and (C) if
# contradicted by context") or only against the world (a reliable source or the target answer).
CONTRADICTED_BY: tuple[str, ...] = ("context", "world")

# RAGChecker's entailment verdicts (claim-level checks kept on imported records).
ENTAILMENT_LABELS: tuple[str, ...] = ("Entailment", "Neutral", "Contradiction")
