"""The import contract of issue 10, checked from outside on the hostile corpus (``tests.helpers.hostile``).

For every input, ``python -m register import --json PATH`` ends either

- with exit 0 or 2 and one JSON report on stdout (nothing else there) in which accepted + quarantined =
  records, every quarantined record has a non-empty reason, and the counts are the expected ones; or
- refused as a whole: exit 1, the word "refused" and the file's name on stderr, nothing on stdout and
  nothing written to the database.

After it, a good file still imports and scores, ``rescore`` works and ``audit verify`` passes. The
commands run in this process per input, and once in a subprocess over the whole corpus folder. The
pure scorer (``python -m hri_core score``) reads every text input without a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from register import Store
from tests.helpers.cli import run_module
from tests.helpers.fresh import fresh_store
from tests.helpers.hostile import CORPUS, EXPECTED, GENERATED, GOOD_FILE, corpus, outcomes

OUTCOMES = outcomes()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """The whole corpus, committed and generated, in one folder (built once for the module)."""
    return corpus(tmp_path_factory.mktemp("hostile"))


def rows(db: Path, sql: str) -> list[tuple]:
    store = Store(db)
    try:
        return store.query(sql)
    finally:
        store.close()


def test_every_committed_input_has_an_expected_outcome_and_the_corpus_is_large():
    assert {p.name for p in CORPUS.iterdir()} == set(EXPECTED)
    assert not set(EXPECTED) & set(GENERATED)
    assert len(OUTCOMES) >= 100
    assert all(o.klass for o in OUTCOMES.values())
    refused = sum(o.refused is not None for o in OUTCOMES.values())
    assert 10 <= refused < len(OUTCOMES) / 4  # most hostile input is quarantined record by record


@pytest.mark.parametrize("name", sorted(OUTCOMES))
def test_the_import_contract_holds_and_the_register_still_works_after(register_cli, hostile, name):
    cli = register_cli()
    fresh_store(cli.db).close()  # the register the first command would migrate, copied (122 cases)
    expected = OUTCOMES[name]
    done = cli("import", "--json", "--quiet", hostile / name)
    if expected.refused is not None:
        assert done.returncode == 1, done.stdout + done.stderr
        assert done.stdout == ""
        assert "refused" in done.stderr.lower() and expected.refused in done.stderr
        written = rows(cli.db, "SELECT (SELECT count(*) FROM import_batches) + (SELECT count(*) FROM responses) "
                               "+ (SELECT count(*) FROM quarantine)")
        assert written == [(0,)]
    else:
        assert done.returncode == (2 if expected.quarantined else 0), done.stderr
        report = json.loads(done.stdout)  # the whole of stdout is one JSON document
        assert report["accepted"] + report["quarantined"] == report["records"]
        assert report["balanced"] is True
        assert (report["records"], report["quarantined"]) == (expected.records, expected.quarantined)
        reasons = rows(cli.db, "SELECT location, reasons FROM quarantine")
        assert len(reasons) == expected.quarantined
        for location, stored in reasons:
            stored = json.loads(stored)
            assert stored and all(r["message"].strip() for r in stored), (location, stored)
        for record in report["quarantined_records"]:
            assert record["problems"] and all(p["message"].strip() for p in record["problems"]), record
        assert rows(cli.db, "SELECT count(*) FROM import_batches WHERE finished_at IS NULL") == [(0,)]

    good = cli("import", "--json", "--quiet", GOOD_FILE)
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["batches"][0]["scored"] == 3
    assert cli("rescore").returncode == 0
    assert cli("audit", "verify").returncode == 0
    status = cli("status").stdout
    responses = rows(cli.db, "SELECT count(*) FROM responses WHERE is_current")[0][0]
    assert f"current_scores: {responses}\n" in status and "scoring_failures: 0" in status


@pytest.mark.parametrize("name", sorted(n for n in OUTCOMES if n.endswith((".jsonl", ".json", ".csv"))))
def test_the_pure_scorer_reads_every_text_input_without_a_traceback(hri_core_cli_anywhere, hostile, name):
    done = hri_core_cli_anywhere("score", hostile / name, "--as-of", "2026-12-01T00:00:00Z")
    assert done.returncode in (0, 1, 2), done.stderr
    assert "Traceback" not in done.stderr
    scored = [json.loads(line) for line in done.stdout.splitlines()]
    assert all(0.0 <= s["hri"] <= 1.0 for s in scored)


@pytest.fixture
def hri_core_cli_anywhere(capsys):
    from hri_core.cli import main
    from tests.helpers.cli import call_main

    return lambda *args: call_main(main, args, capsys)


def test_the_whole_corpus_through_the_command_line_in_a_subprocess(hostile, tmp_path):
    importable = tmp_path / "importable"
    importable.mkdir()
    for name, outcome in OUTCOMES.items():
        if outcome.refused is None and (hostile / name).is_file():
            shutil.copyfile(hostile / name, importable / name)
    db = {"HRI_DB": str(tmp_path / "corpus.duckdb")}

    refused = run_module("register", "import", "--json", "--quiet", hostile, env=db)  # the folder with every file
    assert refused.returncode == 1 and "File refused" in refused.stderr and refused.stdout == ""
    assert rows(tmp_path / "corpus.duckdb", "SELECT count(*) FROM import_batches") == [(0,)]

    done = run_module("register", "import", "--json", "--quiet", importable, env=db)
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    files = {name: o for name, o in OUTCOMES.items() if (importable / name).exists()}
    assert len(report["batches"]) == len(files)
    assert report["accepted"] + report["quarantined"] == report["records"]
    assert (report["records"], report["quarantined"]) == (sum(o.records for o in files.values()),
                                                          sum(o.quarantined for o in files.values()))
    listed = run_module("register", "quarantine", "list", "--json", "--all", env=db)
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert entries and all(e["reasons"] and all(r["message"] for r in e["reasons"]) for e in entries)
    # every open row exported to fix, whatever its text holds (issue 34: one deep or long-number row wrote 0 bytes)
    exported = run_module("register", "quarantine", "export", tmp_path / "quarantine.jsonl", env=db)
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in (tmp_path / "quarantine.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(line["_quarantine"]["quarantine_id"] for line in lines) == sorted(
        e["quarantine_id"] for e in entries if e["status"] == "open")

    for args, code in ((("import", "--quiet", GOOD_FILE), 0), (("rescore",), 0), (("audit", "verify"), 0)):
        result = run_module("register", *args, env=db)
        assert result.returncode == code, (args, result.stderr)
    status = run_module("register", "status", env=db).stdout
    assert "scoring_failures: 0" in status and "unfinished_batches: 0" in status

