"""``python -m register checklist sign RUN_ID --decisions FILE``: the console's sign-off from the command line (and so
through the hand-off while the console runs), with the same refusals."""

from __future__ import annotations

import json

import pytest

from register import Store
from register.governance.checks import CHECKS


@pytest.fixture
def cli(register_cli):
    return register_cli("Rita Reviewer")


def _recorded_run(cli) -> int:
    assert cli("init").returncode == 0
    assert cli("checklist", "run", "--record").returncode == 0
    store = Store(cli.db)
    try:
        return store.scalar("SELECT max(run_id) FROM checklist_runs")
    finally:
        store.close()


def test_a_recorded_run_is_signed_with_a_decision_per_item(cli, tmp_path):
    run = _recorded_run(cli)
    decisions = tmp_path / "decisions.json"
    decisions.write_text(json.dumps({str(c.no): {"decision": "waived", "reason": "pilot, no release"} for c in CHECKS}))
    result = cli("checklist", "sign", str(run), "--decisions", str(decisions))
    assert result.returncode == 0, result.stderr
    store = Store(cli.db)
    try:
        row = store.one("SELECT signoff_id, signed_by, outcome FROM checklist_signoffs WHERE run_id = ?", [run])
    finally:
        store.close()
    assert result.stdout.strip() == f"checklist run {run} signed: sign-off {row['signoff_id']}"
    assert (row["signed_by"], row["outcome"]) == ("Rita Reviewer", "passed")
    again = cli("checklist", "sign", str(run), "--decisions", str(decisions))
    assert again.returncode == 1 and again.stderr.startswith("Needs a second person:")


def test_a_sign_off_missing_items_or_not_json_is_refused_naming_them(cli, tmp_path):
    run = _recorded_run(cli)
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"1": {"decision": "waived", "reason": "r"}}))
    missing = cli("checklist", "sign", str(run), "--decisions", str(partial))
    assert missing.returncode == 1 and missing.stderr.startswith("Not signed: fix these checklist items:")
    assert "item 2 (" in missing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"1": ')
    refused = cli("checklist", "sign", str(run), "--decisions", str(broken))
    assert refused.returncode == 1 and "decisions" in refused.stderr
    store = Store(cli.db)
    try:
        assert store.scalar("SELECT count(*) FROM checklist_signoffs") == 0
    finally:
        store.close()
