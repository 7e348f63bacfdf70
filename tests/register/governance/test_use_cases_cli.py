"""``python -m register governance import|export usecases FILE``: the use-case register as CSV and Excel files, with
the exit codes of ``governance import sources`` (0; 2 when a row was rejected, the good rows saved; 1 a refused
file), a round trip that changes nothing, and cells a spreadsheet would run escaped."""

from __future__ import annotations

import csv
from datetime import date

import pandas as pd
import pytest

from register import Store

HEADER = "use_case_id,owner,purpose,status,allowed_categories,requester_roles,approved_by,review_by"
GOOD = [
    "supplier-contracts,alice,Answer supplier contract questions,approved,legal;contractual,buyer;contract-manager,"
    "bob,2031-06-30",
    "clinical-lookup,carol,Look up dosage guidance,proposed,health;safety,clinician,,",
    "hr-policies,dave,Explain leave policies,suspended,general,employee;hr partner,erin,2026-01-31",
]


@pytest.fixture
def cli(register_cli):
    run = register_cli()

    def call(*args):
        return run("--db", str(run.db), *map(str, args))

    call.db = run.db
    return call


def _rows(db) -> dict[str, dict]:
    store = Store(db)
    try:
        return {r["use_case_id"]: r for r in store.dicts("SELECT * FROM use_case_register ORDER BY use_case_id")}
    finally:
        store.close()


def _read_csv(path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_import_then_export_round_trips_and_reimporting_changes_nothing(cli, tmp_path):
    source = tmp_path / "usecases.csv"
    source.write_text("\n".join([HEADER + ",allowed_topics,evidence_link,content_hash"] + [
        GOOD[0] + ",service levels;termination fees,https://intranet.example/approvals/7,sha256:0f3a",
        GOOD[1] + ",,,", GOOD[2] + ",,,"]) + "\n")
    imported = cli("governance", "import", "usecases", source)
    assert imported.returncode == 0, imported.stderr
    assert "3 rows: 3 new, 0 updated, 0 unchanged, 0 rejected" in imported.stdout
    stored = _rows(cli.db)
    contracts = stored["supplier-contracts"]
    assert list(contracts["allowed_categories"]) == ["legal", "contractual"]
    assert list(contracts["requester_roles"]) == ["buyer", "contract-manager"]
    assert list(contracts["allowed_topics"]) == ["service levels", "termination fees"]
    assert (contracts["status"], contracts["approved_by"], contracts["review_by"]) == ("approved", "bob",
                                                                                      date(2031, 6, 30))
    assert (contracts["evidence_link"], contracts["evidence_hash"]) == ("https://intranet.example/approvals/7",
                                                                      "sha256:0f3a")  # content_hash: an alias
    assert stored["hr-policies"]["requester_roles"] == ["employee", "hr partner"]

    out = tmp_path / "export.csv"
    exported = cli("governance", "export", "usecases", out)
    assert exported.returncode == 0 and "3 rows written" in exported.stdout
    rows = {r["use_case_id"]: r for r in _read_csv(out)}
    assert set(HEADER.split(",")) <= set(next(iter(rows.values())))
    assert rows["supplier-contracts"]["allowed_categories"] == "legal;contractual"
    assert rows["supplier-contracts"]["requester_roles"] == "buyer;contract-manager"
    assert rows["supplier-contracts"]["review_by"] == "2031-06-30"
    assert rows["supplier-contracts"]["evidence_hash"] == "sha256:0f3a"
    assert rows["clinical-lookup"]["approved_by"] == "" and rows["clinical-lookup"]["review_by"] == ""

    again = cli("governance", "import", "usecases", out)
    assert again.returncode == 0 and "3 rows: 0 new, 0 updated, 3 unchanged, 0 rejected" in again.stdout
    assert {k: r["row_version"] for k, r in _rows(cli.db).items()} == {k: 1 for k in rows}


def test_a_file_with_bad_rows_exits_2_naming_each_row_and_field_and_saves_the_good_rows(cli, tmp_path):
    source = tmp_path / "usecases.csv"
    source.write_text("\n".join([
        HEADER, GOOD[0],
        "self-approved,frank,Approve my own use case,approved,general,analyst,Frank,2031-01-01",
        GOOD[1],
        "broken,gina,Everything wrong,paused,gossip,analyst,,someday",
    ]) + "\n")
    result = cli("governance", "import", "usecases", source)
    assert result.returncode == 2
    assert "4 rows: 2 new, 0 updated, 0 unchanged, 2 rejected" in result.stdout
    assert "row 2, approved_by: 'Frank' is the use case's owner: a second person approves it (four eyes)" \
        in result.stderr
    for where in ("row 4, status", "row 4, allowed_categories", "row 4, review_by"):
        assert where in result.stderr
    assert sorted(_rows(cli.db)) == ["clinical-lookup", "supplier-contracts"]

    # updates by key: the corrected file updates the saved rows and adds the fixed one
    source.write_text("\n".join([
        HEADER, GOOD[0].replace("2031-06-30", "2032-06-30"),
        "self-approved,frank,Approve my own use case,approved,general,analyst,gina,2031-01-01", GOOD[1]]) + "\n")
    fixed = cli("governance", "import", "usecases", source)
    assert fixed.returncode == 0, fixed.stderr
    assert "3 rows: 1 new, 1 updated, 1 unchanged, 0 rejected" in fixed.stdout
    stored = _rows(cli.db)
    assert stored["supplier-contracts"]["review_by"] == date(2032, 6, 30)
    assert stored["supplier-contracts"]["row_version"] == 2


def test_a_file_that_is_not_a_use_case_register_is_refused_with_exit_1(cli, tmp_path):
    sources = tmp_path / "sources.csv"
    sources.write_text("source_id,title,source_type\ns-1,A title,web page\n")
    refused = cli("governance", "import", "usecases", sources)
    assert refused.returncode == 1
    assert "missing column(s) use_case_id, owner, purpose, status" in refused.stderr
    text = tmp_path / "usecases.txt"
    text.write_text(HEADER + "\n" + GOOD[0] + "\n")
    assert cli("governance", "import", "usecases", text).returncode == 1
    assert not _rows(cli.db)


def test_an_excel_file_imports_and_exports(cli, tmp_path):
    workbook = tmp_path / "usecases.xlsx"
    pd.DataFrame([{"use_case_id": "supplier-contracts", "owner": "alice", "purpose": "Answer contract questions",
                   "status": "Approved", "allowed_categories": "legal; contractual", "requester_roles": "buyer",
                   "approved_by": "bob", "review_by": pd.Timestamp("2031-06-30")},
                  {"use_case_id": "clinical-lookup", "owner": "carol", "purpose": "Dosage guidance",
                   "status": "retired", "allowed_categories": "health", "requester_roles": "clinician",
                   "approved_by": None, "review_by": None}]).to_excel(workbook, index=False)
    imported = cli("governance", "import", "usecases", workbook)
    assert imported.returncode == 0, imported.stderr
    stored = _rows(cli.db)
    assert (stored["supplier-contracts"]["status"], stored["supplier-contracts"]["review_by"]) == (
        "approved", date(2031, 6, 30))  # a date cell and a capitalised status
    out = tmp_path / "export.xlsx"
    assert cli("governance", "export", "usecases", out).returncode == 0
    exported = pd.read_excel(out, dtype=str, keep_default_na=False).set_index("use_case_id")
    assert exported.loc["supplier-contracts", "allowed_categories"] == "legal;contractual"
    assert exported.loc["supplier-contracts", "review_by"] == "2031-06-30"
    assert exported.loc["clinical-lookup", "status"] == "retired"
    again = cli("governance", "import", "usecases", out)
    assert again.returncode == 0 and "0 new, 0 updated, 2 unchanged" in again.stdout


def test_export_escapes_cells_a_spreadsheet_would_run_and_import_restores_them(cli, tmp_path):
    source = tmp_path / "usecases.csv"
    source.write_text(HEADER + ",notes\n"
                      '=cmd|calc,@owner,"=HYPERLINK(""https://evil.example"",""click"")",proposed,general,analyst,,,'
                      "+1 call me\n")
    assert cli("governance", "import", "usecases", source).returncode == 0
    stored = _rows(cli.db)["=cmd|calc"]
    assert (stored["owner"], stored["notes"]) == ("@owner", "+1 call me")
    out = tmp_path / "export.csv"
    assert cli("governance", "export", "usecases", out).returncode == 0
    (row,) = _read_csv(out)
    assert row["use_case_id"] == "'=cmd|calc" and row["owner"] == "'@owner" and row["notes"] == "'+1 call me"
    assert row["purpose"] == "'=HYPERLINK(\"https://evil.example\",\"click\")"
    again = cli("governance", "import", "usecases", out)
    assert again.returncode == 0 and "1 unchanged" in again.stdout  # the escape is undone on the way back in
