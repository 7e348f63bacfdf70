"""A CSV field longer than the longest the importer reads (``CSV_FIELD_LIMIT``, 2**28 characters) quarantines its
record, naming the line and the field, and the records after it go through. The file (about 270 MB) is written by
streaming into a temporary folder and read without holding the long line in memory."""

from __future__ import annotations

import csv
import io
import json
import resource

from register import SYSTEM
from register.ingest.importer import import_path
from register.ingest.readers import CSV_FIELD_LIMIT
from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


def test_an_over_long_field_quarantines_its_record_and_the_rest_go_through(store, tmp_path):
    header, *rows = (DATA / "responses.csv").read_text(encoding="utf-8").splitlines()
    columns = next(csv.reader([header]))
    long_row = next(csv.reader([rows[6]]))  # r-002's first claim, on line 8
    long_row[columns.index("answer")] = "@LONG@"
    text = io.StringIO()
    csv.writer(text, lineterminator="").writerow(long_row)
    before, after = text.getvalue().split("@LONG@")
    after += "\n"
    path = tmp_path / "huge_field.csv"
    block = "x" * (1 << 20)
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(header + "\n" + "\n".join(rows[:6]) + "\n" + before)
        for _ in range((CSV_FIELD_LIMIT >> 20) + 1):
            out.write(block)
        out.write(after + "\n".join(rows[7:]) + "\n")
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    report = import_path(store, SYSTEM, path, score=False)

    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    path.unlink()
    (batch,) = report.batches
    assert batch.quarantined == 1 and batch.accepted >= 2 and report.balanced
    stored = {rid for (rid,) in store.query("SELECT response_id FROM responses")}
    assert {"r-001", "r-002", "r-003"} <= stored  # the records after the long one went through
    ((location, reasons, raw),) = store.query("SELECT location, reasons, raw FROM quarantine")
    (problem,) = json.loads(reasons)
    assert location == "row 8"
    assert problem["field"] == "answer"
    assert "line 8" in problem["message"] and f"{CSV_FIELD_LIMIT:,}" in problem["message"]
    assert len(raw) < 10_000 and json.loads(raw)["start"].startswith(before)
    # at most about the field limit is held (the field until it is known too long); before, the line whole, twice
    assert grown_mb < 600, f"the import held {grown_mb:.0f} MB more: the long line was read whole"
