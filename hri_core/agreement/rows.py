"""Ratings read from the rows of a CSV file with the columns ``unit, rater, value`` (``python -m hri_core
agreement``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import FieldProblem
from .ratings import AgreementError, Level, Rating, Value

__all__ = ["REQUIRED_COLUMNS", "ratings_from_rows"]

REQUIRED_COLUMNS: tuple[str, ...] = ("unit", "rater", "value")


def ratings_from_rows(header: Sequence[str] | None, rows: Iterable[tuple[int, Mapping[str | None, Any]]],
                      level: Level) -> tuple[list[Rating], list[str]]:
    """Ratings from CSV rows ``(row number, {column: text})`` with columns ``unit, rater, value``.

    Text is stripped; column names match case-insensitively; extra columns are ignored. Values stay strings
    at the nominal level and must be finite numbers at the others (ordinal ranks by numeric value). A
    row repeating an earlier (unit, rater) with the same value is dropped with a warning; with a
    different value it is an error.
    Returns ``(ratings, warnings)``; raises ``AgreementError`` listing every bad row and field
    (``loc`` is ``"row N: field"``, the header being row 1).
    """
    if header is None:
        expected = ", ".join(REQUIRED_COLUMNS)
        raise AgreementError([FieldProblem("header", f"empty file: expected the columns {expected}")])
    names = {(name or "").strip().lstrip("\ufeff").lower(): name for name in header}
    missing = [column for column in REQUIRED_COLUMNS if column not in names]
    if missing:
        raise AgreementError([FieldProblem("header", f"missing column(s) {', '.join(missing)} "
                                                     f"(found: {', '.join(str(n) for n in header)})")])
    ratings: list[Rating] = []
    warnings: list[str] = []
    problems: list[FieldProblem] = []
    first_seen: dict[tuple[str, str], tuple[int, Value, str]] = {}
    for number, row in rows:
        fields = {column: str(row.get(names[column]) or "").strip() for column in REQUIRED_COLUMNS}
        bad = [FieldProblem(f"row {number}: {column}", "empty value") for column in REQUIRED_COLUMNS
               if not fields[column]]
        value: Value = fields["value"]
        if not bad and level != "nominal":
            try:
                value = float(fields["value"])
            except ValueError:
                value = math.nan
            if not math.isfinite(value):
                bad.append(FieldProblem(f"row {number}: value",
                                        f"{fields['value']!r} is not a finite number ({level} level)"))
            elif level == "ratio" and value < 0:
                bad.append(FieldProblem(f"row {number}: value", f"{fields['value']!r} is negative (ratio level)"))
        if bad:
            problems.extend(bad)
            continue
        key = (fields["unit"], fields["rater"])
        if key in first_seen:
            earlier, earlier_value, earlier_text = first_seen[key]
            if earlier_value == value:
                warnings.append(f"row {number}: duplicate of row {earlier} (same unit, rater and value), counted once")
            else:
                problems.append(FieldProblem(
                    f"row {number}: value",
                    f"rater {key[1]!r} already rated unit {key[0]!r} as {earlier_text!r} in row {earlier}; "
                    f"conflicting value {fields['value']!r}"))
            continue
        first_seen[key] = (number, value, fields["value"])
        ratings.append(Rating(fields["unit"], fields["rater"], value))
    if problems:
        raise AgreementError(problems)
    return ratings, warnings
