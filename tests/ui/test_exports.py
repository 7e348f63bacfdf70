"""Exports neutralise spreadsheet formulas in every text cell, in CSV and in Excel."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from ui.framework.exports import escape_formulas, to_csv_bytes, to_excel_bytes


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


# Text that breaks naive CSV writers and readers: bare CR (a question ending in "\r" split its row in two),
# LF, CRLF, quotes, delimiters, formula prefixes, NUL, tabs, unicode, empty and blank cells.
ADVERSARIAL = [
    "What is the SLA?\r", "line one\nline two", "crlf\r\ninside", "\r", "\n", "\r\n", "x\r\r\ny",
    'a "quoted" word', '"', '""', "a,b,c", "a;b;c", "tab\tinside", "=1+1", "+cmd", "-2", "@SUM(A1)", "\tlead",
    "\rlead", "nul\x00inside", "ünïcödé ✓ 😀 עברית", "", " spaced ", "plain",
]


@pytest.fixture
def hostile():
    n = len(ADVERSARIAL)
    return pd.DataFrame({"response_id": [f"r-{i}" for i in range(n)], "question": ADVERSARIAL,
                         "answer": list(reversed(ADVERSARIAL)), "score": [i + 0.5 for i in range(n)]})


def test_csv_round_trips_adversarial_text_through_the_csv_module(hostile):
    import csv

    text = to_csv_bytes(hostile).decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    expected = escape_formulas(hostile)
    assert rows[0] == list(hostile.columns)
    assert len(rows) == len(hostile) + 1 and all(len(r) == len(hostile.columns) for r in rows)
    for row, (_, want) in zip(rows[1:], expected.iterrows(), strict=True):
        assert row[:3] == [want["response_id"], want["question"], want["answer"]]
        assert float(row[3]) == want["score"]


def test_csv_round_trips_adversarial_text_through_pandas(hostile):
    back = pd.read_csv(io.BytesIO(to_csv_bytes(hostile)), dtype={"question": str, "answer": str},
                       keep_default_na=False)
    expected = escape_formulas(hostile)
    assert back.shape == hostile.shape
    assert back["question"].tolist() == expected["question"].tolist()
    assert back["answer"].tolist() == expected["answer"].tolist()
    assert back["score"].tolist() == hostile["score"].tolist()
    # formula-escaped values keep their leading apostrophe (documented in ui/framework/exports.py); the rest are exact
    assert back["question"].tolist()[ADVERSARIAL.index("=1+1")] == "'=1+1"
    assert back["question"].tolist()[0] == "What is the SLA?\r"


# --- exports prepared once, as files (ui.framework.exports.prepare_export) --------------------------------------


@pytest.fixture
def temp_root(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def _writer(frame, *, excel: bool):
    from register.console.exports import CsvExport

    def write(path):
        path.write_bytes(to_csv_bytes(frame))
        return CsvExport(path, len(frame), frame if excel else None)

    return write


def test_prepare_export_keeps_files_not_rows_and_replaces_the_last(temp_root, frame):
    from ui.framework.exports import file_reader, prepare_export

    state: dict = {}
    first = prepare_export(state, "k", ("view", 1), "out", _writer(frame, excel=True))
    assert state == {"k": first} and first.rows == len(frame) and first.available()
    assert first.folder.parent == temp_root and {p.name for p in first.folder.iterdir()} == {"out.csv", "out.xlsx"}
    assert file_reader(first.csv)() == to_csv_bytes(frame)
    assert pd.read_excel(first.excel)["response_id"][0] == "'=HYPERLINK(\"http://x\")"
    second = prepare_export(state, "k", ("view", 2), "out", _writer(frame, excel=False))
    assert state == {"k": second} and second.excel is None and not first.folder.exists()


def test_a_failed_export_leaves_no_folder_and_drops_the_last(temp_root, frame):
    from ui.framework.exports import prepare_export

    state: dict = {}
    first = prepare_export(state, "k", "v", "out", _writer(frame, excel=False))

    def broken(path):
        path.write_bytes(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        prepare_export(state, "k", "v", "out", broken)
    assert state == {} and list(temp_root.iterdir()) == [] and not first.available()


def test_export_folders_left_by_ended_sessions_are_swept(temp_root, frame):
    import os

    from ui.framework.exports import EXPORT_DIR_PREFIX, STALE_SECONDS, prepare_export

    old, recent, other = (temp_root / f"{EXPORT_DIR_PREFIX}old", temp_root / f"{EXPORT_DIR_PREFIX}recent",
                          temp_root / "someone-elses")
    for folder in (old, recent, other):
        folder.mkdir()
        (folder / "x.csv").write_text("x")
    long_ago = os.stat(old).st_mtime - STALE_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    prepare_export({}, "k", "v", "out", _writer(frame, excel=False))
    assert not old.exists() and recent.exists() and other.exists()
