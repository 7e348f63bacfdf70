"""The one spreadsheet formula escape (``register.db.export``): in SQL and in Python it escapes the same cells."""

from __future__ import annotations

import pandas as pd

from register.db.export import FORMULA_PREFIXES, escape_formula, escape_formulas, escape_formulas_sql
from register.db.sql import Params

CELLS = ["=1+1", "+cmd", "-2", "@SUM(A1)", "\tx", "\rx", "'=already", "plain", "", " =spaced", "日本=", "\n=x",
         "=", "a=b"]


def test_the_prefixes_are_the_owasp_list():
    assert FORMULA_PREFIXES == ("=", "+", "-", "@", "\t", "\r")


def test_python_escapes_text_starting_with_a_prefix_only():
    assert [escape_formula(c) for c in CELLS] == [
        "'=1+1", "'+cmd", "'-2", "'@SUM(A1)", "'\tx", "'\rx", "'=already", "plain", "", " =spaced", "日本=", "\n=x",
        "'=", "a=b"]
    assert [escape_formula(v) for v in (None, -2, 1.5, True)] == [None, -2, 1.5, True]


def test_sql_and_python_escape_the_same_cells(store):
    p = Params()
    values = ", ".join(f"({p(i)}, {p(c)})" for i, c in enumerate(CELLS))
    rows = store.query(f"SELECT {escape_formulas_sql('v', p)} FROM (VALUES {values}, (-1, NULL)) t(i, v) ORDER BY i",
                       p.values)
    assert [r[0] for r in rows] == [None] + [escape_formula(c) for c in CELLS]


def test_frames_escape_their_text_columns_and_keep_the_others():
    frame = pd.DataFrame({"text": ["=x", "y"], "number": [-1, 2],
                          "at": pd.to_datetime(["2026-01-01 09:00", "2026-01-02 10:00"], utc=True),
                          "mixed": ["@a", 3]})
    out = escape_formulas(frame)
    assert out["text"].tolist() == ["'=x", "y"] and out["mixed"].tolist() == ["'@a", 3]
    assert out["number"].tolist() == [-1, 2]
    assert out.dtypes.equals(frame.dtypes)  # a tz-aware time stays one: the Excel writer makes it naive
    assert frame["text"].tolist() == ["=x", "y"]  # a copy
