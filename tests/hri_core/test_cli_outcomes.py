"""``python -m hri_core fit-weights`` and ``compare-aggregations``: the JSON contracts (checked through a real
subprocess once each), the tables, quarantined lines and degenerate data."""

from __future__ import annotations

import json
from functools import cache

import pytest

from hri_core.aggregations import MODELS
from hri_core.synthetic_outcomes import outcome_records
from tests.helpers.cli import run_module
from tests.helpers.paths import REPO_ROOT

TRUE_WEIGHTS = {"F": 0.35, "C": 0.05, "U": 0.10, "O": 0.25, "S": 0.05, "P": 0.15, "H": 0.05}
AS_OF = "2027-01-01T00:00:00Z"
FAST = ("--resamples", "20", "--as-of", AS_OF)


@cache
def records(n: int = 400) -> tuple[dict, ...]:
    return tuple(outcome_records(n, TRUE_WEIGHTS, seed=11))


@pytest.fixture
def outcomes(tmp_path):
    path = tmp_path / "outcomes.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records()), encoding="utf-8")
    return path


def test_fit_weights_json_contract_in_a_subprocess(outcomes):
    result = run_module("hri_core", "fit-weights", outcomes, "--json", *FAST)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert list(output["weights"]) == ["F", "C", "U", "O", "S", "P", "H"]
    assert sum(output["weights"].values()) == pytest.approx(1.0)
    assert set(output["intervals"]) == set(output["weights"])
    assert {"fitted", "baseline", "difference", "folds"} <= set(output["cv"])
    assert {"auc", "average_precision", "expected_cost", "auc_interval"} <= set(output["cv"]["fitted"])
    assert output["baseline"]["weights"]["F"] == 0.25  # the paper's profile
    assert output["n"] == 400 and output["method"].startswith("maximum likelihood")
    assert output["quarantined"] == []


def test_compare_aggregations_json_contract_in_a_subprocess(outcomes):
    result = run_module("hri_core", "compare-aggregations", outcomes, "--json", *FAST)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and [row["model"] for row in rows] == list(MODELS)
    for row in rows:
        assert 0.0 <= row["auc"] <= 1.0 and 0.0 <= row["average_precision"] <= 1.0
        assert row["expected_cost"] >= 0.0
        low, high = row["auc_interval"]
        assert low <= high


def test_tables_without_json(hri_core_cli, outcomes):
    fit = hri_core_cli("fit-weights", outcomes, *FAST)
    assert fit.returncode == 0
    assert fit.stdout.startswith("Weights fitted to 400 outcomes")
    assert all(f"\n{d} " in fit.stdout for d in "FCUOSPH")
    compare = hri_core_cli("compare-aggregations", outcomes, *FAST)
    assert compare.returncode == 0
    assert all(name in compare.stdout for name in MODELS)


def test_bad_lines_are_named_on_stderr_listed_in_the_json_and_the_rest_fitted(hri_core_cli, tmp_path):
    good = [json.dumps(r) for r in records()]
    path = tmp_path / "mixed.jsonl"
    bad = ['{"response_id": "x1", "claims": [], "outcome": "yes"}', "{not json", '{"response_id": "x3", "claims": []}']
    path.write_text("\n".join(bad + good) + "\n", encoding="utf-8")
    result = hri_core_cli("fit-weights", path, "--json", *FAST)
    assert result.returncode == 2
    output = json.loads(result.stdout)
    assert output["n"] == 400
    assert [(q["where"], q["field"]) for q in output["quarantined"]][0] == ("line 1", "outcome")
    assert {q["where"] for q in output["quarantined"]} == {"line 1", "line 2", "line 3"}
    assert f"{path}:line 1 (response_id=x1): outcome: " in result.stderr
    assert f"{path}:line 3 (response_id=x3): outcome: Field required" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("command", ["fit-weights", "compare-aggregations"])
def test_degenerate_data_exits_2_with_the_reason(hri_core_cli, tmp_path, command):
    path = tmp_path / "one-class.jsonl"
    path.write_text("".join(json.dumps({**r, "outcome": 0}) + "\n" for r in records()[:50]), encoding="utf-8")
    result = hri_core_cli(command, path, "--json", *FAST)
    assert result.returncode == 2
    assert "outcome: 0 harmful (outcome 1) answer(s) among 50" in result.stderr
    assert json.loads(result.stdout)["error"]["problems"][0]["field"] == "outcome"


def test_missing_file_and_bad_options(hri_core_cli, tmp_path):
    assert hri_core_cli("fit-weights", tmp_path / "none.jsonl").returncode == 1
    result = hri_core_cli("fit-weights", tmp_path / "none.jsonl", "--cost-miss", "-1")
    assert result.returncode == 64 and "--cost-miss" in result.stderr
    assert hri_core_cli("compare-aggregations", tmp_path / "x.jsonl", "--as-of", "soon").returncode == 64


FIXED = REPO_ROOT / "tests" / "hri_core" / "outcomes"


@pytest.mark.parametrize("command", ["fit-weights", "compare-aggregations"])
def test_the_file_paths_json_is_byte_for_byte_the_landed_commands(command):
    """``outcomes/<command>.json`` is what the command printed, before the fit was shared with the register's rows,
    for ``fixed_outcomes.jsonl`` (32 lines, line 4 quarantined): the same input must still print the same bytes."""
    result = run_module("hri_core", command, FIXED / "fixed_outcomes.jsonl", "--json", "--resamples", "20",
                        "--as-of", AS_OF)
    assert result.returncode == 2, result.stderr  # a quarantined line: exit 2, every valid line still fitted
    assert result.stdout == (FIXED / f"{command}.json").read_text(encoding="utf-8")
