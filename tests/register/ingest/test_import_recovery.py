"""Usability and recovery of ``python -m register import`` (issue 10, section 1).

A fresh database file is initialised by the import itself; ``--chunk-size`` below 1 is a usage error; an
import stopped halfway leaves an unfinished batch that ``status`` shows and ``import --resume FILE``
finishes (reconciled counts, every record of the file in, audited); a record that passes validation
but cannot be stored is quarantined alone instead of rolling its chunk back.
"""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Store
from register.db.store import Change
from register.errors import DatabaseError, RegisterError
from register.ingest import batches, records
from register.ingest.importer import import_path


def write_records(path, count: int, prefix: str = "r") -> None:
    path.write_text("".join(json.dumps({"response_id": f"{prefix}-{i}", "claims": [{"labels": ["SUPPORTED"]}]})
                            + "\n" for i in range(count)), encoding="utf-8")


def db_query(db, sql: str, params=()) -> list[tuple]:
    store = Store(db)
    try:
        return store.query(sql, list(params))
    finally:
        store.close()


def test_import_on_a_fresh_database_file_initialises_it(register_cli, tmp_path):
    cli = register_cli()
    source = tmp_path / "a.jsonl"
    write_records(source, 3)
    done = cli("import", "--json", source)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["batches"][0]["scored"] == 3  # stdout is the report alone
    assert "initialised" in done.stderr and "default scoring profile v1" in done.stderr
    assert db_query(cli.db, "SELECT count(*) FROM scores WHERE is_current") == [(3,)]
    again = cli("import", source)
    assert again.returncode == 0 and "initialised" not in again.stderr


@pytest.mark.parametrize("size", ["0", "-1", "-5000", "many"])
def test_a_chunk_size_below_one_is_a_usage_error(register_cli, tmp_path, size):
    cli = register_cli()
    source = tmp_path / "a.jsonl"
    write_records(source, 2)
    done = cli("import", "--chunk-size", size, source)
    assert done.returncode == 64
    assert "--chunk-size" in done.stderr and done.stdout == ""


def interrupt_after(monkeypatch, chunks: int) -> None:
    """Make the import stop (as Ctrl-C or a kill would) once ``chunks`` chunks were committed."""
    real = batches.write_chunk
    calls = {"n": 0}

    def stopping(*args, **kwargs):
        if calls["n"] == chunks:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(batches, "write_chunk", stopping)


def test_an_interrupted_import_is_shown_by_status_and_finished_by_resume(register_cli, tmp_path, monkeypatch):
    cli = register_cli("Casey CLI")
    source = tmp_path / "answers.jsonl"
    write_records(source, 25)
    (tmp_path / "bad.jsonl").write_text("")
    lines = source.read_text().splitlines()
    lines[13] = '{"response_id": "r-13", "claims": [{"labels": ["NOPE"]}]}'  # quarantined, in the second chunk
    source.write_text("\n".join(lines) + "\n")
    interrupt_after(monkeypatch, 2)
    stopped = cli("import", "--chunk-size", "10", source)
    assert stopped.returncode == 1
    assert "python -m register import --resume" in stopped.stderr
    monkeypatch.undo()
    monkeypatch.setenv("HRI_DB", str(cli.db))
    monkeypatch.setenv("HRI_ACTOR", "Casey CLI")

    status = cli("status").stdout
    assert "unfinished_batches: 1" in status
    assert "batch 1 answers.jsonl: 20 records stored (19 accepted, 1 quarantined), started" in status
    assert "finish it: python -m register import --resume answers.jsonl" in status

    resumed = cli("import", "--resume", "--json", source)
    assert resumed.returncode == 2, resumed.stderr
    report = json.loads(resumed.stdout)
    (batch,) = report["batches"]
    assert (batch["batch_id"], batch["records"], batch["accepted"], batch["quarantined"]) == (1, 25, 24, 1)
    assert "resumed after 20 stored records" in " ".join(batch["notes"])
    assert db_query(cli.db, "SELECT records_total, accepted, new_responses, quarantined, finished_at IS NOT NULL "
                            "FROM import_batches") == [(25, 24, 24, 1, True)]
    assert db_query(cli.db, "SELECT count(*) FROM responses") == [(24,)]
    assert db_query(cli.db, "SELECT count(*) FROM scores WHERE is_current") == [(24,)]
    assert db_query(cli.db, "SELECT count(*) FROM quarantine") == [(1,)]
    actions = [a for (a,) in db_query(cli.db, "SELECT action FROM audit_events WHERE action LIKE 'import.%' "
                                              "ORDER BY seq")]
    assert actions == ["import.start", "import.chunk", "import.chunk", "import.resume", "import.chunk",
                       "import.batch"]
    assert "unfinished_batches: 0" in cli("status").stdout
    assert cli("audit", "verify").returncode == 0


def test_resume_of_a_changed_file_closes_the_old_batch_and_imports_anew(store, tmp_path, monkeypatch):
    source = tmp_path / "answers.jsonl"
    write_records(source, 12)
    interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        import_path(store, SYSTEM, source, chunk_size=5)
    monkeypatch.undo()
    write_records(source, 14)  # the file changed since
    report = import_path(store, SYSTEM, source, chunk_size=5, resume=True)
    assert [(b.batch_id, b.records, b.new_responses, b.unchanged) for b in report.batches] == [(2, 14, 9, 5)]
    assert store.query("SELECT batch_id, records_total, finished_at IS NOT NULL FROM import_batches ORDER BY 1") == \
        [(1, 5, True), (2, 14, True)]
    closed = json.loads(store.query_one("SELECT after FROM audit_events WHERE action = 'import.close'")[0])
    assert closed["records"] == 5 and "changed" in closed["reason"]
    assert any("batch 1" in note for note in report.notes)


def test_resume_refuses_a_batch_whose_stored_rows_do_not_match_its_counts(store, tmp_path, monkeypatch):
    source = tmp_path / "answers.jsonl"
    write_records(source, 12)
    interrupt_after(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        import_path(store, SYSTEM, source, chunk_size=5)
    monkeypatch.undo()

    def tamper(tx) -> Change:
        tx.execute("DELETE FROM responses WHERE response_id = 'r-0'")
        tx.execute("DELETE FROM response_ids WHERE id_hash = md5_number_lower('r-0')")  # gone without a trace
        return Change("responses", "r-0")

    store.write(SYSTEM, "test.tamper", tamper)
    with pytest.raises(RegisterError, match="batch 1 .* 4 responses but its counts say 5"):
        import_path(store, SYSTEM, source, chunk_size=5, resume=True)
    assert store.query_one("SELECT finished_at FROM import_batches WHERE batch_id = 1")[0] is None


@pytest.mark.parametrize("bulk", [True, False], ids=["bulk-checked", "per-record"])
def test_a_record_that_cannot_be_stored_is_quarantined_alone(store, tmp_path, monkeypatch, bulk):
    source = tmp_path / "answers.jsonl"
    write_records(source, 9)
    real = records.merge_staged

    def failing(tx, batch_id, at, staged_r, staged_c):
        if "r-4" in staged_r.column("response_id").to_pylist():
            raise DatabaseError("Conversion Error: the database refused a value")
        return real(tx, batch_id, at, staged_r, staged_c)

    monkeypatch.setattr(batches, "BULK_VALIDATION", bulk)
    monkeypatch.setattr(batches, "merge_staged", failing)  # plain records, staged in bulk
    monkeypatch.setattr(records, "merge_staged", failing)  # records validated one by one
    report = import_path(store, SYSTEM, source, chunk_size=100)
    assert (report.records, report.accepted, report.quarantined) == (9, 8, 1)
    ((location, rid, reasons),) = store.query("SELECT location, response_id, reasons FROM quarantine")
    assert (location, rid) == ("line 5", "r-4")
    assert "could not be stored" in json.loads(reasons)[0]["message"]
    assert store.query_one("SELECT count(*) FROM responses")[0] == 8
    assert [q.location for q in report.quarantined_records] == ["line 5"]


def test_a_database_that_fails_every_write_still_stops_the_import(store, tmp_path, monkeypatch):
    source = tmp_path / "answers.jsonl"
    write_records(source, 4)
    for module, name in ((batches, "insert_responses"), (batches, "merge_staged")):
        monkeypatch.setattr(module, name, lambda *a: (_ for _ in ()).throw(DatabaseError("disk full")))
    monkeypatch.setattr(batches, "_insert_quarantine", lambda *a: (_ for _ in ()).throw(DatabaseError("disk full")))
    with pytest.raises(DatabaseError, match="disk full"):
        import_path(store, SYSTEM, source)
    assert store.query_one("SELECT count(*) FROM quarantine")[0] == 0
