"""Downloads of the current view: CSV and Excel with spreadsheet formulas neutralised.

A cell that starts with = + - @ (or a tab / carriage return) would be run as a formula by
spreadsheet programs; such cells get a leading apostrophe (the OWASP "CSV injection" advice).
"""

from __future__ import annotations

import io

import pandas as pd

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """Copy of ``frame`` whose text cells cannot start a formula."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(
                lambda v: "'" + v if isinstance(v, str) and v.startswith(FORMULA_PREFIXES) else v)
    return out


def _naive_times(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.DatetimeTZDtype):
            out[column] = out[column].dt.tz_convert("UTC").dt.tz_localize(None)  # Excel has no time zones
    return out


def to_csv_bytes(frame: pd.DataFrame) -> bytes:
    return escape_formulas(frame).to_csv(index=False).encode("utf-8")


def to_excel_bytes(frame: pd.DataFrame, sheet: str = "responses") -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        _naive_times(escape_formulas(frame)).to_excel(writer, index=False, sheet_name=sheet)
    return buffer.getvalue()
