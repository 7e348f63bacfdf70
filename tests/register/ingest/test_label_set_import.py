"""Import of label sets (issue 33, item 5): a claim whose labels contradict each other is quarantined with its
record, field and rule named, in JSON Lines, CSV and Parquet alike; the file's other records go through. (The bulk
JSON Lines check agrees with the per-record path: ``test_bulk.py``.)"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from register import SYSTEM
from register.ingest.importer import import_path

REFUSAL = "SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"


def _write(path, fmt: str) -> None:
    rows = [("ok-1", "c1", "SUPPORTED"), ("bad-1", "c1", "OUTDATED;CONTRADICTED"),
            ("bad-1", "c2", "UNSUPPORTED,SUPPORTED"), ("ok-2", "c1", "ACCESS_GAP,UNSUPPORTED")]
    if fmt == "jsonl":
        records: dict[str, list] = {}
        for rid, cid, labels in rows:
            records.setdefault(rid, []).append({"claim_id": cid, "labels": labels.replace(";", ",").split(",")})
        path.write_text("".join(json.dumps({"response_id": rid, "claims": claims}) + "\n"
                                for rid, claims in records.items()), encoding="utf-8")
    elif fmt == "csv":
        lines = "".join(f'{rid},{cid},"{labels}"\n' for rid, cid, labels in rows)
        path.write_text("response_id,claim_id,labels\n" + lines, encoding="utf-8")
    else:
        pq.write_table(pa.table({"response_id": [r[0] for r in rows], "claim_id": [r[1] for r in rows],
                                 "labels": [r[2] for r in rows]}), path)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_a_contradictory_label_set_is_quarantined_by_name_and_the_rest_imported(store, tmp_path, fmt):
    path = tmp_path / f"answers.{fmt}"
    _write(path, fmt)
    report = import_path(store, SYSTEM, path)
    assert (report.accepted, report.quarantined) == (2, 1)
    (record,) = report.quarantined_records
    assert record.response_id == "bad-1"
    (problem,) = record.problems
    assert problem["field"] == "claims[1].labels"
    # a flat table names the row too (CSV counts its header line)
    assert problem["message"] == {"jsonl": REFUSAL, "csv": f"row 4: {REFUSAL}", "parquet": f"row 3: {REFUSAL}"}[fmt]
    stored = store.query("SELECT response_id FROM responses WHERE is_current ORDER BY response_id")
    assert stored == [("ok-1",), ("ok-2",)]
