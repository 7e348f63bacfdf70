"""The richer interchange records (DOMAIN.md section 4, issue 12 section 1): retrieved context, target
answer and claims, stakes, query ambiguity, claim category, core claims, contradiction source and
entailment checks. Old records parse, serialise and score exactly as before; each new field is
validated with an error naming it; a CONTRADICTED claim contradicted by the context counts in C too."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from hri_core import Dimension, RecordError, default_profile, parse_response, profile_from_dict, score_response
from hri_core.models import CLAIM_EXTENSIONS, RESPONSE_EXTENSIONS
from hri_core.readers import iter_csv
from hri_core.vocabulary import CATEGORIES, STAKES
from tests.helpers.paths import REPO_ROOT

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
LEGACY_RESPONSE_KEYS = {"response_id", "use_case", "model", "created_at", "question", "answer", "stakes", "claims"}
LEGACY_CLAIM_KEYS = {"claim_id", "text", "labels", "dimensions", "criticality", "source_id", "span", "feedback_at",
                     "feedback_count", "feedback_resolved"}


def fields_of(record: dict) -> list[str]:
    with pytest.raises(RecordError) as caught:
        parse_response(record)
    return [p["field"] for p in caught.value.as_dict()["problems"]]


def claim(**extra) -> dict:
    return {"labels": ["SUPPORTED"], **extra}


# --- old records: parsed, serialised and scored as before -----------------------------------------------

def shipped_records() -> list[dict]:
    records = []
    for path in [REPO_ROOT / "data" / "table_v_supplier_contract.jsonl", REPO_ROOT / "data" / "demo" /
                 "factcheck_gpt.jsonl"]:
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return records


def test_old_records_dump_exactly_the_old_fields():
    # the register's content hash is the canonical JSON of model_dump: an absent extension must not appear
    records = shipped_records()
    assert len(records) > 50
    for record in records:
        dumped = parse_response(record).model_dump(mode="json")
        assert set(dumped) == LEGACY_RESPONSE_KEYS
        assert all(set(c) == LEGACY_CLAIM_KEYS for c in dumped["claims"])


def test_an_extension_appears_in_the_dump_once_given():
    dumped = parse_response({"response_id": "r", "gt_answer": "target", "claims": [claim(is_core=False)]}).model_dump()
    assert dumped["gt_answer"] == "target" and dumped["claims"][0]["is_core"] is False
    assert "retrieved_context" not in dumped and "category" not in dumped["claims"][0]
    assert set(RESPONSE_EXTENSIONS) >= {"retrieved_context", "gt_answer", "query_ambiguous"}
    assert set(CLAIM_EXTENSIONS) >= {"category", "is_core", "contradicted_by"}


def test_round_trip_through_json_keeps_every_extension():
    record = {"response_id": "r", "stakes": "High", "query_ambiguous": True, "gt_answer": "g",
              "retrieved_context": [{"id": "c1", "text": "Support: Mon-Fri", "source_id": "contract-7"},
                                    {"id": 2, "text": "x"}],
              "claims": [claim(category="Financial", is_core=True),
                         {"labels": ["CONTRADICTED"], "contradicted_by": "Context", "criticality": 3}]}
    first = parse_response(record)
    again = parse_response(json.loads(json.dumps(first.model_dump(mode="json"))))
    assert again == first
    assert first.stakes == "high" and first.retrieved_context[1].id == "2"
    assert first.claims[0].category == "financial" and first.claims[1].contradicted_by == "context"
    assert "source_id" not in first.model_dump()["retrieved_context"][1]


# --- vocabularies: case-insensitive, unknown values named -----------------------------------------------

@pytest.mark.parametrize("given", [*STAKES, "HIGH", " Critical ", "Low"])
def test_stakes_are_read_in_any_case(given):
    assert parse_response({"response_id": "r", "stakes": given, "claims": []}).stakes == given.strip().lower()


@pytest.mark.parametrize("bad", ["moderate", "very high", "h"])
def test_unknown_stakes_is_an_error_naming_the_field(bad):
    with pytest.raises(RecordError) as caught:
        parse_response({"response_id": "r", "stakes": bad, "claims": []})
    (problem,) = caught.value.as_dict()["problems"]
    assert problem["field"] == "stakes" and repr(bad) in problem["message"] and "critical" in problem["message"]


def test_blank_stakes_is_not_given():
    assert parse_response({"response_id": "r", "stakes": "  ", "claims": []}).stakes is None


@pytest.mark.parametrize("given", [*CATEGORIES, "LEGAL", "Discrimination / Bias", "discrimination_bias"])
def test_categories_and_their_spellings(given):
    parsed = parse_response({"response_id": "r", "claims": [claim(category=given)]}).claims[0].category
    assert parsed in CATEGORIES
    assert parsed == ("discrimination/bias" if "bias" in given.lower() else given.lower())


def test_every_bad_new_field_is_named_with_its_path():
    record = {"response_id": "r", "stakes": "extreme", "query_ambiguous": "perhaps",
              "retrieved_context": [{"text": "no id"}, {"id": "a"}],
              "claims": [claim(category="weather", is_core="sometimes"),
                         {"labels": ["CONTRADICTED"], "contradicted_by": "mars"},
                         {"labels": ["SUPPORTED"], "entailment": {"target": "yes"}}]}
    assert sorted(fields_of(record)) == sorted([
        "stakes", "query_ambiguous", "retrieved_context[0].id", "retrieved_context[1].text",
        "claims[0].category", "claims[0].is_core", "claims[1].contradicted_by", "claims[2].entailment.target"])


def test_contradicted_by_needs_a_contradicted_claim():
    assert fields_of({"response_id": "r", "claims": [{"labels": ["PARTIAL"], "contradicted_by": "context"}]}) == [
        "claims[0].contradicted_by"]


def test_duplicate_chunk_ids_and_wrong_entailment_widths_are_named():
    record = {"response_id": "r", "retrieved_context": [{"id": "1", "text": "a"}, {"id": "1", "text": "b"}],
              "claims": [claim(entailment={"target": "Entailment", "context": ["Neutral"]})],
              "gt_claims": [{"text": "t", "response": "Neutral", "context": ["Neutral", "Neutral", "Neutral"]}]}
    assert fields_of(record) == ["retrieved_context[1].id", "claims[0].entailment.context", "gt_claims[0].context"]


def test_entailment_rows_need_the_chunks():
    record = {"response_id": "r", "claims": [claim(entailment={"context": []})]}
    assert fields_of(record) == ["claims[0].entailment.context"]


def test_retrieved_context_may_come_as_json_text_from_a_flat_table():
    parsed = parse_response({"response_id": "r", "claims": [],
                             "retrieved_context": '[{"id": "c", "text": "t", "source_id": "s"}]'})
    assert parsed.retrieved_context[0].source_id == "s"
    assert fields_of({"response_id": "r", "claims": [], "retrieved_context": "[{"}) == ["retrieved_context"]


# --- Table III: a contradiction of the context counts in C as well as F ------------------------------

def score_one(c: dict, profile=None):
    return score_response(parse_response({"response_id": "r", "claims": [c]}), profile or default_profile(), AS_OF)


def nonzero(result) -> dict[str, float]:
    return {d.value: v for d, v in result.dimensions.items() if v}


@pytest.mark.parametrize(("contradiction", "expected"), [
    ({}, {"F": 1.0}),
    ({"contradicted_by": "world"}, {"F": 1.0}),
    ({"contradicted_by": "context"}, {"F": 1.0, "C": 1.0}),
    ({"contradicted_by": "context", "dimensions": ["F"]}, {"F": 1.0}),  # explicit dimensions win
    ({"contradicted_by": "CONTEXT", "dimensions": ["C"]}, {"C": 1.0}),
])
def test_contradicted_by_context_hits_f_and_c_by_default(contradiction, expected):
    assert nonzero(score_one({"labels": ["CONTRADICTED"], **contradiction})) == expected


def test_only_the_contradicted_label_takes_the_context_dimensions():
    result = score_one({"labels": ["CONTRADICTED", "OUTDATED"], "contradicted_by": "context"})
    assert nonzero(result) == {"F": 1.0, "C": 1.0, "O": 0.75}


def test_the_profile_can_turn_the_context_rule_off_or_change_it():
    off = profile_from_dict({"context_contradiction_dimensions": ["F"]})
    assert nonzero(score_one({"labels": ["CONTRADICTED"], "contradicted_by": "context"}, off)) == {"F": 1.0}
    other = profile_from_dict({"context_contradiction_dimensions": ["c", "u"]})
    assert nonzero(score_one({"labels": ["CONTRADICTED"], "contradicted_by": "context"}, other)) == {"C": 1.0, "U": 1.0}
    assert off.fingerprint() != default_profile().fingerprint()
    assert "context_contradiction_dimensions" not in default_profile().to_dict()  # stored profiles unchanged
    assert off.to_dict()["context_contradiction_dimensions"] == ["F"]


def test_table_v_with_contradicted_by_instead_of_explicit_dimensions():
    record = json.loads((REPO_ROOT / "data" / "table_v_supplier_contract.jsonl").read_text(encoding="utf-8"))
    explicit = score_response(parse_response(record), default_profile(), AS_OF)
    for c in record["claims"]:
        if c["labels"] == ["CONTRADICTED"]:
            assert c.pop("dimensions") == ["F", "C"]
            c["contradicted_by"] = "context"
    implied = score_response(parse_response(record), default_profile(), AS_OF)
    assert implied.dimensions == explicit.dimensions
    assert implied.dimensions[Dimension.C] == pytest.approx(3 / 11)
    assert (implied.hri_add, implied.score, implied.band) == (explicit.hri_add, 70.0, "High")


def test_flat_csv_tables_carry_the_new_columns():
    lines = [
        "response_id,stakes,query_ambiguous,gt_answer,retrieved_context,labels,criticality,category,is_core,"
        "contradicted_by\n",
        'r1,Critical,true,the target,"[{""id"": ""k1"", ""text"": ""90 days""}]",'
        "CONTRADICTED,3,Financial,yes,context\n",
        "r1,Critical,true,the target,,SUPPORTED,1,general,false,\n",
    ]
    ((rows, _raw, record),) = list(iter_csv(lines))
    response = parse_response(record)
    assert (rows, response.stakes, response.query_ambiguous, response.gt_answer) == ([2, 3], "critical", True,
                                                                                     "the target")
    assert response.retrieved_context[0].text == "90 days"
    assert [(c.category, c.is_core, c.contradicted_by) for c in response.claims] == [
        ("financial", True, "context"), ("general", False, None)]
