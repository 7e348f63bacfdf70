"""``python -m register evidence fit-weights|compare-aggregations`` and ``profiles draft-from-fit --from-register``:
the register's own outcomes from the command line, in a process of their own, the same as the functions the
Evidence page reads; too few outcomes said with their counts."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Store
from register.demo import seed_demo
from register.scoring.elicitation import elicitations_for
from register.scoring.profiles import ensure_default_profile, profile_meta
from register.scoring.register_outcomes import compare_from_register, fit_from_register, register_outcomes
from tests.helpers.cli import run_module
from tests.helpers.outcomes import import_scored_outcomes
from tests.helpers.templates import copy_database

FAST = ("--resamples", "10", "--seed", "2")


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """A closed register: the demo set (50 synthetic answers, with its 84 review decisions on the Factcheck-GPT
    answers) and 60 imported outcomes (54 of them on answers the demo decided: the newer outcome wins)."""
    path = tmp_path_factory.mktemp("outcome-cli") / "cli.duckdb"
    store = Store(path)
    try:
        ensure_default_profile(store, SYSTEM)
        seed_demo(store, SYSTEM, synthetic=50)
        import_scored_outcomes(store, 60)
        data = register_outcomes(store)
        fit = fit_from_register(store, resamples=10, seed=2).to_dict()
        fit["data"] = {**fit["data"], **data.summary()}
        expected = {"fit": fit, "compare": compare_from_register(store, resamples=10, seed=2),
                    "hash": data.data_hash}
    finally:
        store.close()
    return path, expected


def test_fit_weights_prints_the_functions_fit_with_the_datas_hash_and_kinds(database):
    path, expected = database
    result = run_module("register", "--db", path, "evidence", "fit-weights", "--json", *FAST)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got == json.loads(json.dumps(expected["fit"]))
    assert got["data"]["sha256"] == expected["hash"] and got["data"]["kinds"]["incident"]["n"] == 60
    assert list(got["weights"]) == ["F", "C", "U", "O", "S", "P", "H"]
    text = run_module("register", "--db", path, "evidence", "fit-weights", *FAST)
    # the 60 imported incidents and the 30 review decisions of the demo on answers without an imported outcome
    assert text.returncode == 0 and "Weights fitted to 90 outcomes" in text.stdout
    assert f"sha256 {expected['hash'][:16]}" in text.stdout


def test_compare_aggregations_prints_the_functions_rows(database):
    path, expected = database
    result = run_module("register", "--db", path, "evidence", "compare-aggregations", "--json", *FAST)
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert rows == json.loads(json.dumps(expected["compare"]))
    assert {"model", "auc", "average_precision", "auc_interval"} <= set(rows[0])
    # a kind the register holds none of (the demo's review decisions are outcomes of kind review_decision)
    only = run_module("register", "--db", path, "evidence", "compare-aggregations", "--kind", "audit_finding")
    assert only.returncode == 1 and "holds 0 answer(s) with a known outcome" in only.stderr
    assert "needs at least 20 (20 more)" in only.stderr


def test_draft_from_the_registers_fit_records_the_datas_hash_and_kinds(database, tmp_path):
    path, expected = database
    copy = copy_database(path, tmp_path / "draft.duckdb")
    result = run_module("register", "--db", copy, "profiles", "draft-from-fit", "--from-register", "--json", *FAST)
    assert result.returncode == 0, result.stderr
    version = json.loads(result.stdout)["profile_version"]
    store = Store(copy)
    try:
        assert profile_meta(store, version)["status"] == "draft"
        (record,) = elicitations_for(store, version)
        data = record["record"]["data"]
        assert record["record"]["source_name"] == "register"
        assert data["sha256"] == expected["hash"] and data["kinds"] == expected["fit"]["data"]["kinds"]
        assert data["source"] == "register" and list(data["kinds"]) == ["incident", "review_decision"]
        assert record["record"]["weights"] == expected["fit"]["weights"]
    finally:
        store.close()
    both = run_module("register", "--db", copy, "profiles", "draft-from-fit", "x.jsonl", "--from-register")
    assert both.returncode == 1 and "one of the two" in both.stderr


def test_an_empty_register_says_how_many_outcomes_a_fit_needs(tmp_path):
    path = tmp_path / "empty.duckdb"
    Store(path).close()
    result = run_module("register", "--db", path, "evidence", "fit-weights", "--json")
    assert result.returncode == 1
    assert json.loads(result.stdout)["error"] == ("The register holds 0 answer(s) with a known outcome and a usable "
                                                  "score; a fit needs at least 20 (20 more).")
