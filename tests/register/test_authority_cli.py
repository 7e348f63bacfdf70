"""``python -m register authority check [--json]``: exit 0 when every sourced claim passes, 2 with the
findings (response, claim, source, check, reason, proposed label) when any check fails."""

from __future__ import annotations

import json

from register import SYSTEM, Store
from register.governance.registers import add_row
from register.ingest.importer import import_path
from tests.helpers.authority import RECORDS, SOURCES, load_authority_register


def test_findings_exit_2_and_list_each_check_with_its_proposed_label(register_cli, tmp_path):
    run = register_cli()
    assert run("init").returncode == 0
    store = Store(run.db)
    try:
        load_authority_register(store, tmp_path)
    finally:
        store.close()
    result = run("authority", "check", "--json")
    assert result.returncode == 2, result.stderr
    found = json.loads(result.stdout)["findings"]
    by_check = {(f["response_id"], f["check"]): f for f in found}
    assert by_check[("au-restricted", "allowed")]["proposed_label"] == "ACCESS_GAP"
    assert by_check[("au-stale", "current")] == {
        "response_id": "au-stale", "revision": 1, "claim_id": "c1", "claim": "The claim of au-stale.",
        "source_id": "src-old", "check": "current", "problem": "stale source", "reason": "superseded by src-ok",
        "proposed_label": "OUTDATED"}
    assert by_check[("au-weak", "authoritative")]["proposed_label"] == "needs review"
    assert by_check[("au-contra", "current")]["proposed_label"] is None
    text = run("authority", "check")
    assert text.returncode == 2
    assert "au-expired rev 1 claim c1 on src-expiring: current: stale source" in text.stdout
    assert "-> proposed OUTDATED" in text.stdout


def test_no_findings_exit_0(register_cli, tmp_path):
    run = register_cli()
    assert run("init").returncode == 0
    store = Store(run.db)
    try:
        add_row(store, SYSTEM, "sources", SOURCES[0])  # src-ok: unrestricted, tier 1, current
        path = tmp_path / "ok.jsonl"
        path.write_text(json.dumps(RECORDS[0]) + "\n", encoding="utf-8")
        import_path(store, SYSTEM, path)
    finally:
        store.close()
    result = run("authority", "check", "--json")
    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout) == {"findings": [], "count": 0}
    assert "allowed, current and authoritative" in run("authority", "check").stdout
