"""``python -m register evidence ...``: each figure from the command line, in a process of its own, the same as the
function the Evidence page reads."""

from __future__ import annotations

import json

import pytest

from register import SYSTEM, Store
from register.console.queries.filters import Filters
from register.evidence.correlation import dimension_correlation
from register.evidence.rag_agreement import rag_agreement
from register.ingest.importer import import_path
from register.ingest.rag_files import RagOptions
from register.scoring.profiles import ensure_default_profile
from tests.helpers.cli import run_module
from tests.helpers.rag import checked_results, write_json


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """A closed register of RAGChecker-checked answers in two use cases (a command line opens it itself)."""
    folder = tmp_path_factory.mktemp("evidence-cli")
    path = folder / "cli.duckdb"
    store = Store(path)
    try:
        ensure_default_profile(store, SYSTEM)
        for seed, use_case in ((3, "support"), (4, "legal")):
            data = write_json(folder / f"checked-{seed}.json", checked_results(seed, queries=30, categories=True))
            import_path(store, SYSTEM, data, rag=RagOptions(use_case=use_case, model="m1"))
        expected = {"correlation": dimension_correlation(store, Filters(use_cases=("support",))).as_json(),
                    "rag": rag_agreement(store, replicates=100, seed=5).as_json()}
    finally:
        store.close()
    return path, expected


def _json(path, *args):
    result = run_module("register", "--db", path, "evidence", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_correlation_prints_the_functions_matrix(database):
    path, expected = database
    got = _json(path, "correlation", "--use-case", "support")
    assert got["answers"] == expected["correlation"]["answers"] > 0
    for a, row in expected["correlation"]["matrix"].items():
        for b, value in row.items():
            assert got["matrix"][a][b] == (None if value is None else pytest.approx(value, abs=1e-12))


def test_rag_agreement_is_reproducible_from_the_command_line(database):
    path, expected = database
    got = _json(path, "rag-agreement", "--replicates", "100", "--seed", "5")
    assert got["answers"] == expected["rag"]["answers"] > 0
    for mine, theirs in zip(got["correlations"], expected["rag"]["correlations"], strict=True):
        assert mine["metric"] == theirs["metric"]
        for key in ("rho", "low", "high"):
            assert mine[key] == pytest.approx(theirs[key], abs=1e-12)


def test_criticality_and_feedback_loops_run_and_say_what_they_found(database):
    path, _ = database
    crit = _json(path, "criticality", "--shift", "legal=+2", "--shift", "general=-1")
    assert crit["shifts"] == {"legal": 2, "general": -1} and crit["answers"] > 0
    assert sum(t["answers"] for t in crit["band_transitions"]) == crit["answers"]
    loops = _json(path, "feedback-loops", "--weeks", "4")
    assert loops["before_after"] == [] and len(loops["series"]) == 4 * 2  # two scopes, no feedback
    text = run_module("register", "--db", path, "evidence", "feedback-loops")
    assert text.returncode == 0 and "nothing to compare" in text.stdout


def test_a_bad_shift_is_a_usage_error_naming_it(database):
    path, _ = database
    result = run_module("register", "--db", path, "evidence", "criticality", "--shift", "astrology=+1")
    assert result.returncode == 1 and "'astrology'" in result.stderr
    result = run_module("register", "--db", path, "evidence", "criticality")
    assert result.returncode == 64  # one of --flatten and --shift is required
