"""The synthetic generator: deterministic, valid interchange records, a plausible distribution, streaming."""

from __future__ import annotations

import ast
import itertools
import json
import re
import statistics
import sys
from collections import Counter
from datetime import UTC, date, datetime

import pytest

from hri_core import LABELS, default_profile, parse_response, score_response
from hri_core.synthetic import MODELS, USE_CASES, generate_responses
from tests.helpers.paths import REPO_ROOT

MODULE = REPO_ROOT / "hri_core" / "synthetic.py"
AS_OF = datetime(2026, 12, 15, tzinfo=UTC)


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    return list(generate_responses(5000, seed=42))


def _claims(records):
    return [claim for record in records for claim in record["claims"]]


def test_same_seed_gives_identical_records():
    assert list(generate_responses(300, seed=7)) == list(generate_responses(300, seed=7))


def test_different_seed_gives_different_records():
    a, b = list(generate_responses(300, seed=7)), list(generate_responses(300, seed=8))
    assert a != b
    assert [r["use_case"] for r in a] != [r["use_case"] for r in b]


def test_records_are_plain_json():
    records = list(generate_responses(200, seed=3))
    assert json.loads(json.dumps(records)) == records


def test_every_record_parses_and_scores(sample):
    profile = default_profile()
    ids = set()
    for record in sample:
        response = parse_response(record)
        result = score_response(response, profile, AS_OF)
        assert 0.0 <= result.hri <= 1.0
        assert result.no_claims == (not record["claims"])
        ids.add(response.response_id)
    assert len(ids) == len(sample)


def test_claim_ids_are_unique_and_answers_contain_the_claims(sample):
    for record in sample:
        claim_ids = [c["claim_id"] for c in record["claims"]]
        assert len(set(claim_ids)) == len(claim_ids)
        assert all(cid.startswith(record["response_id"] + "-") for cid in claim_ids)
        for claim in record["claims"]:
            assert claim["text"] in record["answer"]
        assert record["question"] and "{" not in record["question"] and "{" not in record["answer"]


def test_each_use_case_and_model_appears(sample):
    assert {r["use_case"] for r in sample} == {uc.name for uc in USE_CASES}
    assert {r["model"] for r in sample} == set(MODELS)
    assert len(USE_CASES) >= 5 and len(MODELS) >= 3


def test_label_mix(sample):
    labels = Counter(label for claim in _claims(sample) for label in claim["labels"])
    assert set(labels) == {label.value for label in LABELS}
    total = sum(labels.values())
    assert 0.6 < labels["SUPPORTED"] / total < 0.85
    assert labels["VALIDATED_NEGATIVE_FEEDBACK"] < labels["CONTRADICTED"] < labels["UNSUPPORTED"]
    assert any(len(c["labels"]) > 1 for c in _claims(sample))


def test_claim_counts(sample):
    counts = [len(r["claims"]) for r in sample]
    assert 5.6 <= statistics.mean(counts) <= 6.4
    assert min(counts) == 0 and max(counts) == 12
    assert 0 < counts.count(0) < len(sample) * 0.05


def test_criticality_is_higher_in_high_stakes_use_cases(sample):
    by_stakes: dict[str, list[int]] = {}
    for record in sample:
        by_stakes.setdefault(record["stakes"], []).extend(c["criticality"] for c in record["claims"])
    everything = [v for values in by_stakes.values() for v in values]
    assert set(everything) <= {1, 2, 3, 4, 5}
    assert sum(v >= 4 for v in everything) / len(everything) < 0.05  # rare
    assert statistics.mean(by_stakes["high"]) > statistics.mean(by_stakes["medium"]) > statistics.mean(by_stakes["low"])


def test_dimensions_and_evidence_follow_the_labels(sample):
    contradicted_dims = set()
    for claim in _claims(sample):
        labels = claim["labels"]
        if labels == ["CONTRADICTED"]:
            contradicted_dims.add(tuple(claim["dimensions"]))
        if len(labels) > 1:
            assert "dimensions" not in claim  # explicit dimensions would apply to every label
        if labels == ["OUTDATED"]:
            assert claim["source_id"].endswith("-2024")
        if labels == ["SUPPORTED"]:
            assert claim["source_id"].endswith("-2026") and claim["span"]
        if labels == ["UNSUPPORTED"]:
            assert "source_id" not in claim and "span" not in claim
    assert contradicted_dims == {("F",), ("F", "C")}


def test_feedback_fields_only_on_validated_feedback(sample):
    feedback = [c for c in _claims(sample) if "VALIDATED_NEGATIVE_FEEDBACK" in c["labels"]]
    assert feedback
    for claim in _claims(sample):
        has_fields = {"feedback_at", "feedback_count", "feedback_resolved"} <= claim.keys()
        assert has_fields == (claim in feedback)
    assert {c["feedback_resolved"] for c in feedback} == {True, False}
    assert any(c["feedback_count"] >= 2 for c in feedback)


def test_created_at_spreads_over_the_window_in_order(sample):
    times = [r["created_at"] for r in sample]
    assert times == sorted(times)
    assert times[0] >= "2026-06-01" and times[-1] < "2026-12-01"
    assert {t[:7] for t in times} == {f"2026-{m:02d}" for m in range(6, 12)}


def test_model_mix_shifts_towards_rag_v4(sample):
    first = Counter(r["model"] for r in sample[:1000])
    last = Counter(r["model"] for r in sample[-1000:])
    assert last["rag-v4"] > 2 * first["rag-v4"]


def test_window_and_prefix_arguments():
    records = list(generate_responses(50, seed=1, start=date(2025, 11, 15), months=2, id_prefix="demo"))
    assert records[0]["response_id"] == "demo-0000001"
    assert all("2025-11-15" <= r["created_at"] < "2026-01-15" for r in records)


def test_streams_without_materialising():
    first = list(itertools.islice(generate_responses(10**9, seed=5), 3))
    assert [r["response_id"] for r in first] == ["syn-0000001", "syn-0000002", "syn-0000003"]


@pytest.mark.parametrize("kwargs", [{"n": -1}, {"n": 10, "months": 0}])
def test_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        list(generate_responses(**kwargs))


def test_zero_records():
    assert list(generate_responses(0)) == []


def test_module_is_pure_stdlib():
    tree = ast.parse(MODULE.read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in {"open", "print", "input"}
    assert imported and imported <= set(sys.stdlib_module_names)


def _template_regex(template: str) -> re.Pattern:
    """A template such as "Invoices are payable within {v} days." as a regex capturing the value."""
    escaped = re.escape(template)
    return re.compile(re.sub(r"\\\{(\w+)\\\}", lambda m: "(?P<v>.+)" if m.group(1) == "v" else ".+", escaped))


def _value(patterns: list[re.Pattern], text: str) -> str:
    for pattern in patterns:
        match = pattern.fullmatch(text)
        if match:
            return match.group("v")
    raise AssertionError(f"no template matches {text!r}")


def test_spans_agree_or_disagree_with_the_claim_as_the_label_says():
    """A SUPPORTED claim states the value of its span; a CONTRADICTED one states another value."""
    by_name = {uc.name: uc for uc in USE_CASES}
    checked = Counter()
    for record in generate_responses(1500, seed=11):
        facts = by_name[record["use_case"]].facts
        claim_patterns = [_template_regex(f.claim) for f in facts]
        span_patterns = [_template_regex(f.span) for f in facts]
        for claim in record["claims"]:
            if claim["labels"] not in (["SUPPORTED"], ["CONTRADICTED"], ["OUTDATED"]):
                continue
            stated, evidence = _value(claim_patterns, claim["text"]), _value(span_patterns, claim["span"])
            assert (stated == evidence) == (claim["labels"] != ["CONTRADICTED"]), claim
            checked[claim["labels"][0]] += 1
    assert min(checked.values()) > 20 and len(checked) == 3
