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
