"""``python -m register judge check|eval``: the judge commands wired into the register's command line (run in
this process), with the line contract, the exit codes and no database opened."""

from __future__ import annotations

import json

from tests.helpers.paths import REPO_ROOT

PAIRS = REPO_ROOT / "tests" / "data" / "judge" / "pairs.jsonl"
BAD = REPO_ROOT / "tests" / "data" / "judge" / "bad_pairs.jsonl"


def test_judge_check_prints_one_contract_line_per_pair_and_opens_no_database(register_cli):
    run = register_cli()
    result = run("judge", "check", PAIRS)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["same", "unrelated", "wrong-year", "no-evidence", "42"]
    assert all(set(line) == {"id", "label", "confidence", "abstained"} for line in lines)
    assert all(line["abstained"] == (line["label"] is None) for line in lines)
    assert {line["id"]: line["label"] for line in lines}["same"] == "SUPPORTED"
    assert not run.db.exists()  # judging pairs is not a register operation


def test_judge_eval_prints_the_metrics_for_the_named_profile(register_cli):
    result = register_cli()("judge", "eval", PAIRS, "--profile", "offline-default")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["profile"] == "offline-default@1" and report["n"] == 5
    assert report["coverage"]["total"] == 5 and set(report["confusion"]) <= {
        "SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED"}
    assert report["false_clearance"]["count"] <= report["false_clearance"]["total"]


def test_judge_eval_skips_bad_lines_with_exit_2_naming_line_and_field(register_cli):
    result = register_cli()("judge", "eval", BAD)
    assert result.returncode == 2
    assert "line 5: evidence: required" in result.stderr and "9 line(s) skipped" in result.stderr
    assert json.loads(result.stdout)["bad_lines"] == 9


def test_judge_with_an_unknown_profile_fails_with_exit_1(register_cli):
    result = register_cli()("judge", "check", PAIRS, "--profile", "no-such-profile")
    assert result.returncode == 1 and result.stdout == "" and "no judge profile 'no-such-profile'" in result.stderr


def test_judge_usage_errors_exit_64(register_cli):
    result = register_cli()("judge", "grade", PAIRS)
    assert result.returncode == 64 and "invalid choice" in result.stderr
