"""The pandera schema of a flat claim table (CSV, Parquet): column types and nulls, every failure kept.

Called by the flat-table reader (``register.ingest.readers``) once per window of rows, before the rows
are grouped into responses. It is lenient where pydantic is (never stricter: a value pydantic would
accept passes); its failures are mapped back to row numbers and become field problems of the record
holding that row (``claims[1].criticality: row 5: 'high' is not an integer >= 1``).
"""

from __future__ import annotations

import functools

__all__ = ["frame_problems"]

_BOOL_TEXT = ("0", "off", "f", "false", "n", "no", "1", "on", "t", "true", "y", "yes")  # what pydantic reads


def _integer_at_least(minimum: int):
    def check(series):
        import pandas as pd  # on use, as in the rest of this module: JSON Lines imports never need pandas

        numbers = pd.to_numeric(series, errors="coerce")
        return numbers.notna() & (numbers % 1 == 0) & (numbers >= minimum)
    return check


def _timestamp(series):
    import pandas as pd  # on use (see above)

    # ISO 8601 text or a typed time (a Parquet timestamp column); a number is refused, as by the model
    # (pydantic would read it as seconds or milliseconds since 1970)
    parsed = pd.to_datetime(series.map(lambda v: v if isinstance(v, str) else str(v)), errors="coerce",
                            utc=True, format="ISO8601")
    return parsed.notna() & pd.to_numeric(series, errors="coerce").isna()


def _boolean(series):
    return series.map(lambda v: str(v).strip().lower()).isin(_BOOL_TEXT)


@functools.cache
def _flat_schema():
    """Column types and nulls of a flat claim table; lenient where pydantic is (never stricter)."""
    import pandera.pandas as pda  # on use: only flat (CSV/Parquet) imports need pandera (slow to import)

    def column(check=None, *, nullable=True, required=False):
        return pda.Column(checks=check, nullable=nullable, required=required)

    return pda.DataFrameSchema({
        "response_id": column(nullable=False, required=True),
        "labels": column(required=True),
        "criticality": column(pda.Check(_integer_at_least(1), error="an integer >= 1")),
        "feedback_count": column(pda.Check(_integer_at_least(0), error="an integer >= 0")),
        "created_at": column(pda.Check(_timestamp, error="a date and time (ISO 8601)")),
        "feedback_at": column(pda.Check(_timestamp, error="a date and time (ISO 8601)")),
        "feedback_resolved": column(pda.Check(_boolean, error="true or false")),
        # the richer-answer extensions (issue 12): vocabularies (stakes, category, contradicted_by) and the
        # chunk list's JSON are checked by the model, which names the value and what it expected
        "is_core": column(pda.Check(_boolean, error="true or false")),
        "query_ambiguous": column(pda.Check(_boolean, error="true or false")),
    }, strict=False)


_SCHEMA_COLUMNS = ("response_id", "labels", "criticality", "feedback_count", "created_at", "feedback_at",
                   "feedback_resolved", "is_core", "query_ambiguous")


def frame_problems(window: list[tuple[int, dict, list]], columns: list[str]) -> dict[int, list[tuple[str, str]]]:
    """Run the pandera schema over a window's frame; (column, message) per failing row number."""
    import pandas as pd  # on use (see above)
    import pandera.pandas as pda  # on use: only flat (CSV/Parquet) imports need pandera (slow to import)

    out: dict[int, list[tuple[str, str]]] = {}
    for number, _, extra in window:
        if extra:
            out.setdefault(number, []).extend(extra)
    names = [c for c in _SCHEMA_COLUMNS if c in columns]
    frame = pd.DataFrame({c: [row.get(c) for _, row, _ in window] for c in names},
                         index=[n for n, _, _ in window], dtype=object)
    try:
        _flat_schema().validate(frame, lazy=True)
    except pda.errors.SchemaErrors as error:
        cases = error.failure_cases
        for column, check, value, index in cases[["column", "check", "failure_case", "index"]].itertuples(index=False):
            if index is None or pd.isna(index):
                continue  # frame-level failures (missing columns) are handled as file-level problems
            message = "a value is required" if check == "not_nullable" else f"{value!r} is not {check}"
            found = out.setdefault(int(index), [])
            if not any(known == column for known, _ in found):  # the reader already said why (e.g. not UTF-8)
                found.append((column, message))
    return out
