"""A Parquet file whose data page is damaged mid-file: its readable row groups are imported, the unreadable one
is quarantined with a reason naming the file, the row group and its byte and row ranges, and the other files of
the import go on."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from register import SYSTEM
from register.ingest.importer import import_path
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


def _damaged_parquet(target):
    """Three row groups of the flat table (three responses each); the 'answer' column chunk of the second row group
    overwritten with 0xFF bytes. Returns (rows per group, the damaged chunk's first byte, its last byte)."""
    table = pacsv.read_csv(DATA / "responses.csv", convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    index = table.schema.get_field_index("response_id")
    groups = [table.set_column(index, "response_id", pa.array([f"g{g}-{rid}" for rid in
                                                               table.column("response_id").to_pylist()]))
              for g in range(3)]
    pq.write_table(pa.concat_tables(groups), target, row_group_size=table.num_rows)
    metadata = pq.ParquetFile(target).metadata
    chunk = metadata.row_group(1).column(metadata.schema.names.index("answer"))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(target.read_bytes())
    data[start:start + chunk.total_compressed_size] = b"\xff" * chunk.total_compressed_size
    target.write_bytes(bytes(data))
    return table.num_rows


def test_a_damaged_row_group_is_quarantined_and_the_rest_goes_on(store, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    rows = _damaged_parquet(folder / "a_damaged.parquet")
    (folder / "b_after.jsonl").write_bytes((DATA / "responses.jsonl").read_bytes())

    report = import_path(store, SYSTEM, folder, score=False)

    assert [b.source_name for b in report.batches] == ["a_damaged.parquet", "b_after.jsonl"]
    damaged = report.batches[0]
    assert damaged.accepted == 6 and damaged.quarantined == 1 and damaged.records == 7
    assert report.balanced
    stored = {rid for (rid,) in store.query("SELECT response_id FROM responses")}
    assert {r for r in stored if r.startswith("g0-")} and {r for r in stored if r.startswith("g2-")}
    assert not {r for r in stored if r.startswith("g1-")}
    ((location, reasons, raw),) = store.query("SELECT location, reasons, raw FROM quarantine")
    message = json.loads(reasons)[0]["message"]
    assert location == f"rows {rows + 1}-{2 * rows}"
    assert "a_damaged.parquet" in message and "row group 2 of 3" in message
    assert f"rows {rows + 1} to {2 * rows}" in message and "bytes " in message
    assert "a_damaged.parquet" in raw
    assert report.batches[1].accepted == 3
