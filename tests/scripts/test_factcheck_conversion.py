"""The Factcheck-GPT conversion: the label mapping, the evidence choice, and the committed demo file.

Tests that need the source data set (``../shared/peer-data/factcheck-gpt``) skip, saying why, when
it is absent; the committed file is checked either way.
"""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from hri_core import parse_response
from tests.helpers.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "convert_factcheck_gpt.py"
COMMITTED = REPO_ROOT / "data" / "demo" / "factcheck_gpt.jsonl"
COMMITTED_LICENSE = REPO_ROOT / "data" / "demo" / "LICENSE.factcheck-gpt"
SOURCE_DIR = REPO_ROOT.parent / "shared" / "peer-data" / "factcheck-gpt"
SOURCE = SOURCE_DIR / "factcheck-GPT-benchmark.jsonl"
SUBTASK4 = SOURCE_DIR / "subtask4_claim_factuality.jsonl"


def _load_script():
    spec = importlib.util.spec_from_file_location("convert_factcheck_gpt", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conv = _load_script()


def _source(path: Path) -> list[dict]:
    if not path.is_file():
        pytest.skip(f"peer data not available: {path.name} (expected in ../shared/peer-data/factcheck-gpt)")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def committed() -> list[dict]:
    assert COMMITTED.is_file(), f"{COMMITTED} is missing: run scripts/convert_factcheck_gpt.py"
    with COMMITTED.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


# --- the mapping -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("factuality", "checkworthiness", "labels", "dimensions"), [
    (True, "factual", ("SUPPORTED",), None),
    (False, "factual", ("CONTRADICTED",), ("F",)),
    ("true", "factual", ("SUPPORTED",), None),          # subtask4 spelling
    ("false", " Factual ", ("CONTRADICTED",), ("F",)),
    ("unknown", "factual", ("UNSUPPORTED",), None),     # annotators found not enough evidence
    ("not_enough_evidence", "factual", ("UNSUPPORTED",), None),
    (None, "factual", ("UNSUPPORTED",), None),
    ("NA", "factual", ("UNSUPPORTED",), None),
    (True, None, ("SUPPORTED",), None),                 # checkworthiness missing: judged by factuality
    (None, None, ("UNSUPPORTED",), None),
])
def test_map_claim_label(factuality, checkworthiness, labels, dimensions):
    verdict = conv.map_claim_label(factuality, checkworthiness)
    assert verdict == conv.Verdict(labels, dimensions)


@pytest.mark.parametrize(("factuality", "checkworthiness"), [
    ("unknown", "opinion"), ("unknown", "not_a_claim"), (True, "other"), (False, "opinion"),
])
def test_non_factual_claims_are_skipped(factuality, checkworthiness):
    assert conv.map_claim_label(factuality, checkworthiness) is None


@pytest.mark.parametrize(("factuality", "checkworthiness"), [("maybe", "factual"), (1, "factual"),
                                                             (True, "rumour")])
def test_unknown_values_are_refused(factuality, checkworthiness):
    with pytest.raises(ValueError):
        conv.map_claim_label(factuality, checkworthiness)


@pytest.mark.parametrize(("sentence", "claim", "expected"), [
    ("yes", "yes", 2), ("yes", "intermediate", 1), ("intermediate", "yes", 1), ("no", "no", 1), (None, None, 1),
])
def test_claim_criticality(sentence, claim, expected):
    assert conv.claim_criticality(sentence, claim) == expected


@pytest.mark.parametrize(("evidence", "url", "text"), [
    ("NA", None, None),
    ("", None, None),
    ("No relevant evidence.", None, None),
    ("URL: https://en.wikipedia.org/wiki/X", "https://en.wikipedia.org/wiki/X", None),
    ("https://en.wikipedia.org/wiki/Lawson_(store)\n\nLawson is a chain.", "https://en.wikipedia.org/wiki/Lawson_(store)",
     "Lawson is a chain."),
    ("See (https://example.org/a).", "https://example.org/a", "See ( )."),
    ("General common sense", None, "General common sense"),
])
def test_parse_human_evidence(evidence, url, text):
    assert conv.parse_human_evidence(evidence) == (url, text)


def test_truncate_cuts_long_text_at_a_word():
    text = "word " * 200
    short = conv.truncate(text)
    assert len(short) <= conv.SPAN_MAX_CHARS and short.endswith("word…")
    assert conv.truncate("  a\n\tb ") == "a b"


def test_select_evidence():
    stances = ["irrelevant", "partially-support", "refute", "completely-support"]
    urls = ["u0", "u1", "u2", "u3"]
    snippets = ["s0", "s1", "s2", "s3"]
    assert conv.select_evidence("SUPPORTED", "https://h.org/x\nseen", stances, urls, snippets) == (
        "https://h.org/x", "seen", "human")
    assert conv.select_evidence("SUPPORTED", "NA", stances, urls, snippets) == ("u3", "s3", "auto")
    assert conv.select_evidence("CONTRADICTED", "NA", stances, urls, snippets) == ("u2", "s2", "auto")
    assert conv.select_evidence("UNSUPPORTED", "NA", stances, urls, snippets) == (None, None, "none")
    assert conv.select_evidence("CONTRADICTED", "NA", ["irrelevant"], ["u0"], ["s0"]) == (None, None, "none")


def test_synthetic_dates_cover_2026_in_order():
    dates = [conv.synthetic_created_at(i, 94) for i in range(94)]
    assert dates == sorted(dates)
    assert {d[:7] for d in dates} == {f"2026-{m:02d}" for m in range(1, 13)}


def test_convert_record_numbers_claims_over_the_source_and_counts_skips():
    record = {"prompt": "q", "response": "a", "sentences": {
        "sentence2": {"claims": ["c3"], "claim_checkworthiness": ["factual"], "claims_factuality_label": [False],
                      "most_importance_sentence": "yes", "if_most_important_claim": ["yes"],
                      "human_evidence": ["NA"], "stance_claim_autoEvid": [["refute"]],
                      "auto_evidence_url": [["https://r.org"]], "auto_evidence": [["it is not so"]]},
        "sentence1": {"claims": ["c1", "c2"], "claim_checkworthiness": ["factual", "opinion"],
                      "claims_factuality_label": [True, "unknown"], "most_importance_sentence": "no",
                      "if_most_important_claim": ["yes", "no"], "human_evidence": ["NA", "NA"]},
    }}
    out, outcomes = conv.convert_record(4, 10, record)
    assert out["response_id"] == "fcgpt-005"
    assert [c["claim_id"] for c in out["claims"]] == ["fcgpt-005-1", "fcgpt-005-3"]
    assert out["claims"][1] == {"claim_id": "fcgpt-005-3", "text": "c3", "labels": ["CONTRADICTED"],
                                "dimensions": ["F"], "criticality": 2, "source_id": "https://r.org",
                                "span": "it is not so"}
    assert outcomes == [("", "none"), ("checkworthiness=opinion", None), ("", "auto")]
    parse_response(out)


# --- the committed file ----------------------------------------------------------------------------

def test_committed_file_shape(committed):
    assert len(committed) == 94
    assert [r["response_id"] for r in committed] == [f"fcgpt-{i:03d}" for i in range(1, 95)]
    for record in committed:
        response = parse_response(record)
        assert response.use_case == "open-domain-qa" and response.model == "chatgpt (factcheck-gpt)"
        assert response.created_at.year == 2026
        for claim in record["claims"]:
            assert claim["claim_id"].startswith(record["response_id"] + "-")
            assert len(claim.get("span", "")) <= conv.SPAN_MAX_CHARS
            assert claim["criticality"] in (1, 2)


def test_committed_licence_is_apache():
    assert COMMITTED_LICENSE.read_text(encoding="utf-8").lstrip().startswith("Apache License")


# --- against the source data set -------------------------------------------------------------------

def _independent_recount(source: list[dict]) -> tuple[int, int, Counter, list[str]]:
    """Claims in the source, claims that are not factual statements, expected labels, factual texts."""
    total, non_factual, labels, texts = 0, 0, Counter(), []
    for record in source:
        for sentence in record["sentences"].values():
            for text, worthiness, factuality in zip(sentence["claims"], sentence["claim_checkworthiness"],
                                                    sentence["claims_factuality_label"], strict=True):
                total += 1
                if worthiness != "factual":
                    non_factual += 1
                    continue
                texts.append(" ".join(text.split()))
                labels["SUPPORTED" if factuality is True else "CONTRADICTED" if factuality is False
                       else "UNSUPPORTED"] += 1
    return total, non_factual, labels, texts


def test_committed_file_equals_a_fresh_conversion(committed):
    source = _source(SOURCE)
    records, report = conv.convert(source)
    assert conv.render_jsonl(records) == COMMITTED.read_text(encoding="utf-8")
    assert COMMITTED_LICENSE.read_bytes() == (SOURCE_DIR / "LICENSE").read_bytes()
    assert report.responses == 94 and report.claims == sum(len(r["claims"]) for r in committed)


def test_claim_and_label_counts_match_an_independent_recount(committed):
    source = _source(SOURCE)
    total, non_factual, labels, texts = _independent_recount(source)
    assert len(source) == 94
    claims = [c for r in committed for c in r["claims"]]
    assert len(claims) == total - non_factual
    assert Counter(label for c in claims for label in c["labels"]) == labels
    assert Counter(c["text"] for c in claims) == Counter(texts)
    _, report = conv.convert(source)
    assert sum(report.skipped.values()) == non_factual and report.source_claims == total


def test_labels_agree_with_the_subtask4_factuality_file(committed):
    subtask4 = _source(SUBTASK4)  # 661 checkworthy claims, labelled separately by the same authors
    mapping = {"true": "SUPPORTED", "false": "CONTRADICTED", "not_enough_evidence": "UNSUPPORTED"}
    expected = Counter(mapping[row["label"]] for row in subtask4)
    assert Counter(label for r in committed for c in r["claims"] for label in c["labels"]) == expected


def test_criticality_matches_the_importance_annotations(committed):
    source = _source(SOURCE)
    expected = sum(1 for record in source for sentence in record["sentences"].values()
                   for worthiness, important in zip(sentence["claim_checkworthiness"],
                                                    sentence["if_most_important_claim"], strict=True)
                   if worthiness == "factual" and important == "yes" and sentence["most_importance_sentence"] == "yes")
    assert sum(1 for r in committed for c in r["claims"] if c["criticality"] == 2) == expected
