"""The dimension correlation matrix: exact against numpy (Pearson) and scipy (Spearman), the answers it reads, the
pairs it names and the dimensions it cannot correlate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from register.console.queries.filters import DIM_COLUMNS, Filters
from register.errors import RegisterError
from register.evidence.correlation import MOVE_TOGETHER, dimension_correlation
from tests.helpers.feedback import import_records

LETTERS = ("F", "C", "U", "O", "S", "P", "H")


def _dims(store, where: str = "true", params=()):
    return np.array(store.query(f"SELECT {', '.join(DIM_COLUMNS)} FROM current_scores "
                                f"WHERE NOT no_claims AND scoring_failure IS NULL AND {where} "
                                "ORDER BY response_key", params), dtype=float)


def test_pearson_matrix_is_numpy_corrcoef_on_the_demo_set(demo_store):
    result = dimension_correlation(demo_store)
    values = _dims(demo_store)
    assert result.answers == len(values) > 100
    expected = np.corrcoef(values, rowvar=False)
    assert np.allclose(result.matrix.to_numpy(dtype=float), expected, atol=1e-12, equal_nan=True)


def test_spearman_matrix_is_scipy_spearmanr_on_the_demo_set(demo_store):
    result = dimension_correlation(demo_store, method="spearman")
    values = _dims(demo_store)
    expected = stats.spearmanr(values).statistic
    assert np.allclose(result.matrix.to_numpy(dtype=float), expected, atol=1e-12, equal_nan=True)


def test_filters_select_the_answers_of_one_use_case(demo_store):
    use_case = demo_store.scalar("SELECT use_case FROM current_scores WHERE NOT no_claims GROUP BY use_case "
                                 "ORDER BY count(*) DESC LIMIT 1")
    result = dimension_correlation(demo_store, Filters(use_cases=(use_case,)))
    values = _dims(demo_store, "use_case = ?", [use_case])
    assert result.answers == len(values)
    matrix = result.matrix.to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.corrcoef(values, rowvar=False)
    assert np.allclose(matrix, expected, atol=1e-12, equal_nan=True)


def _answer(rid: str, claims: list, use_case: str = "contracts") -> dict:
    """An answer of ``claims``: each a label, or the fields of a claim (labels, dimensions)."""
    return {"response_id": rid, "use_case": use_case, "model": "m1", "created_at": "2026-10-01T08:00:00Z",
            "question": "Q?", "answer": "A.",
            "claims": [{"claim_id": f"c{i}", "text": f"Claim {i}.",
                        **({"labels": [claim]} if isinstance(claim, str) else claim)}
                       for i, claim in enumerate(claims)]}


def test_pairs_moving_together_are_named_and_constant_dimensions_left_out(store, tmp_path):
    # a claim of dimensions F and C hits both together, UNSUPPORTED hits U alone: F and C move together exactly,
    # and nothing touches S, P or H (constant 0)
    fc = {"labels": ["CONTRADICTED"], "dimensions": ["F", "C"]}
    records = [_answer("a1", [fc, "SUPPORTED"]), _answer("a2", ["SUPPORTED", "SUPPORTED"]),
               _answer("a3", [fc, fc]), _answer("a4", ["UNSUPPORTED", "SUPPORTED"]),
               _answer("a5", ["UNSUPPORTED", fc]), _answer("empty", [])]
    import_records(store, tmp_path, records)
    result = dimension_correlation(store)
    assert result.answers == 5  # the answer without claims is left out
    values = _dims(store)
    varying = [i for i in range(7) if values[:, i].std() > 0]
    assert set(result.constant) == {LETTERS[i] for i in range(7) if i not in varying}
    for letter in result.constant:  # no correlation is defined for them, not even with themselves
        assert result.matrix[letter].isna().all() and result.matrix.loc[letter].isna().all()
    sub = np.corrcoef(values[:, varying], rowvar=False)
    got = result.matrix.loc[[LETTERS[i] for i in varying], [LETTERS[i] for i in varying]].to_numpy(dtype=float)
    assert np.allclose(got, sub, atol=1e-12)
    named = {(a, b) for a, b, _ in result.pairs.itertuples(index=False)}
    expected = {(LETTERS[i], LETTERS[j]) for k, i in enumerate(varying) for j in varying[k + 1:]
                if abs(np.corrcoef(values[:, i], values[:, j])[0, 1]) >= MOVE_TOGETHER}
    assert named == expected and ("F", "C") in named
    strengths = [abs(r) for r in result.pairs["r"]]
    assert strengths == sorted(strengths, reverse=True)
    as_json = result.as_json()
    assert as_json["matrix"]["S"]["F"] is None and as_json["pairs"][0]["r"] == pytest.approx(result.pairs["r"][0])
    assert len(result.long()) == 21


def test_no_answers_give_an_empty_matrix(store):
    result = dimension_correlation(store)
    assert result.answers == 0 and result.matrix.isna().all().all() and result.pairs.empty


def test_bad_method_and_threshold_are_refused(store):
    with pytest.raises(RegisterError, match="method"):
        dimension_correlation(store, method="kendall")
    with pytest.raises(RegisterError, match="threshold"):
        dimension_correlation(store, threshold=1.5)
