"""Evidence read as a whole: quantities in one written form, parts found across sentences and cited,
candidate contradictions sent to review, and the shipped operating point within its budget on dev."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hri_core.judging import evaluate_verdicts, judge_profile_from_dict
from hri_core.offline_judge import OfflineJudge, claim_terms, text_terms
from hri_core.quantities import lex
from hri_core.vocabulary import Label

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def judge() -> OfflineJudge:
    profile = json.loads((ROOT / "data" / "judge_profiles" / "offline-default.json").read_text(encoding="utf-8"))
    return OfflineJudge(judge_profile_from_dict(profile))


def values(text: str) -> list[str]:
    return [lexeme.value for lexeme in lex(text) if lexeme.kind in ("number", "date")]


@pytest.mark.parametrize(("written", "canonical"), [
    ("1,000", "1000"), ("1000", "1000"), ("one thousand", "1000"), ("two hundred and fifty", "250"),
    ("twenty-five", "25"), ("3.2 million", "3200000"), ("3,200,000", "3200000"), ("$5 million", "5000000"),
    ("2.50", "2.5"), ("007", "7"), ("6,650", "6650"),
    ("July 11, 1909", "1909-07-11"), ("11 July 1909", "1909-07-11"), ("1909-07-11", "1909-07-11"),
    ("11th of July, 1909", "1909-07-11"), ("Sept. 3, 2001", "2001-09-03"), ("July 1909", "1909-07"),
    ("11 July", "--07-11"),
])
def test_numbers_and_dates_have_one_written_form(written, canonical):
    assert values(written) == [canonical]


def test_units_and_percent_signs_are_one_word_and_one_alone_is_not_a_number():
    assert [lx.value for lx in lex("5 km")] == [lx.value for lx in lex("five kilometres")] == ["5", "km"]
    assert [lx.value for lx in lex("40%")] == [lx.value for lx in lex("40 per cent")] == ["40", "percent"]
    assert values("one of the largest") == []  # "one" alone is a word, not a quantity to find
    assert [lx.kind for lx in lex("the 11th and the eleventh")].count("ordinal") == 2


def test_a_date_in_the_evidence_backs_its_coarser_forms_but_not_the_reverse():
    evidence = text_terms("The shelter opened on 11 July 1909.").numbers
    assert {"1909-07-11", "1909-07", "1909", "--07-11"} <= evidence
    assert claim_terms("It opened on July 11, 1909.").numbers <= evidence
    assert not claim_terms("It opened on July 11, 1909.").numbers <= text_terms("It opened in 1909.").numbers


def test_parts_spread_over_three_sentences_are_supported_with_all_three_cited(judge):
    evidence = ["Clara Hale founded Hale House in Harlem.", "The shelter opened on 11 July 1969.",
                "By 1985 Hale House had cared for more than one thousand babies."]
    claim = "Clara Hale founded Hale House, which opened on July 11, 1969 and had cared for 1,000 babies by 1985."
    verdict = judge.judge(claim, evidence)
    assert verdict.label is Label.SUPPORTED
    assert verdict.cited == (0, 1, 2) and verdict.cited_sentences == tuple(evidence)
    assert "passages 1, 2, 3" in verdict.reason


def test_a_number_only_counts_beside_the_claims_other_words(judge):
    # 1993 is in the evidence, but in a sentence about something else.
    verdict = judge.judge("Arsenal won the FA Cup in 1993.", ["The sixth round was played in March 1993.",
                                                              "Arsenal won the FA Cup."])
    assert verdict.label is not Label.SUPPORTED and "number 1993 not in the evidence" in verdict.reason


@pytest.mark.parametrize(("claim", "evidence", "cue"), [
    ("Hale House opened on July 11, 1969.", "Hale House did not open on 11 July 1969.", "negation before 'open'"),
    ("Hale House never closed in 1990.", "Hale House closed in 1990.", "the claim is negated"),
    ("The population increased in 2010.", "The population decreased in 2010.", "'decreased'"),
    ("Arsenal won the final in 1993.", "Arsenal lost the final in 1993.", "'lost'"),
])
def test_a_negation_or_antonym_near_a_found_part_sends_the_claim_to_review(judge, claim, evidence, cue):
    verdict = judge.judge(claim, [evidence])
    assert verdict.abstained and verdict.label is None
    assert "candidate contradiction" in verdict.reason and cue in verdict.reason


def test_an_unrelated_negation_elsewhere_does_not_block_clearance(judge):
    verdict = judge.judge("Hale House opened on July 11, 1969.",
                          ["Hale House opened on 11 July 1969.", "Nobody expected it to last."])
    assert verdict.label is Label.SUPPORTED and verdict.cited == (0,)


def read(stem: str) -> list[dict]:
    with (ROOT / "data" / "judge_eval" / f"{stem}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def test_the_shipped_threshold_meets_its_budget_on_the_dev_split(judge):
    budget = judge.profile.thresholds["false_clearance_budget"]
    assert budget == 0.05 and "factcheck_dev" in judge.profile.provenance["split"]
    for stem, bound in (("factcheck_dev", "high"), ("factcheck_dev_claims", "value")):
        rows = read(stem)
        verdicts = [judge.judge(r["claim"], r["evidence"]).label for r in rows]
        result = evaluate_verdicts([Label(r["label"]) for r in rows], verdicts)
        rate = result.false_clearance
        assert getattr(rate, bound) <= budget, (stem, rate)
        recorded = judge.profile.measured[f"{stem} (tuning)"]
        assert recorded["false_clearance"] == round(rate.value, 4)
        assert recorded["supported_recall"] == round(result.supported_recall.value, 4)
