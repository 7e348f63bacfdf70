"""The hostile import corpus: the files of ``tests/data/hostile`` plus generated ones, and what each must give.

Small text inputs are committed files; binary, huge or encoding-specific ones (Parquet type mixes, UTF-16,
Latin-1, a 10 MB line, 100,000 levels of nesting, NUL bytes, mixed folders) are written by ``GENERATED``
builders into the test's folder, so that nothing large is committed. ``EXPECTED`` says, for every input,
either the substring of the message that refuses it as a whole (nothing written), or how many records it
holds and how many of them are quarantined. ``corpus(folder)`` lays the whole corpus out in one folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers.paths import REPO_ROOT

CORPUS = REPO_ROOT / "tests" / "data" / "hostile"
GOOD_FILE = REPO_ROOT / "tests" / "data" / "import" / "responses.jsonl"


@dataclass(frozen=True)
class Outcome:
    """What importing one input must give: refused (the message holds ``refused``), or records/quarantined."""

    records: int = 0
    quarantined: int = 0
    refused: str | None = None
    klass: str = ""  # the class of hostile input, for the outcome table


def _ok(rid: str) -> dict:
    return {"response_id": rid, "claims": [{"labels": ["SUPPORTED"], "criticality": 1}]}


def _lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def _text(name: str, content: str, encoding: str = "utf-8") -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        (folder / name).write_bytes(content.encode(encoding))
    return build


def _bytes(name: str, content: bytes) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        (folder / name).write_bytes(content)
    return build


def _parquet(name: str, table: pa.Table, **options) -> Callable[[Path], None]:
    def build(folder: Path) -> None:
        pq.write_table(table, folder / name, **options)
    return build


def _truncated_parquet(folder: Path) -> None:
    full = folder / "pq_truncated.parquet.tmp"
    pq.write_table(pa.table({"response_id": ["t-1", "t-2"], "labels": ["SUPPORTED"] * 2}), full)
    data = full.read_bytes()
    full.unlink()
    (folder / "pq_truncated.parquet").write_bytes(data[: len(data) // 2] + b"PAR1")


def _mixed_folder(folder: Path) -> None:
    mixed = folder / "mixed_folder"
    (mixed / "nested").mkdir(parents=True)
    (mixed / "a.jsonl").write_text(_lines(_ok("mf-1")) + '{"response_id": "mf-bad", "claims": [{"labels": ["X"]}]}\n')
    (mixed / "b.csv").write_text("response_id,labels\nmf-2,SUPPORTED\n")
    pq.write_table(pa.table({"response_id": ["mf-3"], "labels": ["PARTIAL"]}), mixed / "c.parquet")
    (mixed / ".hidden.jsonl").write_text(_lines(_ok("hidden")))
    (mixed / "notes.txt").write_text("not data")
    (mixed / "nested" / "deep.jsonl").write_text(_lines(_ok("nested")))


def _folder_with_a_refused_file(folder: Path) -> None:
    target = folder / "folder_with_a_refused_file"
    target.mkdir()
    (target / "a.jsonl").write_text(_lines(_ok("fr-1")))
    (target / "b.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))


def _folder_of_unsupported_files(folder: Path) -> None:
    target = folder / "folder_of_unsupported_files"
    target.mkdir()
    (target / "data.xlsx").write_bytes(b"PK\x03\x04")
    (target / "notes.md").write_text("# notes")


_DEEP = "[" * 100_000 + "]" * 100_000


def _ragas_csv(cell: str) -> str:
    """A RAGAS result table of three rows whose second row's context cell is ``cell`` (without quotes)."""
    return ('user_input,retrieved_contexts,response,faithfulness\nq1,"[""a""]",r1,0.5\n'
            f'q2,"{cell}",r2,0.5\nq3,"[\'b\', \'c\']",r3,0.9\n')


def _ragchecker_deep_query(folder: Path) -> None:
    query = {"query_id": "0", "query": "q", "response": "r", "gt_answer": "g",
             "retrieved_context": [{"doc_id": "d", "text": "t"}], "response_claims": [["a", "b", "c"]],
             "gt_answer_claims": [], "answer2response": ["Entailment"], "response2answer": [],
             "retrieved2response": [["Entailment"]], "retrieved2answer": []}
    queries = [json.dumps({**query, "query_id": str(i)}) for i in range(3)]
    queries[1] = queries[1].replace('"gt_answer": "g"', f'"gt_answer": {_DEEP}')
    (folder / "ragchecker_deep_query.json").write_text('{"results": [' + ", ".join(queries) + "]}")


_TS = pa.timestamp("us", tz="UTC")
_FAR = int((datetime(9999, 12, 31, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() + 400 * 86400)
_LATIN1 = (_lines(_ok("l1-ok")) + '{"response_id": "l1-bad", "answer": "caf\u00e9", "claims": []}\n'
           + _lines(_ok("l1-ok2")))
_UTF16_RECORDS = _lines(_ok("u16-1"), _ok("u16-2"))

# issue 34, class 7 (scoring fails open): feedback times later than the import, relative to when the corpus is
# built (a committed file cannot say "tomorrow"); past the clock skew they are quarantined, inside it accepted
def _iso_from_now(**delta: float) -> str:
    return (datetime.now(UTC) + timedelta(**delta)).isoformat().replace("+00:00", "Z")


def _feedback(rid: str, when: str | None) -> dict:
    return {"response_id": rid, "claims": [{"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2,
                                            "feedback_at": when, "feedback_count": 1, "feedback_resolved": True}]}


def _future_feedback_jsonl(folder: Path) -> None:
    offset = (datetime.now(UTC) + timedelta(days=1)).astimezone(timezone(timedelta(hours=-5))).isoformat()
    (folder / "feedback_in_the_future.jsonl").write_text(_lines(
        _ok("ff-ok"), _feedback("ff-tomorrow", _iso_from_now(days=1)), _feedback("ff-ten-minutes", _iso_from_now(
            minutes=10)), _feedback("ff-offset", offset), _feedback("ff-in-skew", _iso_from_now(minutes=1)),
        _feedback("ff-yesterday", _iso_from_now(days=-1))), encoding="utf-8")


def _future_feedback_csv(folder: Path) -> None:
    (folder / "csv_feedback_in_the_future.csv").write_text(
        "response_id,labels,criticality,feedback_at,feedback_count\n"
        f"cf-1,VALIDATED_NEGATIVE_FEEDBACK,2,{_iso_from_now(days=1)},1\n"
        f"cf-2,VALIDATED_NEGATIVE_FEEDBACK,2,{_iso_from_now(days=-1)},1\n", encoding="utf-8")


def _future_feedback_parquet(folder: Path) -> None:
    pq.write_table(pa.table({"response_id": ["pf-1", "pf-2"], "labels": ["VALIDATED_NEGATIVE_FEEDBACK"] * 2,
                             "feedback_at": pa.array([datetime.now(UTC) + timedelta(days=1),
                                                      datetime.now(UTC) - timedelta(days=1)], _TS)}),
                   folder / "pq_feedback_in_the_future.parquet")


# name -> (builder writing it into a folder, outcome)
GENERATED: dict[str, tuple[Callable[[Path], None], Outcome]] = {
    # encodings and bytes
    "utf16_with_bom.jsonl": (_text("utf16_with_bom.jsonl", _UTF16_RECORDS, "utf-16"),
                             Outcome(refused="UTF-16", klass="encoding")),
    "utf16_without_bom.jsonl": (_text("utf16_without_bom.jsonl", _UTF16_RECORDS, "utf-16-le"),
                                Outcome(refused="NUL bytes", klass="encoding")),
    "utf16_with_bom.csv": (_text("utf16_with_bom.csv", "response_id,labels\nx,SUPPORTED\n", "utf-16"),
                           Outcome(refused="UTF-16", klass="encoding")),
    "latin1.jsonl": (_text("latin1.jsonl", _LATIN1, "latin-1"), Outcome(3, 1, klass="encoding")),
    "latin1.csv": (_text("latin1.csv", "response_id,labels,text\nc-1,SUPPORTED,ok\nc-2,SUPPORTED,caf\u00e9\n",
                         "latin-1"), Outcome(2, 1, klass="encoding")),
    "nul_late_in.jsonl": (_bytes("nul_late_in.jsonl", _lines(*(_ok(f"n-{i}") for i in range(300))).encode()
                                 + b'{"response_id": "z", "claims": []}\x00\n'),
                          Outcome(refused="NUL byte", klass="NUL bytes")),
    "nul_late_in.csv": (_bytes("nul_late_in.csv", b"response_id,labels\n"
                               + b"".join(b"r-%d,SUPPORTED\n" % i for i in range(3000)) + b"x,SUPP\x00ORTED\n"),
                        Outcome(refused="NUL byte", klass="NUL bytes")),
    "zero_filled_tail.csv": (_bytes("zero_filled_tail.csv", b"response_id,labels\nz-1,SUPPORTED\n" + bytes(9000)),
                             Outcome(refused="NUL byte", klass="NUL bytes")),
    "binary_tail.jsonl": (_bytes("binary_tail.jsonl", _lines(_ok("bt-1")).encode() + bytes(range(128, 256)) + b"\n"
                                 + bytes(range(1, 10)) + b"\n"), Outcome(3, 2, klass="binary data")),
    "png_renamed.jsonl": (_bytes("png_renamed.jsonl", b"\x89PNG\r\n\x1a\n" + bytes(32)),
                          Outcome(refused="PNG", klass="binary data")),
    "gzip_renamed.csv": (_bytes("gzip_renamed.csv", b"\x1f\x8b\x08\x00" + bytes(32)),
                         Outcome(refused="gzip", klass="binary data")),
    "parquet_renamed.jsonl": (_parquet("parquet_renamed.jsonl", pa.table({"response_id": ["x"]})),
                              Outcome(refused="rename it .parquet", klass="binary data")),
    "sqlite_renamed.json": (_bytes("sqlite_renamed.json", b"SQLite format 3\x00" + bytes(64)),
                            Outcome(refused="SQLite", klass="binary data")),
    # size
    "ten_mb_answer.jsonl": (_text("ten_mb_answer.jsonl", _lines(_ok("ok-1"), {"response_id": "huge", "claims": [],
                                                                             "answer": "x" * 10_000_000})),
                            Outcome(2, 1, klass="size limits")),
    "long_answer_under_the_limit.jsonl": (_text("long_answer_under_the_limit.jsonl",
                                                _lines({"response_id": "long", "answer": "y" * 199_000,
                                                        "claims": []})), Outcome(1, 0, klass="size limits")),
    "csv_long_answer_column.csv": (_text("csv_long_answer_column.csv", "response_id,labels,answer\nla-1,SUPPORTED,"
                                         + "a" * 250_000 + "\nla-2,SUPPORTED,short\n"),
                                   Outcome(2, 1, klass="size limits")),
    "five_thousand_claims.jsonl": (_text("five_thousand_claims.jsonl", _lines({"response_id": "many", "claims": [
        {"labels": ["SUPPORTED"], "criticality": 1000} for _ in range(5000)]})), Outcome(1, 0, klass="size limits")),
    "deep_nesting.jsonl": (_text("deep_nesting.jsonl", _lines(_ok("ok-1")) + '{"response_id": "deep", "claims": [],'
                                 ' "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"),
                           Outcome(2, 1, klass="deep nesting")),
    "deep_objects.jsonl": (_text("deep_objects.jsonl", '{"response_id": "deep-o", "claims": [], "x": '
                                 + '{"a": ' * 5000 + "1" + "}" * 5000 + "}\n"), Outcome(1, 1, klass="deep nesting")),
    # Parquet type mixes
    "pq_int64_max.parquet": (_parquet("pq_int64_max.parquet", pa.table({
        "response_id": ["ok-1", "big"], "labels": ["SUPPORTED"] * 2,
        "criticality": pa.array([1, 2 ** 63 - 1], pa.int64())})), Outcome(2, 1, klass="integers too large")),
    "pq_uint64_max.parquet": (_parquet("pq_uint64_max.parquet", pa.table({
        "response_id": ["ok-1", "big"], "labels": ["SUPPORTED"] * 2,
        "feedback_count": pa.array([1, 2 ** 64 - 1], pa.uint64())})), Outcome(2, 1, klass="integers too large")),
    "pq_binary_ids.parquet": (_parquet("pq_binary_ids.parquet", pa.table({
        "response_id": pa.array([b"bin-1", b"\xff\xfe", b"bin-3"], pa.binary()),
        "labels": pa.array([b"SUPPORTED"] * 3, pa.large_binary())})), Outcome(3, 1, klass="Parquet types")),
    "pq_fixed_size_binary.parquet": (_parquet("pq_fixed_size_binary.parquet", pa.table({
        "response_id": pa.array([b"fx-1", b"fx-2"], pa.binary(4)), "labels": ["SUPPORTED"] * 2})),
        Outcome(2, 0, klass="Parquet types")),
    "pq_int_ids.parquet": (_parquet("pq_int_ids.parquet", pa.table({
        "response_id": pa.array([1, 2, 2], pa.int64()), "labels": ["SUPPORTED", "PARTIAL", "OUTDATED"]})),
        Outcome(2, 0, klass="Parquet types")),
    "pq_nested_labels.parquet": (_parquet("pq_nested_labels.parquet", pa.table({
        "response_id": ["nl-1", "nl-2"],
        "labels": pa.array([[["SUPPORTED"]], [["PARTIAL", "x"]]], pa.list_(pa.list_(pa.string())))})),
        Outcome(2, 2, klass="Parquet types")),
    "pq_list_labels.parquet": (_parquet("pq_list_labels.parquet", pa.table({
        "response_id": ["ll-1", "ll-2"], "labels": pa.array([["PARTIAL", "OUTDATED"], []], pa.list_(pa.string())),
        "dimensions": pa.array([["F"], None], pa.list_(pa.string()))})), Outcome(2, 1, klass="Parquet types")),
    "pq_dictionary_encoded.parquet": (_parquet("pq_dictionary_encoded.parquet", pa.table({
        "response_id": pa.array(["de-1", "de-2", "de-3"]).dictionary_encode(),
        "labels": pa.array(["SUPPORTED", " ", "NOPE"]).dictionary_encode()})), Outcome(3, 1, klass="Parquet types")),
    "pq_all_null_columns.parquet": (_parquet("pq_all_null_columns.parquet", pa.table({
        "response_id": ["an-1", "an-2"], "labels": pa.array([None, None], pa.null()),
        "criticality": pa.array([None, None], pa.null()), "created_at": pa.array([None, None], pa.null())})),
        Outcome(2, 0, klass="Parquet types")),
    "pq_timestamp_beyond_9999.parquet": (_parquet("pq_timestamp_beyond_9999.parquet", pa.table({
        "response_id": ["ok-1", "far"], "labels": ["SUPPORTED"] * 2,
        "created_at": pa.array([0, _FAR * 1_000_000], _TS)})), Outcome(2, 1, klass="dates out of range")),
    "pq_epoch_int_times.parquet": (_parquet("pq_epoch_int_times.parquet", pa.table({
        "response_id": ["ok-1", "epoch"], "labels": ["SUPPORTED"] * 2,
        "created_at": pa.array([None, 253402300800], pa.int64())})), Outcome(2, 1, klass="numbers as times")),
    "pq_typed_times.parquet": (_parquet("pq_typed_times.parquet", pa.table({
        "response_id": ["tt-1", "tt-2"], "labels": ["SUPPORTED"] * 2,
        "created_at": pa.array([date(2026, 11, 1), date(1, 1, 1)], pa.date32()),
        "feedback_at": pa.array([datetime(2026, 11, 2, 9, 30), None], pa.timestamp("ns"))})),
        Outcome(2, 0, klass="Parquet types")),
    "pq_decimal_criticality.parquet": (_parquet("pq_decimal_criticality.parquet", pa.table({
        "response_id": ["dc-1", "dc-2"], "labels": ["SUPPORTED"] * 2,
        "criticality": pa.array([Decimal("2"), Decimal("2.5")], pa.decimal128(5, 1))})),
        Outcome(2, 1, klass="Parquet types")),
    "pq_nan_and_infinity.parquet": (_parquet("pq_nan_and_infinity.parquet", pa.table({
        "response_id": ["nf-1", "nf-2", "nf-3"], "labels": ["SUPPORTED"] * 3,
        "criticality": pa.array([float("nan"), float("inf"), 3.0], pa.float64())})),
        Outcome(3, 1, klass="NaN/Infinity")),
    "pq_struct_and_map_columns.parquet": (_parquet("pq_struct_and_map_columns.parquet", pa.table({
        "response_id": ["sm-1", "sm-2"], "labels": ["SUPPORTED"] * 2,
        "meta": pa.array([{"a": 1}, {"a": None}], pa.struct([("a", pa.int64())])),
        "text": pa.array([[("k", 1)], None], pa.map_(pa.string(), pa.int64()))})),
        Outcome(2, 1, klass="Parquet types")),
    "pq_duration_column.parquet": (_parquet("pq_duration_column.parquet", pa.table({
        "response_id": ["du-1", "du-2"], "labels": ["SUPPORTED"] * 2,
        "created_at": pa.array([1, 2 ** 62], pa.duration("s"))})), Outcome(2, 2, klass="Parquet types")),
    "pq_large_strings.parquet": (_parquet("pq_large_strings.parquet", pa.table({
        "response_id": pa.array(["ls-1"], pa.large_string()), "labels": pa.array(["SUPPORTED"], pa.large_string()),
        "answer": pa.array(["\u202e\u200b text"], pa.large_string())})), Outcome(1, 0, klass="Parquet types")),
    "pq_missing_labels_column.parquet": (_parquet("pq_missing_labels_column.parquet", pa.table({
        "response_id": ["ml-1", "ml-2"], "criticality": [1, 2]})), Outcome(2, 2, klass="missing columns")),
    "pq_empty_table.parquet": (_parquet("pq_empty_table.parquet", pa.table({
        "response_id": pa.array([], pa.string()), "labels": pa.array([], pa.string())})),
        Outcome(0, 0, klass="empty files")),
    "pq_many_row_groups.parquet": (_parquet("pq_many_row_groups.parquet", pa.table({
        "response_id": [f"rg-{i // 2}" for i in range(40)], "labels": ["SUPPORTED", "PARTIAL"] * 20}),
        row_group_size=3), Outcome(20, 0, klass="Parquet types")),
    "pq_truncated.parquet": (_truncated_parquet, Outcome(refused="not a readable Parquet file", klass="binary data")),
    "empty.parquet": (_bytes("empty.parquet", b""), Outcome(refused="not a Parquet file", klass="empty files")),
    # folders
    "mixed_folder": (_mixed_folder, Outcome(4, 1, klass="mixed folders")),
    "folder_with_a_refused_file": (_folder_with_a_refused_file, Outcome(refused="b.jsonl", klass="mixed folders")),
    "folder_of_unsupported_files": (_folder_of_unsupported_files,
                                    Outcome(refused="holds no", klass="mixed folders")),
    # issue 34, class 7: feedback later than the import (tomorrow, in ten minutes, tomorrow at another offset:
    # quarantined; in one minute, inside the clock skew, and yesterday: accepted)
    "feedback_in_the_future.jsonl": (_future_feedback_jsonl, Outcome(6, 3, klass="feedback in the future")),
    "csv_feedback_in_the_future.csv": (_future_feedback_csv, Outcome(2, 1, klass="feedback in the future")),
    "pq_feedback_in_the_future.parquet": (_future_feedback_parquet, Outcome(2, 1, klass="feedback in the future")),
    # issue 34, classes 1-3: JSON text inside a field, RAG result files record by record, ids of other types
    "deep_context_text.jsonl": (_text("deep_context_text.jsonl", _lines(
        _ok("dc-1"), {**_ok("dc-2"), "retrieved_context": _DEEP}, _ok("dc-3"))),
        Outcome(3, 1, klass="JSON text inside a field")),
    "csv_deep_context_cell.csv": (_text("csv_deep_context_cell.csv", "response_id,labels,retrieved_context\n"
                                        f'cc-1,SUPPORTED,\ncc-2,SUPPORTED,"{_DEEP}"\ncc-3,SUPPORTED,[]\n'),
                                  Outcome(3, 1, klass="JSON text inside a field")),
    "ragas_deep_cell.csv": (_text("ragas_deep_cell.csv", _ragas_csv(_DEEP)), Outcome(3, 1, klass="RAG result files")),
    "ragas_dash_run_cell.csv": (_text("ragas_dash_run_cell.csv", _ragas_csv("-" * 100_000)),
                                Outcome(3, 1, klass="RAG result files")),
    "ragchecker_deep_query.json": (_ragchecker_deep_query, Outcome(3, 1, klass="RAG result files")),
    "pq_float_ids.parquet": (_parquet("pq_float_ids.parquet", pa.table({
        "response_id": pa.array([1.0, 1e300, float("nan"), 2.0], pa.float64()), "labels": ["SUPPORTED"] * 4})),
        Outcome(4, 4, klass="ids of other types")),
    "ragas_float_ids.parquet": (_parquet("ragas_float_ids.parquet", pa.table({
        "response_id": pa.array([1.0, 1e300, float("nan")], pa.float64()), "user_input": ["q1", "q2", "q3"],
        "retrieved_contexts": [["a"], ["b"], ["c"]]})), Outcome(3, 3, klass="ids of other types")),
}

# the committed files of tests/data/hostile
EXPECTED: dict[str, Outcome] = {
    # integers too large for int32 / int64 / a C long (a whole chunk rolled back before)
    "bigint_criticality.jsonl": Outcome(3, 1, klass="integers too large"),
    "int32_overflow_pair.jsonl": Outcome(3, 1, klass="integers too large"),
    "bigint_feedback_count.jsonl": Outcome(2, 1, klass="integers too large"),
    "huge_digits.jsonl": Outcome(2, 1, klass="integers too large"),
    "csv_bigint.csv": Outcome(3, 2, klass="integers too large"),
    # dates out of range, numbers where a time belongs, date formats
    "date_before_year_1.jsonl": Outcome(2, 1, klass="dates out of range"),
    "date_after_year_9999.jsonl": Outcome(2, 1, klass="dates out of range"),
    "csv_dates_out_of_range.csv": Outcome(3, 2, klass="dates out of range"),
    "epoch_numbers_as_times.jsonl": Outcome(5, 4, klass="numbers as times"),
    "csv_epoch_times.csv": Outcome(4, 3, klass="numbers as times"),
    "date_formats.jsonl": Outcome(8, 5, klass="numbers as times"),
    # text that is not Unicode, duplicate keys, JSON that is not one object
    "lone_surrogates.jsonl": Outcome(10, 9, klass="lone surrogates"),
    "surrogate_pairs_are_text.jsonl": Outcome(2, 0, klass="lone surrogates"),
    "duplicate_keys.jsonl": Outcome(5, 4, klass="duplicate keys"),
    "not_objects.jsonl": Outcome(8, 7, klass="not one JSON object"),
    "one_json_array.json": Outcome(1, 1, klass="not one JSON object"),
    "pretty_printed.json": Outcome(11, 11, klass="not one JSON object"),
    "truncated_last_line.jsonl": Outcome(2, 1, klass="not one JSON object"),
    "nan_infinity.jsonl": Outcome(4, 3, klass="NaN/Infinity"),
    "deeply_nested_but_legal.jsonl": Outcome(1, 0, klass="deep nesting"),
    # encodings, byte-order marks, line endings, control characters
    "utf8_bom.jsonl": Outcome(2, 0, klass="encoding"),
    "bom_on_a_later_line.jsonl": Outcome(2, 1, klass="encoding"),
    "crlf_line_endings.jsonl": Outcome(2, 0, klass="encoding"),
    "csv_utf8_bom.csv": Outcome(1, 0, klass="encoding"),
    "csv_crlf.csv": Outcome(2, 0, klass="encoding"),
    "control_characters.jsonl": Outcome(3, 2, klass="control characters"),
    "raw_control_byte_in_string.jsonl": Outcome(2, 1, klass="control characters"),
    "csv_control_characters.csv": Outcome(2, 0, klass="control characters"),
    "unicode_oddities.jsonl": Outcome(3, 0, klass="control characters"),
    # values of the wrong type or out of range
    "numbers_as_strings.jsonl": Outcome(4, 2, klass="wrong types"),
    "booleans_as_strings.jsonl": Outcome(5, 3, klass="wrong types"),
    "csv_numbers_and_booleans_as_text.csv": Outcome(6, 4, klass="wrong types"),
    "criticality_out_of_range.jsonl": Outcome(8, 5, klass="wrong types"),
    "float_criticality.jsonl": Outcome(5, 4, klass="wrong types"),
    "ids_of_other_types.jsonl": Outcome(6, 6, klass="wrong types"),
    "claims_of_other_types.jsonl": Outcome(7, 6, klass="wrong types"),
    "whitespace_and_empty_ids.jsonl": Outcome(4, 2, klass="wrong types"),
    "unknown_labels.jsonl": Outcome(8, 5, klass="unknown labels"),
    "unknown_dimensions.jsonl": Outcome(4, 2, klass="unknown labels"),
    "csv_unknown_labels_and_dimensions.csv": Outcome(4, 3, klass="unknown labels"),
    "long_identifiers.jsonl": Outcome(4, 3, klass="size limits"),
    # CSV shape
    "csv_ragged_rows.csv": Outcome(5, 3, klass="ragged CSV"),
    "csv_extra_columns.csv": Outcome(2, 0, klass="ragged CSV"),
    "csv_missing_labels_column.csv": Outcome(2, 2, klass="missing columns"),
    "csv_duplicate_header.csv": Outcome(1, 1, klass="missing columns"),
    "csv_semicolon_delimited.csv": Outcome(2, 2, klass="missing columns"),
    "csv_whitespace_header.csv": Outcome(1, 0, klass="ragged CSV"),
    "csv_only_claim_columns_empty.csv": Outcome(2, 1, klass="ragged CSV"),
    "csv_scattered_rows.csv": Outcome(2, 0, klass="ragged CSV"),
    "csv_unclosed_quote_at_end.csv": Outcome(refused="a quoted field opened here is never closed",
                                             klass="unclosed quote"),
    "csv_stray_quotes.csv": Outcome(2, 0, klass="unclosed quote"),
    "csv_multiline_fields.csv": Outcome(2, 0, klass="unclosed quote"),
    "csv_no_trailing_newline.csv": Outcome(2, 0, klass="ragged CSV"),
    "csv_blank_lines_around.csv": Outcome(2, 0, klass="empty files"),
    # empty files
    "empty.jsonl": Outcome(0, 0, klass="empty files"),
    "blank_lines_only.jsonl": Outcome(0, 0, klass="empty files"),
    "csv_empty.csv": Outcome(0, 0, klass="empty files"),
    "csv_header_only.csv": Outcome(0, 0, klass="empty files"),
    # accepted as they are: text that is data, not markup; what the importer ignores
    "markup_and_injection_text.jsonl": Outcome(3, 0, klass="injection text"),
    "csv_formula_and_markup.csv": Outcome(2, 0, klass="injection text"),
    "extra_fields_ignored.jsonl": Outcome(1, 0, klass="wrong types"),
    "same_id_twice.jsonl": Outcome(2, 0, klass="wrong types"),
    "forged_quarantine_reference.jsonl": Outcome(3, 0, klass="wrong types"),
    # issue 34, class 7: feedback far in the future (year 2999, the last second of 9999 in UTC, on one claim of two)
    "feedback_far_in_the_future.jsonl": Outcome(4, 3, klass="feedback in the future"),
    # issue 34, classes 1-3: JSON text inside a field, RAG result files record by record
    "embedded_json_in_a_field.jsonl": Outcome(5, 4, klass="JSON text inside a field"),
    "csv_embedded_json_in_a_cell.csv": Outcome(4, 3, klass="JSON text inside a field"),
    "ragchecker_lone_surrogate.json": Outcome(5, 1, klass="RAG result files"),
    "ragchecker_unreadable_queries.json": Outcome(5, 3, klass="RAG result files"),
}


def outcomes() -> dict[str, Outcome]:
    """Every input of the corpus (committed and generated) and its outcome."""
    return {**EXPECTED, **{name: outcome for name, (_, outcome) in GENERATED.items()}}


def corpus(folder: Path) -> Path:
    """The whole corpus in ``folder``: the committed files copied, the generated ones written."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in CORPUS.iterdir():
        if path.is_file() and path.name in EXPECTED:
            shutil.copyfile(path, folder / path.name)
    for build, _ in GENERATED.values():
        build(folder)
    return folder


# --- issue 34, class 4 (inbox): entries dropped into the running console's inbox --------------------------------
# Run through the inbox watcher, not the command line (tests/register/ingest/test_inbox_writers.py). Each builder
# puts one entry into the inbox, given a folder outside it that holds SECRET_FILE (whose text must never reach
# the register). A refused entry is moved unread to failed/ with a report naming what it is; a regular file
# imports as through ``python -m register import``.

INBOX_SECRET = "c0ffee" * 10 + "5ec7"
SECRET_FILE = "keys.json"


def inbox_outside(folder: Path) -> Path:
    """A folder outside the inbox with a secret in it (as the audit keyring sits beside the database)."""
    folder.mkdir(parents=True, exist_ok=True)
    secret = folder / SECRET_FILE
    secret.write_text(json.dumps({"keys": {"k1": {"secret": INBOX_SECRET}}}) + "\n")
    secret.chmod(0o600)
    return folder


def _inbox_folder(target: Path, outside: Path) -> None:
    target.mkdir()
    (target / "inside.jsonl").write_text(_lines(_ok("if-1")))


INBOX_ENTRIES: dict[str, tuple[Callable[[Path, Path], None], Outcome]] = {
    "symlink_to_a_secret.jsonl": (lambda target, outside: target.symlink_to(outside / SECRET_FILE),
                                  Outcome(refused="a symbolic link", klass="inbox links")),
    "dangling_symlink.jsonl": (lambda target, outside: target.symlink_to(outside / "gone.jsonl"),
                               Outcome(refused="a symbolic link", klass="inbox links")),
    "symlink_to_a_folder": (lambda target, outside: target.symlink_to(outside, target_is_directory=True),
                            Outcome(refused="a symbolic link", klass="inbox links")),
    "symlink_to_dev_zero.jsonl": (lambda target, outside: target.symlink_to("/dev/zero"),
                                  Outcome(refused="a symbolic link", klass="inbox links")),
    "hard_link_to_a_secret.jsonl": (lambda target, outside: os.link(outside / SECRET_FILE, target),
                                    Outcome(refused="a hard link", klass="inbox links")),
    "fifo.jsonl": (lambda target, outside: os.mkfifo(target), Outcome(refused="a FIFO", klass="inbox special files")),
    "folder_of_files": (_inbox_folder, Outcome(refused="a folder", klass="inbox special files")),
    "regular_beside_them.jsonl": (lambda target, outside: target.write_text(_lines(_ok("ib-1"), _ok("ib-2"))),
                                  Outcome(2, 0, klass="inbox regular files")),
    "no_final_newline.jsonl": (lambda target, outside: target.write_text(_lines(_ok("ib-3"))
                                                                         + json.dumps(_ok("ib-4"))),
                               Outcome(2, 0, klass="inbox regular files")),
    "last_line_never_finished.jsonl": (lambda target, outside: target.write_text(
        _lines(_ok("ib-5")) + '{"response_id": "ib-6", "cla'), Outcome(2, 1, klass="inbox regular files")),
}
