"""Downloads of the current view: CSV and Excel with spreadsheet formulas neutralised.

A cell that starts with = + - @ (or a tab / carriage return) would be run as a formula by
spreadsheet programs; such cells get a leading apostrophe (the OWASP "CSV injection" advice). The
apostrophe stays in the file: a reader gets the escaped value back, not the formula.

CSV is RFC 4180: rows end with CRLF and every field holding a comma, a quote, a CR or an LF is quoted.
(With pandas' default LF line ending a field with a bare CR was written unquoted, and every reader
split its row in two.)
"""

from __future__ import annotations

import csv
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
    """``frame`` as UTF-8 CSV (RFC 4180, formulas escaped); read back by ``csv`` or pandas row for row."""
    # QUOTE_MINIMAL quotes a field holding any character of the line terminator: with CRLF, both CR and LF
    return escape_formulas(frame).to_csv(index=False, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL).encode("utf-8")


def to_excel_bytes(frame: pd.DataFrame, sheet: str = "responses") -> bytes:
    buffer = io.BytesIO()
    with pd.ExcelWriter(buffer, engine="openpyxl") as writer:
        _naive_times(escape_formulas(frame)).to_excel(writer, index=False, sheet_name=sheet)
    return buffer.getvalue()
