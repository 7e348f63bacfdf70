"""The paper's worked example (Table V, DOMAIN.md section 3) through the library and through the CLI.

The response is written out here from DOMAIN.md, independently of ``data/table_v_supplier_contract.jsonl``,
so that both the shipped example file and the scorer are held to the paper's numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from hri_core import Dimension, default_profile, parse_response, score_response
from tests.helpers.paths import REPO_ROOT

EXAMPLE_FILE = "data/table_v_supplier_contract.jsonl"
AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
AS_OF_TEXT = "2026-12-01T00:00:00Z"

TABLE_V = {
    "response_id": "table-v",
    "claims": [
        {"claim_id": "c1", "labels": ["SUPPORTED"], "criticality": 1},
        {"claim_id": "c2", "labels": ["UNSUPPORTED"], "criticality": 2},
        {"claim_id": "c3", "labels": ["CONTRADICTED"], "dimensions": ["F", "C"], "criticality": 3},
        {"claim_id": "c4", "labels": ["OUTDATED"], "criticality": 2},
        {"claim_id": "c5", "labels": ["ACCESS_GAP"], "criticality": 2},
        {"claim_id": "c6", "labels": ["OUT_OF_SCOPE"], "criticality": 1},
    ],
}

EXPECTED_DIMENSIONS = {"F": 3 / 11, "C": 3 / 11, "U": 1.5 / 11, "O": 1.5 / 11, "P": 1.2 / 11, "S": 0.75 / 11, "H": 0.0}
EXPECTED_HRI_ADD = 0.17454545454545454  # 1.92 / 11; the paper prints 0.175


def check_table_v(out: dict, contradicted_claim_id: str) -> None:
    """Assert the paper's numbers on the CLI/export form of a score."""
    for dim, expected in EXPECTED_DIMENSIONS.items():
        assert out["dimensions"][dim] == pytest.approx(expected, abs=1e-12), dim
    assert out["hri_add"] == pytest.approx(EXPECTED_HRI_ADD, abs=1e-12)
    assert out["hri"] == pytest.approx(0.70, abs=1e-12)
    assert out["score"] == pytest.approx(70.0, abs=1e-9)
    assert (out["band"], out["action"]) == ("High", "review")
    assert out["no_claims"] is False
    assert [(f["claim_id"], f["rule_id"], f["label"], f["value"]) for f in out["floors"]] == [
        (contradicted_claim_id, "contradicted-high", "CONTRADICTED", 0.70)
    ]
    assert out["decisive_floor"] == contradicted_claim_id


def test_table_v_library():
    result = score_response(parse_response(TABLE_V), default_profile(), AS_OF)
    check_table_v(result.to_output(), "c3")
    assert result.total_criticality == 11
    assert result.hri_add == pytest.approx(1.92 / 11, abs=1e-12)
    # both the additive and the floored score are kept
    assert result.hri_add < result.hri
    assert result.decisive_floor is not None and result.decisive_floor.criticality == 3
    # per-claim contributions m_ik (Table V's rows)
    by_id = {c.claim_id: c for c in result.claims}
    assert by_id["c1"].contributions == {d: 0.0 for d in Dimension}
    assert by_id["c3"].dimensions == (Dimension.F, Dimension.C)
    assert (by_id["c3"].contributions[Dimension.F], by_id["c3"].contributions[Dimension.C]) == (1.0, 1.0)
    assert by_id["c5"].contributions[Dimension.P] == 0.6
    assert by_id["c3"].floor == 0.70
    assert [c.floor for c in result.claims if c.claim_id != "c3"] == [0.0] * 5


def test_table_v_example_file_matches_the_paper():
    lines = [line for line in (REPO_ROOT / EXAMPLE_FILE).read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 1
    response = parse_response(json.loads(lines[0]))
    result = score_response(response, default_profile(), AS_OF)
    check_table_v(result.to_output(), response.claims[2].claim_id)


def test_table_v_cli():
    proc = subprocess.run(
        [sys.executable, "-m", "hri_core", "score", EXAMPLE_FILE, "--as-of", AS_OF_TEXT],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    outputs = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(outputs) == 1
    out = outputs[0]
    check_table_v(out, "paper-table-v-3")
    assert out["response_id"] == "paper-table-v"
    assert out["as_of"] == "2026-12-01T00:00:00+00:00"
    assert out["profile"] == {"name": "paper-provisional", "version": 1}
    assert "scored 1 response(s), 0 invalid record(s)" in proc.stderr
