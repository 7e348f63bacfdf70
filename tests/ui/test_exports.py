"""Exports neutralise spreadsheet formulas in every text cell, in CSV and in Excel."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from ui.exports import escape_formulas, to_csv_bytes, to_excel_bytes


@pytest.fixture
def frame():
    return pd.DataFrame({
        "response_id": ["=HYPERLINK(\"http://x\")", "+1", "-2", "@SUM(A1)", "safe", "\tTAB"],
        "score": [1.0, 2.0, -3.0, 4.0, 5.0, 6.0],
        "created_at": pd.to_datetime(["2026-11-01T00:00:00Z"] * 6, utc=True),
    })


def test_escape_prefixes_only_formula_cells(frame):
    out = escape_formulas(frame)
    assert list(out["response_id"]) == ["'=HYPERLINK(\"http://x\")", "'+1", "'-2", "'@SUM(A1)", "safe", "'\tTAB"]
    assert list(out["score"]) == [1.0, 2.0, -3.0, 4.0, 5.0, 6.0]  # numbers untouched
    assert frame["response_id"][0].startswith("=")  # the input is not modified


def test_csv_bytes_escaped(frame):
    back = pd.read_csv(io.BytesIO(to_csv_bytes(frame)))
    assert back["response_id"][0] == "'=HYPERLINK(\"http://x\")"


def test_excel_bytes_escaped_and_readable(frame):
    back = pd.read_excel(io.BytesIO(to_excel_bytes(frame)))
    assert back["response_id"][3] == "'@SUM(A1)"
    assert back["score"].sum() == pytest.approx(15.0)
