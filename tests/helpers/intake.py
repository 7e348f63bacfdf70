"""What an import did, in a form that compares across the ways in (CLI, upload page, inbox).

``outcome(report_dict, store)`` keeps the report's counts and quarantined records (not its batch or
score-run ids, which depend on what the database held before) and the quarantine rows the import
stored, so two imports of the same file into two databases can be compared with ``==``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from register.ingest.reports import COUNTS
from tests.helpers.paths import REPO_ROOT

IMPORT_DATA = REPO_ROOT / "tests" / "data" / "import"
MIXED_JSONL = IMPORT_DATA / "intake_mixed.jsonl"  # good records, a revision, an unchanged one, five kinds of bad
MIXED_CSV = IMPORT_DATA / "intake_mixed.csv"


def write_mixed_parquet(target: Path) -> Path:
    """The CSV fixture as Parquet (every column text, as the CSV reader sees it)."""
    lines = MIXED_CSV.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    rows = [line.split(",") for line in lines[1:]]
    columns = {name: [row[i] or None for row in rows] for i, name in enumerate(header)}
    pq.write_table(pa.table(columns), target)
    return target


def outcome(report: dict, store, source_name: str | None = None) -> dict:
    """Counts, quarantined records and stored quarantine rows of one import (ids left out); ``store=None``
    when the database is not at hand (``stored_quarantine`` is then empty)."""
    where, params = ("WHERE source_name = ?", [source_name]) if source_name else ("", [])
    stored = [] if store is None else store.query(
        f"SELECT source_name, location, response_id, raw, reasons, status FROM quarantine {where} "
        "ORDER BY source_name, location", params)
    return {
        "counts": {name: report[name] for name in COUNTS},
        "balanced": report["balanced"],
        "per_file": [{name: b[name] for name in (*COUNTS, "source_name", "format")} for b in report["batches"]],
        "quarantined_records": sorted(json.dumps(q, sort_keys=True) for q in report["quarantined_records"]),
        "stored_quarantine": [(*row[:4], json.loads(row[4]) if isinstance(row[4], str) else row[4], row[5])
                              for row in stored],
    }


def cli_outcome(path: Path, database: Path, capsys) -> dict:
    """What ``python -m register --db DATABASE import PATH --json`` reports and stores (the reference the
    other ways in are held to), run in this process."""
    from register import Store
    from register.cli import main
    from tests.helpers.cli import call_main

    result = call_main(main, ["--db", database, "import", path, "--json", "--quiet"], capsys)
    assert result.returncode in (0, 2), result.stderr
    store = Store(database)
    try:
        return outcome(json.loads(result.stdout), store)
    finally:
        store.close()
