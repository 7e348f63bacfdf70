"""Exports: scores as CSV (formula-escaped), Parquet and JSON Lines (exact numbers); the quarantine as
JSON Lines that a user fixes and imports again."""

from __future__ import annotations

import csv
import json
from datetime import datetime

import pyarrow.parquet as pq
import pytest

from register import SYSTEM, RegisterError
from register.ingest.exporter import EXPORT_COLUMNS, export_quarantine, export_scores
from register.ingest.importer import import_path
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"
COLUMNS = [name for name, _, _ in EXPORT_COLUMNS]

FORMULAS = [
    {"response_id": "f-1", "use_case": '=HYPERLINK("http://evil.example","click")', "model": "+cmd",
     "claims": [{"labels": ["SUPPORTED"]}]},
    {"response_id": "f-2", "use_case": "@SUM(A1:A9)", "model": "-2+3", "claims": [{"labels": ["UNSUPPORTED"]}]},
    {"response_id": "f-3", "use_case": "\tcmd", "model": "\r=1", "claims": []},
]


@pytest.fixture
def scored(store, tmp_path):
    """The fixture responses plus records whose text cells start like spreadsheet formulas, scored;
    with the batch id of the fixture responses."""
    formulas = tmp_path / "formulas.jsonl"
    formulas.write_text("".join(json.dumps(r) + "\n" for r in FORMULAS))
    first = import_path(store, SYSTEM, DATA / "responses.jsonl")
    import_path(store, SYSTEM, formulas)
    return store, first.batch_ids[0]


def db_scores(store) -> dict[str, dict]:
    # the response's own fields from responses (r), the rest from scores (s): the exporter's allow-list says which
    cols = ", ".join(expr for _, expr, _ in EXPORT_COLUMNS)
    rows = store.query(f"SELECT {cols} FROM scores s JOIN responses r USING (response_id, revision) "
                       "WHERE s.is_current AND r.is_current")
    return {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows}


def test_csv_export_prefixes_formula_cells_with_a_quote(scored, tmp_path):
    scored, _ = scored
    target = tmp_path / "scores.csv"
    assert export_scores(scored, target) == 6
    with target.open(newline="", encoding="utf-8") as handle:
        rows = {row["response_id"]: row for row in csv.DictReader(handle)}
    assert list(next(iter(rows.values()))) == COLUMNS
    assert rows["f-1"]["use_case"] == '\'=HYPERLINK("http://evil.example","click")'
    assert rows["f-1"]["model"] == "'+cmd"
    assert (rows["f-2"]["use_case"], rows["f-2"]["model"]) == ("'@SUM(A1:A9)", "'-2+3")
    assert (rows["f-3"]["use_case"], rows["f-3"]["model"]) == ("'\tcmd", "'\r=1")
    # ordinary text and numbers are untouched
    assert (rows["r-001"]["use_case"], rows["r-001"]["band"], rows["r-001"]["decisive_claim_id"]) == \
        ("supplier-contracts", "High", "r-001-3")
    assert float(rows["r-001"]["score"]) == pytest.approx(70.0)
    assert datetime.fromisoformat(rows["r-001"]["created_at"]) == db_scores(scored)["r-001"]["created_at"]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for row in rows.values() for cell in row.values())


def test_parquet_export_round_trips_the_numbers(scored, tmp_path):
    scored, _ = scored
    target = tmp_path / "scores.parquet"
    assert export_scores(scored, target) == 6
    table = pq.read_table(target)
    assert table.column_names == COLUMNS
    expected = db_scores(scored)
    exported = {row["response_id"]: row for row in table.to_pylist()}
    assert exported.keys() == expected.keys()
    for rid, row in exported.items():
        assert row == expected[rid], rid  # exact: floats, timestamps, ints, unescaped text
    assert exported["f-1"]["use_case"].startswith("=")


def test_jsonl_export_round_trips_the_numbers(scored, tmp_path):
    scored, first_batch = scored
    target = tmp_path / "scores.jsonl"
    assert export_scores(scored, target, batch_id=first_batch) == 3
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert [line["response_id"] for line in lines] == ["r-001", "r-002", "r-003"]
    expected = db_scores(scored)
    for line in lines:
        want = expected[line["response_id"]]
        for name in COLUMNS:
            if name in ("created_at", "as_of"):
                assert datetime.fromisoformat(line[name]) == want[name]
            else:
                assert line[name] == want[name], (line["response_id"], name)


def test_export_format_comes_from_the_extension_or_is_refused(scored, tmp_path):
    scored, _ = scored
    assert export_scores(scored, tmp_path / "scores.data", fmt="jsonl") == 6
    with pytest.raises(RegisterError, match="cannot tell the export format"):
        export_scores(scored, tmp_path / "scores.xlsx")


def test_quarantine_export_can_be_fixed_and_imported_again(store, tmp_path):
    import_path(store, SYSTEM, DATA / "unknown_label.jsonl")
    import_path(store, SYSTEM, DATA / "malformed_json.jsonl")
    import_path(store, SYSTEM, DATA / "missing_labels_column.csv")
    target = tmp_path / "quarantine.jsonl"
    assert export_quarantine(store, target) == 4
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    by_location = {(line["_quarantine"]["source_name"], line["_quarantine"]["location"]): line for line in lines}
    bad_label = by_location[("unknown_label.jsonl", "line 2")]
    assert bad_label["_quarantine"]["reasons"][0]["field"] == "claims[1].labels[0]"
    assert bad_label["claims"][1]["labels"] == ["HALLUCINATED"]
    broken = by_location[("malformed_json.jsonl", "line 2")]
    assert broken["_quarantine"]["raw"] == (DATA / "malformed_json.jsonl").read_text().splitlines()[1]
    flat = by_location[("missing_labels_column.csv", "row 2")]
    assert flat["response_id"] == "r-1" and flat["claims"][0]["claim_id"] == "r-1-1"

    # the user fixes two of them and imports the file: those two are resolved, the others stay open
    bad_label["claims"][1]["labels"] = ["UNSUPPORTED"]
    flat["claims"][0]["labels"] = ["SUPPORTED"]
    target.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    report = import_path(store, SYSTEM, target)
    assert (report.records, report.accepted, report.resolved) == (4, 2, 2)
    open_rows = store.query("SELECT source_name, location FROM quarantine WHERE status = 'open' ORDER BY 1, 2")
    assert open_rows[:2] == [("malformed_json.jsonl", "line 2"), ("missing_labels_column.csv", "row 3")]
    assert store.query_one("SELECT status FROM quarantine WHERE source_name = 'unknown_label.jsonl'") == ("resolved",)
    assert store.query_one("SELECT labels FROM claims WHERE response_id = 'bad-label' AND claim_idx = 1") == \
        (["UNSUPPORTED"],)
