"""Issue 34, class 2: RAGChecker, RAGAS and flat Parquet files go record by record, exactly like JSON Lines, through
the command line. One query or row that cannot be read (a lone surrogate, a duplicate key, NaN, a 5,000-digit
number, deep nesting, a 100,000-character run of "-", a date beyond 9999) is quarantined alone, naming it and the
field; every other record is stored; counts balance. Ids are text or integers: a float id is refused."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from register import Store
from tests.helpers.rag import checked_query

DEEP = "[" * 100_000 + "]" * 100_000


def stored(db) -> tuple[list[str], dict[str, list[tuple[str, str]]]]:
    store = Store(db)
    try:
        ids = [r for (r,) in store.query("SELECT response_id FROM responses WHERE is_current ORDER BY response_id")]
        rows = store.query("SELECT location, reasons FROM quarantine ORDER BY quarantine_id")
        assert store.scalar("SELECT count(*) FROM import_batches WHERE finished_at IS NULL") == 0
    finally:
        store.close()
    return ids, {location: [(r["field"], r["message"]) for r in json.loads(reasons)] for location, reasons in rows}


def imported(cli, path, records: int, quarantined: int) -> dict:
    done = cli("import", "--json", "--quiet", path)
    assert done.returncode == (2 if quarantined else 0), done.stderr
    report = json.loads(done.stdout)
    assert report["balanced"] and (report["records"], report["quarantined"]) == (records, quarantined)
    return report


def ragchecker_file(path, bad: dict[int, str]) -> None:
    """Five checked queries (ids "0".."4") pretty-printed as RAGChecker writes them; query ``i`` in ``bad`` has the
    text of its "response" field replaced by the given JSON text (a hostile value)."""
    rng = random.Random(3)
    queries = [checked_query(rng, str(i), chunks=1, claims=1, gt_claims=0) for i in range(5)]
    marker = "@@{}@@"
    for index in bad:
        queries[index]["response"] = marker.format(index)
    text = json.dumps({"results": queries, "metrics": {"overall_metrics": {}}}, indent=2)
    for index, value in bad.items():
        text = text.replace(json.dumps(marker.format(index)), value)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("value", "field", "reason"), [
    ('"\\ud800 lone"', "response", "lone surrogate"),
    ('"a", "response": "b"', "response", "duplicate key 'response'"),
    ("NaN", "response", "NaN is not a JSON value"),
    ("9" * 5000, "response", "5,000 digits"),
    (DEEP, "response", "100,001 levels deep, over the limit"),
], ids=["lone-surrogate", "duplicate-key", "nan", "5000-digits", "deep"])
def test_one_unreadable_ragchecker_query_is_quarantined_and_the_others_stored(register_cli, tmp_path, value, field,
                                                                              reason):
    path = tmp_path / "checking_outputs.json"
    ragchecker_file(path, {2: value})
    cli = register_cli()
    imported(cli, path, 5, 1)
    ids, found = stored(cli.db)
    assert ids == [f"checking_outputs:{i}" for i in (0, 1, 3, 4)]
    ((where, message),) = found["query 3"]
    assert where == field and reason in message


def test_a_ragchecker_file_cut_short_keeps_the_queries_before_the_cut(register_cli, tmp_path):
    path = tmp_path / "cut.json"
    ragchecker_file(path, {})
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index('"query_id": "3"')], encoding="utf-8")
    cli = register_cli()
    imported(cli, path, 4, 1)
    assert stored(cli.db)[0] == [f"cut:{i}" for i in range(3)]


def write_ragas_csv(path, cell: str) -> None:
    path.write_text("user_input,retrieved_contexts,response,faithfulness\n"
                    'q1,"[""a""]",r1,0.5\n'
                    f'q2,"{cell}",r2,0.5\n'
                    "q3,\"['b', 'c']\",r3,0.9\n", encoding="utf-8")


@pytest.mark.parametrize(("cell", "reason"), [
    (DEEP, "nested 100,000 levels deep"),
    ("-" * 100_000, "not a list of strings"),
    ("[" + "-" * 100_000 + "1]", "not a list of strings"),
], ids=["deep", "dashes", "dashes-in-a-list"])
def test_one_unreadable_ragas_cell_is_quarantined_naming_its_row_and_column(register_cli, tmp_path, cell, reason):
    path = tmp_path / "ragas.csv"
    write_ragas_csv(path, cell)
    cli = register_cli()
    imported(cli, path, 3, 1)
    ids, found = stored(cli.db)
    assert ids == ["ragas:2", "ragas:4"]
    ((field, message),) = found["row 3"]
    assert field == "retrieved_contexts" and reason in message


def test_a_ragas_parquet_value_that_cannot_be_read_is_its_rows_problem(register_cli, tmp_path):
    far = int((datetime(9999, 12, 31, tzinfo=UTC).timestamp() + 400 * 86400) * 1_000_000)
    path = tmp_path / "ragas.parquet"
    pq.write_table(pa.table({"user_input": ["q1", "q2", "q3"], "retrieved_contexts": [["a"], ["b"], ["c"]],
                             "faithfulness": [0.5, 0.6, 0.7],
                             "created_at": pa.array([0, far, 10 ** 15], pa.timestamp("us", tz="UTC"))}), path)
    cli = register_cli()
    imported(cli, path, 3, 1)
    ids, found = stored(cli.db)
    assert ids == ["ragas:1", "ragas:3"] and [f for f, _ in found["row 2"]] == ["created_at"]


@pytest.mark.parametrize("ragas", [False, True])
def test_float_response_ids_in_parquet_are_refused_naming_the_column(register_cli, tmp_path, ragas):
    path = tmp_path / "floats.parquet"
    columns = {"user_input": ["q"] * 4} if ragas else {"labels": ["SUPPORTED"] * 4}
    pq.write_table(pa.table({"response_id": pa.array([1.0, 1e300, float("nan"), None], pa.float64()), **columns}),
                   path)
    cli = register_cli()
    imported(cli, path, 4, 3 if ragas else 4)  # RAGAS: a row without an id takes a generated one
    ids, found = stored(cli.db)
    assert ids == (["floats:4"] if ragas else [])
    for row, shown in ((1, "1.0"), (2, "1e+300"), (3, "nan")):
        ((field, message), *_) = found[f"row {row}"]
        assert field == "response_id" and shown in message and "an id is text or an integer" in message


def test_integer_ids_of_a_typed_parquet_column_are_their_digits(register_cli, tmp_path):
    path = tmp_path / "ints.parquet"
    pq.write_table(pa.table({"response_id": pa.array([7, 7, 8], pa.int64()), "labels": ["SUPPORTED"] * 3,
                             "claim_id": pa.array([1, 2, 1], pa.int32()), "source_id": pa.array([10, None, 11])}), path)
    cli = register_cli()
    imported(cli, path, 2, 0)
    store = Store(cli.db)
    try:
        claims = store.query("SELECT response_id, claim_id, source_id FROM claims WHERE is_current ORDER BY 1, 2")
    finally:
        store.close()
    assert claims == [("7", "1", "10"), ("7", "2", None), ("8", "1", "11")]
