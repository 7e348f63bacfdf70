"""The offline judge: its guards (numbers, entities, negation), abstention, determinism, shipped profiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from hri_core.judging import JudgeProfileError, judge_profile_from_dict
from hri_core.offline_judge import (
    OfflineJudge,
    claim_terms,
    extract_features,
    split_sentences,
    text_terms,
    tokenize,
)
from hri_core.vocabulary import Label

PROFILE_DIR = Path(__file__).resolve().parents[2] / "data" / "judge_profiles"


def shipped(name: str):
    return judge_profile_from_dict(json.loads((PROFILE_DIR / f"{name}.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    return OfflineJudge(shipped("offline-default"))


# --- text handling -------------------------------------------------------------------------------------


def test_sentences_split_at_ends_but_not_after_initials_or_abbreviations():
    text = "Justice William O. Douglas served in the U.S. Supreme Court. He retired in 1975! Was he the oldest?"
    assert split_sentences(text) == ["Justice William O. Douglas served in the U.S. Supreme Court.",
                                     "He retired in 1975!", "Was he the oldest?"]
    assert split_sentences("  \n ") == []


def test_numbers_are_compared_in_canonical_form():
    assert claim_terms("The Nile is 6,650 km long and crosses eleven countries.").numbers == {"6650", "11"}
    assert text_terms("about 6650 kilometres through 11 countries").numbers >= {"6650", "11"}
    assert claim_terms("It cost 2.50 dollars").numbers == {"2.5"}
    assert tokenize("C# and C++ don't") == ["C#", "and", "C++", "don't"]


def test_entities_are_capitalised_words_after_the_first():
    terms = claim_terms("In 1980 the oldest justice was William Douglas.")
    assert terms.entities == {"william", "dougla"}  # stems; "In" is the first word and a stop word


def test_a_claim_number_must_stand_in_the_span_sentence_with_the_claim_words():
    # "1993" is in the passage, but in the sentence before the one about Arsenal and the FA Cup.
    features = extract_features("Arsenal won the FA Cup in 1993.",
                                ["The sixth round was played in March 1993. Arsenal beat Ipswich on the way to "
                                 "their first FA Cup win since 1979."])
    assert features.missing_numbers == ("1993",)
    assert not features.guards_pass


# --- verdicts ------------------------------------------------------------------------------------------


def test_identical_evidence_is_cleared_with_a_reason_naming_the_passage(judge):
    claim = "Justice William O. Douglas was born on October 16, 1898."
    verdict = judge.judge(claim, ["Bananas are yellow.", f"Some history. {claim} More later."])
    assert verdict.label is Label.SUPPORTED and not verdict.abstained
    assert "claim-word recall 1.00 in passage 2" in verdict.reason
    assert verdict.evidence_index == 1 and verdict.span is not None and "1898" in verdict.span
    assert verdict.profile == "offline-default@2" and verdict.backend == "offline-lexical"


def test_unrelated_evidence_is_unsupported(judge):
    verdict = judge.judge("The Nile flows into the Mediterranean Sea.",
                          ["Bananas are rich in potassium.", "The stock market closed higher on Friday."])
    assert verdict.label is Label.UNSUPPORTED and verdict.confidence >= 2 / 3


@pytest.mark.parametrize(("claim", "evidence", "blocked_by"), [
    ("Douglas was born on October 16, 1898.", "Douglas was born on October 16, 1899.", "number 1898"),
    ("Douglas retired from the court in 1975.", "Douglas retired from the court.", "number 1975"),
    ("Douglas retired from the court in 1975.", "Douglas retired from the court in 1957.", "number 1975"),
    ("Brennan was the oldest justice on the Supreme Court.", "Douglas was the oldest justice on the Supreme Court.",
     "brennan not in the evidence"),
    ("Douglas was not the oldest justice on the court.", "Douglas was the oldest justice on the court.",
     "candidate contradiction"),
    ("Douglas was the oldest justice on the court.", "Douglas was not the oldest justice on the court.",
     "candidate contradiction"),
])
def test_guards_block_clearance_and_say_why(judge, claim, evidence, blocked_by):
    verdict = judge.judge(claim, [evidence])
    assert verdict.label is not Label.SUPPORTED
    assert blocked_by in verdict.reason


@pytest.mark.parametrize("evidence", [[], [""], ["   ", "\n"]])
def test_no_evidence_means_needs_review(judge, evidence):
    verdict = judge.judge("The Nile is the longest river.", evidence)
    assert verdict.abstained and verdict.label is None and verdict.reason == "no evidence"


def test_an_empty_claim_or_one_without_content_words_is_not_judged(judge):
    assert judge.judge("  ", ["The Nile is long."]).abstained
    assert judge.judge("It is what it is.", ["It is what it is."]).abstained


words = hs.sampled_from(["Nile", "river", "longest", "Africa", "not", "never", "no", "flows", "Egypt", "1898",
                         "6,650", "three", "3", "the", "is", "in", "and", "Amazon", "km", "was", "born", "Douglas"])
sentences = hs.lists(words, min_size=1, max_size=12).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=300, deadline=None)
@given(claim=sentences, evidence=hs.lists(hs.lists(sentences, min_size=1, max_size=4).map(" ".join), max_size=3))
def test_never_contradicted_and_deterministic(judge, claim, evidence):
    first = judge.judge(claim, evidence)
    assert first.label is not Label.CONTRADICTED
    assert first == judge.judge(claim, list(evidence))
    assert first.abstained == (first.label is None) and 0.0 <= first.confidence <= 1.0


numbers = hs.integers(min_value=0, max_value=99999)


@settings(max_examples=300, deadline=None)
@given(claim=sentences, number=numbers, other=numbers, extra=hs.lists(sentences, max_size=3))
def test_never_supported_when_a_claim_number_is_missing(judge, claim, number, other, extra):
    stated = f"{claim[:-1]} in {number}."
    if other == number:
        other += 1
    # The evidence repeats the claim word for word, except the number.
    evidence = " ".join([*extra, f"{claim[:-1]} in {other}."])
    verdict = judge.judge(stated, [evidence])
    if str(number) not in text_terms(evidence).numbers:  # nor spelt out ("three" is 3)
        assert verdict.label is not Label.SUPPORTED


# --- profiles ------------------------------------------------------------------------------------------


def test_shipped_profiles_are_valid_and_versioned():
    files = sorted(PROFILE_DIR.glob("*.json"))
    assert "offline-default.json" in [f.name for f in files]
    for file in files:
        profile = judge_profile_from_dict(json.loads(file.read_text(encoding="utf-8")))
        assert profile.name == file.stem and profile.version >= 1
        assert 0 < profile.thresholds["abstain"] < 1 and 0 < profile.thresholds["supported"] < 1
        if profile.backend == "llm":  # no endpoint to fit on: the profile must say its thresholds are hand-set
            assert "not fitted" in profile.provenance["thresholds"]
            continue
        assert profile.thresholds["abstain"] > 0.5
        assert "dev split" in profile.provenance["data"]  # chosen on dev, never on test


def test_a_profile_missing_what_the_judge_needs_is_refused_naming_the_fields():
    profile = shipped("offline-default")
    broken = profile.model_copy(update={"weights": {"supported": {"bias": 1.0, "colour": 2.0}}, "thresholds": {}})
    with pytest.raises(JudgeProfileError) as info:
        OfflineJudge(broken)
    fields = {p["field"] for p in info.value.as_dict()["problems"]}
    assert {"weights.support_any", "weights.supported.colour", "thresholds.supported", "thresholds.abstain"} <= fields


def test_a_profile_fitted_with_similarity_needs_a_similarity_function():
    profile = shipped("offline-default")
    with_cosine = profile.model_copy(update={"weights": {**profile.weights, "supported": {
        **profile.weights["supported"], "similarity": 2.0}}})
    with pytest.raises(JudgeProfileError, match="similarity"):
        OfflineJudge(with_cosine)
    judge = OfflineJudge(with_cosine, similarity=lambda claim, sents: [1.0 for _ in sents])
    assert judge.judge("The Nile is long.", ["The Nile is long."]).label is Label.SUPPORTED
