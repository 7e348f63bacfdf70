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
    assert report["profile"] == "offline-default@2" and report["n"] == 5
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


def test_check_as_a_subprocess_keeps_the_contract_and_fails_closed_on_malformed_lines(tmp_path):
    import subprocess
    import sys

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join([
        json.dumps({"id": "a", "claim": "Hale House opened on July 11, 1969.",
                    "evidence": ["Clara Hale ran Hale House.", "Hale House opened on 11 July 1969."]}),
        '{"id": "broken", "claim": "unterminated',
        json.dumps({"id": "b", "claim": "A list is needed.", "evidence": "not a list"}),
        json.dumps({"id": "c", "claim": "Bananas are yellow.", "evidence": ["The stock market closed higher."]}),
    ]) + "\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "register", "judge", "check", str(pairs)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b", "c"]  # "broken" has no readable id: named on stderr
    assert all(set(line) == {"id", "label", "confidence", "abstained"} for line in lines)
    assert lines[0]["label"] == "SUPPORTED" and lines[1] == {"id": "b", "label": None, "confidence": 0.0,
                                                             "abstained": True}
    assert lines[2]["label"] == "UNSUPPORTED"
    assert "line 2: malformed JSON" in done.stderr and "line 3: evidence: required" in done.stderr


def test_eval_gives_every_headline_rate_and_macro_f1_with_a_95_interval(register_cli):
    report = json.loads(register_cli()("judge", "eval", PAIRS).stdout)
    for key in ("false_clearance", "coverage", "supported_recall"):
        low, high = report[key]["ci95"]
        assert low <= (report[key]["value"] or 0.0) <= high
    low, high = report["macro_f1_ci95"]
    assert 0.0 <= low <= report["macro_f1"] <= high <= 1.0
