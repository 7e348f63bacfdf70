"""Issue 10, section 1: nothing lost, whatever the input.

Each class of input that aborted a whole chunk (exit 1 "Unexpected error", up to 5,000 valid records
rolled back) or silently changed meaning is imported here between valid records: the bad record is
quarantined with its line (or row) and field, everything else gets through -- or, for a file that
cannot be read as a whole, the file is refused by name before anything is written. The hostile corpus
(``test_hostile_corpus.py``) runs the outside contract over many more files.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from register import SYSTEM, ImportRejected
from register.ingest.importer import import_path

OK = {"response_id": "ok-1", "claims": [{"labels": ["SUPPORTED"], "criticality": 2}]}
OK2 = {"response_id": "ok-2", "claims": [{"labels": ["PARTIAL"]}]}


def jsonl(tmp_path, *lines: str, name: str = "input.jsonl"):
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogatepass")
    return path


def between(tmp_path, bad_line: str, name: str = "input.jsonl"):
    """A JSON Lines file: a valid record, the bad line, a valid record."""
    return jsonl(tmp_path, json.dumps(OK), bad_line, json.dumps(OK2), name=name)


def quarantined(store, report) -> dict[str, list[str]]:
    """location -> fields of this import's quarantine rows (every reason non-empty)."""
    out = {}
    for location, reasons in store.query("SELECT location, reasons FROM quarantine WHERE batch_id = ?",
                                         [report.batch_ids[0]]):
        reasons = json.loads(reasons)
        assert reasons and all(r["message"] for r in reasons), (location, reasons)
        out[location] = [r["field"] for r in reasons]
    return out


def accepted_ids(store, report) -> set[str]:
    return {r for (r,) in store.query("SELECT response_id FROM responses WHERE batch_id = ?", [report.batch_ids[0]])}


def assert_one_bad(store, report, location: str, fields: list[str], accepted=("ok-1", "ok-2")) -> None:
    assert (report.records, report.accepted, report.quarantined) == (len(accepted) + 1, len(accepted), 1)
    assert report.balanced
    assert accepted_ids(store, report) == set(accepted)
    assert quarantined(store, report) == {location: fields}
    assert store.query_one("SELECT count(*) FROM import_batches WHERE finished_at IS NULL")[0] == 0


# --- crash classes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("claim", "field"), [
    ({"labels": ["SUPPORTED"], "criticality": 99999999999999999999999}, "claims[0].criticality"),
    ({"labels": ["SUPPORTED"], "criticality": 2 ** 63}, "claims[0].criticality"),
    ({"labels": ["SUPPORTED"], "feedback_count": 9223372036854775808}, "claims[0].feedback_count"),
    ({"labels": ["SUPPORTED"], "criticality": 2_147_483_648}, "claims[0].criticality"),
])
def test_jsonl_integers_too_large_are_quarantined(store, tmp_path, claim, field):
    report = import_path(store, SYSTEM, between(tmp_path, json.dumps({"response_id": "big", "claims": [claim]})))
    assert_one_bad(store, report, "line 2", [field])


def test_csv_integers_too_large_are_quarantined(store, tmp_path):
    path = tmp_path / "big.csv"
    path.write_text("response_id,labels,criticality,feedback_count\nok-1,SUPPORTED,2,\n"
                    "big,SUPPORTED,99999999999999999999999,\nbig2,SUPPORTED,1,9223372036854775808\nok-2,PARTIAL,1,\n")
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (4, 2, 2)
    assert quarantined(store, report) == {"row 3": ["claims[0].criticality"], "row 4": ["claims[0].feedback_count"]}


@pytest.mark.parametrize("arrow_type", [pa.int64(), pa.uint64()])
def test_parquet_int64_too_large_is_quarantined(store, tmp_path, arrow_type):
    path = tmp_path / "big.parquet"
    top = 2 ** 63 - 1 if arrow_type == pa.int64() else 2 ** 64 - 1
    pq.write_table(pa.table({"response_id": ["ok-1", "big", "ok-2"], "labels": ["SUPPORTED"] * 3,
                             "criticality": pa.array([1, top, 2], arrow_type)}), path)
    report = import_path(store, SYSTEM, path)
    assert_one_bad(store, report, "row 2", ["claims[0].criticality"])


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_dates_out_of_range_are_quarantined_in_every_format(store, tmp_path, moment):
    record = {"response_id": "when", "created_at": moment, "claims": [{"labels": ["SUPPORTED"], "feedback_at": moment}]}
    report = import_path(store, SYSTEM, between(tmp_path, json.dumps(record)))
    assert_one_bad(store, report, "line 2", ["created_at", "claims[0].feedback_at"])

    table = tmp_path / "when.csv"
    table.write_text(f"response_id,labels,created_at\nok-1,SUPPORTED,\nwhen,SUPPORTED,{moment}\nok-2,PARTIAL,\n")
    report = import_path(store, SYSTEM, table)
    assert quarantined(store, report) == {"row 3": ["created_at"]}


def test_parquet_timestamps_beyond_python_dates_are_quarantined(store, tmp_path):
    path = tmp_path / "far.parquet"
    year_20000 = int((datetime(9999, 12, 31, tzinfo=UTC).timestamp() + 10_001 * 365 * 86400) * 1_000_000)
    pq.write_table(pa.table({"response_id": ["ok-1", "far", "ok-2"], "labels": ["SUPPORTED"] * 3,
                             "created_at": pa.array([0, year_20000, 10 ** 15], pa.timestamp("us", tz="UTC"))}), path)
    report = import_path(store, SYSTEM, path)
    assert_one_bad(store, report, "row 2", ["created_at"])


def test_json_nested_deeper_than_the_recursion_limit_is_quarantined(store, tmp_path):
    deep = '{"response_id": "deep", "claims": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    report = import_path(store, SYSTEM, between(tmp_path, deep))
    assert_one_bad(store, report, "line 2", ["x"])  # the field that nests too deeply (issue 34)


@pytest.mark.parametrize(("record", "field"), [
    ('{"response_id": "s", "answer": "\\ud800", "claims": []}', "answer"),
    ('{"response_id": "s", "use_case": "a\\udfff", "claims": []}', "use_case"),
    ('{"response_id": "s\\ud800", "claims": []}', "response_id"),
    ('{"response_id": "s", "claims": [{"labels": ["SUPPORTED"], "text": "\\ud83d", "span": "ok"}]}',
     "claims[0].text"),
    ('{"response_id": "s", "claims": [], "extra": {"note": "\\udc80"}}', "extra.note"),
])
def test_lone_surrogates_in_any_text_field_are_quarantined(store, tmp_path, record, field):
    report = import_path(store, SYSTEM, between(tmp_path, record))
    assert_one_bad(store, report, "line 2", [field])


# --- silent changes of meaning ------------------------------------------------------------------------


def test_duplicate_json_keys_are_refused_per_record_and_named(store, tmp_path):
    line = '{"response_id": "dup", "claims": [{"labels": ["SUPPORTED"], "criticality": 1, "criticality": 3}]}'
    report = import_path(store, SYSTEM, between(tmp_path, line))
    assert_one_bad(store, report, "line 2", ["claims[0].criticality"])
    reasons = json.loads(store.query_one("SELECT reasons FROM quarantine")[0])
    assert "duplicate key 'criticality'" in reasons[0]["message"]


def test_a_number_where_a_timestamp_belongs_is_refused_in_every_format(store, tmp_path):
    record = {"response_id": "epoch", "created_at": 253402300800, "claims": [{"labels": ["SUPPORTED"]}]}
    report = import_path(store, SYSTEM, between(tmp_path, json.dumps(record)))
    assert_one_bad(store, report, "line 2", ["created_at"])

    table = tmp_path / "epoch.csv"
    table.write_text("response_id,labels,created_at,feedback_at\nok-1,SUPPORTED,2026-11-01T09:30:00Z,\n"
                     "epoch,SUPPORTED,1700000000,\nlater,SUPPORTED,,253402300800\n")
    report = import_path(store, SYSTEM, table)
    assert quarantined(store, report) == {"row 3": ["created_at"], "row 4": ["claims[0].feedback_at"]}
    messages = [r["message"] for (x,) in store.query("SELECT reasons FROM quarantine WHERE batch_id = ?",
                                                    [report.batch_ids[0]]) for r in json.loads(x)]
    assert all("ISO 8601" in m for m in messages)

    parquet = tmp_path / "epoch.parquet"
    pq.write_table(pa.table({"response_id": ["ok-1", "epoch"], "labels": ["SUPPORTED"] * 2,
                             "created_at": pa.array([None, 1_700_000_000], pa.int64())}), parquet)
    report = import_path(store, SYSTEM, parquet)
    assert quarantined(store, report) == {"row 2": ["created_at"]}


def test_a_parquet_binary_id_is_decoded_as_text_and_bad_utf8_is_quarantined(store, tmp_path):
    path = tmp_path / "binary.parquet"
    pq.write_table(pa.table({"response_id": pa.array([b"bin-1", b"\xff\xfe", b"bin-3"], pa.binary()),
                             "labels": pa.array([b"SUPPORTED"] * 3, pa.large_binary())}), path)
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (3, 2, 1)
    assert accepted_ids(store, report) == {"bin-1", "bin-3"}  # never "b'bin-1'"
    assert quarantined(store, report) == {"row 2": ["response_id"]}
    reasons = json.loads(store.query_one("SELECT reasons FROM quarantine")[0])
    assert "not UTF-8 text" in reasons[0]["message"]


def test_a_dictionary_encoded_parquet_column_reads_like_a_plain_one(store, tmp_path):
    path = tmp_path / "dict.parquet"
    pq.write_table(pa.table({"response_id": pa.array(["d-1", "d-2"]).dictionary_encode(),
                             "labels": pa.array(["SUPPORTED", " "]).dictionary_encode()}), path)
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (2, 2, 0)
    # a blank cell is a missing value in a dictionary column too: d-2 is a response without claims
    assert store.query("SELECT response_id, claim_count FROM responses ORDER BY 1") == [("d-1", 1), ("d-2", 0)]


@pytest.mark.parametrize(("content", "message"), [
    ("response_id,labels\n" + "".join(f"r-{i},SUPPORTED\n" for i in range(3000)) + "late,SUPP\x00ORTED\n",
     "line 3002: a NUL byte"),
    ("response_id,labels\nr-1,SUPPORTED\nr-2,SUPPORTED\nr-3,\"SUPPORTED\nr-4,SUPPORTED\n",
     "line 4: a quoted field opened here is never closed"),
])
def test_a_csv_that_would_be_half_accepted_is_refused_by_name_before_anything_is_written(store, tmp_path, content,
                                                                                         message):
    path = tmp_path / "half.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ImportRejected) as refused:
        import_path(store, SYSTEM, path, chunk_size=500)
    assert "half.csv" in str(refused.value) and message in str(refused.value)
    assert store.query_one("SELECT count(*) FROM import_batches")[0] == 0
    assert store.query_one("SELECT count(*) FROM responses")[0] == 0


def test_a_csv_with_quotes_that_close_is_imported(store, tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text('response_id,labels,text\nq-1,SUPPORTED,"a ""quoted"", multi\nline text"\nq-2,SUPPORTED,x"y\n')
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted) == (2, 2)
    assert store.query_one("SELECT text FROM claims WHERE response_id = 'q-1'")[0] == 'a "quoted", multi\nline text'


@pytest.mark.parametrize(("line", "kind"), [("null", "null"), ("[]", "an array"), ("17", "a number")])
def test_a_line_that_is_not_an_object_gets_a_reason(store, tmp_path, line, kind):
    report = import_path(store, SYSTEM, between(tmp_path, line))
    assert_one_bad(store, report, "line 2", [""])
    reasons = json.loads(store.query_one("SELECT reasons FROM quarantine")[0])
    assert reasons == [{"field": "", "message": f"expected a JSON object (one response), got {kind}"}]


def test_folder_import_names_every_file_it_skipped(store, tmp_path):
    folder = tmp_path / "drop"
    (folder / "nested").mkdir(parents=True)
    (folder / "nested" / "inner.jsonl").write_text(json.dumps(OK) + "\n")
    (folder / ".hidden.jsonl").write_text(json.dumps(OK2) + "\n")
    (folder / "notes.txt").write_text("hello")
    (folder / "data.JSONL").write_text(json.dumps(OK) + "\n")
    report = import_path(store, SYSTEM, folder)
    assert [b.source_name for b in report.batches] == ["data.JSONL"]
    assert report.notes == ["skipped .hidden.jsonl: a hidden file (its name starts with a dot)",
                            "skipped nested/: a folder (folders are not imported recursively; name it to import it)",
                            "skipped notes.txt: not a supported file type (.jsonl, .json, .csv, .parquet)"]


# --- size limits ---------------------------------------------------------------------------------------


def test_a_10_mb_answer_is_quarantined_naming_the_field_and_the_limit(store, tmp_path):
    record = {"response_id": "huge", "answer": "x" * 10_000_000, "claims": []}
    report = import_path(store, SYSTEM, between(tmp_path, json.dumps(record)))
    assert_one_bad(store, report, "line 2", ["answer"])
    reasons = json.loads(store.query_one("SELECT reasons FROM quarantine")[0])
    assert reasons[0]["message"] == "is 10,000,000 characters long, over the limit of 200,000 (HRI_MAX_ANSWER_CHARS)"


@pytest.mark.parametrize(("variable", "field", "record"), [
    ("HRI_MAX_ANSWER_CHARS", "answer", {"answer": "a" * 11}),
    ("HRI_MAX_QUESTION_CHARS", "question", {"question": "q" * 11}),
    ("HRI_MAX_CLAIM_TEXT_CHARS", "claims[0].text", {"claims": [{"labels": ["SUPPORTED"], "text": "t" * 11}]}),
    ("HRI_MAX_SPAN_CHARS", "claims[0].span", {"claims": [{"labels": ["SUPPORTED"], "span": "s" * 11}]}),
])
def test_the_text_limits_come_from_the_settings(store, tmp_path, monkeypatch, variable, field, record):
    monkeypatch.setenv(variable, "10")
    line = json.dumps({"response_id": "long", "claims": [], **record})
    report = import_path(store, SYSTEM, between(tmp_path, line))
    assert_one_bad(store, report, "line 2", [field])


def test_ragged_csv_rows_are_quarantined_whether_long_or_short(store, tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text("response_id,labels,criticality\nok-1,SUPPORTED,2\nlong,SUPPORTED,1,extra\nshort\nok-2,PARTIAL,1\n")
    report = import_path(store, SYSTEM, path)
    assert (report.records, report.accepted, report.quarantined) == (4, 2, 2)
    assert quarantined(store, report) == {"row 3": [""], "row 4": [""]}
    reasons = [json.loads(r)[0]["message"] for (r,) in store.query("SELECT reasons FROM quarantine ORDER BY location")]
    assert reasons == ["row 3: the row has 4 fields but the header has 3",
                       "row 4: the row has 1 field but the header has 3"]


def test_a_record_imported_under_a_raised_limit_is_still_reproduced(store, tmp_path, monkeypatch):
    from register.scoring.reproduce import reproduce

    monkeypatch.setenv("HRI_MAX_ANSWER_CHARS", "300000")
    record = {"response_id": "long", "answer": "z" * 250_000, "claims": [{"labels": ["PARTIAL"]}]}
    report = import_path(store, SYSTEM, between(tmp_path, json.dumps(record)))
    assert report.accepted == 3
    monkeypatch.delenv("HRI_MAX_ANSWER_CHARS")  # the limit in force later does not judge what is stored
    assert reproduce(store, "long").matches
