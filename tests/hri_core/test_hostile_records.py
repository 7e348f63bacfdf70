"""Hostile records through the pure core: every one is refused with a ``RecordError`` naming its field, none
crashes and none is silently read as something else.

Bounds (``MAX_CRITICALITY``, ``MAX_FEEDBACK_COUNT``, ``TextLimits``), timestamps (ISO 8601 text only, in
range once converted to UTC) and the JSON Lines decoder (duplicate keys, lone surrogates, nesting deeper
than the recursion limit, NaN, numbers too long to convert, ``null`` lines).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from hri_core import RecordError, parse_response
from hri_core.models import MAX_CRITICALITY, MAX_FEEDBACK_COUNT, TextLimits
from hri_core.readers import iter_jsonl


def claim(**fields):
    return {"labels": ["SUPPORTED"], **fields}


def problems(record, **kwargs) -> dict[str, str]:
    with pytest.raises(RecordError) as caught:
        parse_response(record, **kwargs)
    return {p.loc: p.message for p in caught.value.problems}


# --- integer bounds ----------------------------------------------------------------------------------


def test_the_documented_maxima():
    assert (MAX_CRITICALITY, MAX_FEEDBACK_COUNT) == (1_000, 1_000_000)


@pytest.mark.parametrize("value", [MAX_CRITICALITY + 1, 2_147_483_647, 99999999999999999999999, 2 ** 64])
def test_criticality_over_the_maximum_is_refused_naming_record_and_field(value):
    record = {"response_id": "poison", "claims": [claim(criticality=value), claim(criticality=1)]}
    with pytest.raises(RecordError) as caught:
        parse_response(record)
    shape = caught.value.as_dict()
    assert shape["record"] == "response_id=poison"
    assert [(p["field"]) for p in shape["problems"]] == ["claims[0].criticality"]
    assert f"{MAX_CRITICALITY:,}" in shape["problems"][0]["message"]


def test_criticality_at_the_maximum_is_accepted():
    response = parse_response({"response_id": "r", "claims": [claim(criticality=MAX_CRITICALITY)]})
    assert response.claims[0].criticality == MAX_CRITICALITY


@pytest.mark.parametrize("value", [MAX_FEEDBACK_COUNT + 1, 9223372036854775808])
def test_feedback_count_over_the_maximum_is_refused(value):
    found = problems({"response_id": "r", "claims": [claim(feedback_count=value)]})
    assert list(found) == ["claims[0].feedback_count"]
    assert f"{MAX_FEEDBACK_COUNT:,}" in found["claims[0].feedback_count"]


@pytest.mark.parametrize("text", ["1" * 5000, "99999999999999999999999"])
def test_integer_text_too_long_for_a_machine_integer_is_refused(text):
    found = problems({"response_id": "r", "claims": [claim(criticality=text)]})
    assert list(found) == ["claims[0].criticality"]


# --- timestamps --------------------------------------------------------------------------------------


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
@pytest.mark.parametrize("field", ["created_at", "feedback_at"])
def test_a_time_out_of_range_in_utc_is_refused(moment, field):
    record = {"response_id": "r", "claims": [claim()]}
    if field == "created_at":
        record["created_at"] = moment
    else:
        record["claims"][0]["feedback_at"] = moment
    found = problems(record)
    loc = field if field == "created_at" else "claims[0].feedback_at"
    assert list(found) == [loc]
    assert "out of range" in found[loc]


@pytest.mark.parametrize("value", [253402300800, 1700000000, 1.7e9, "1700000000", " 253402300800 ", "1.5e9", True])
def test_a_number_where_a_timestamp_belongs_is_refused(value):
    found = problems({"response_id": "r", "created_at": value, "claims": [claim(feedback_at=value)]})
    assert set(found) == {"created_at", "claims[0].feedback_at"}
    assert all("ISO 8601" in message for message in found.values())


@pytest.mark.parametrize(("value", "expected"), [
    ("2026-11-01T09:30:00Z", datetime(2026, 11, 1, 9, 30, tzinfo=UTC)),
    ("2026-11-01T10:30:00+01:00", datetime(2026, 11, 1, 9, 30, tzinfo=UTC)),
    ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
    (datetime(2026, 11, 1, 9, 30), datetime(2026, 11, 1, 9, 30, tzinfo=UTC)),  # typed columns (Parquet)
    (date(2026, 11, 1), datetime(2026, 11, 1, tzinfo=UTC)),
])
def test_iso_text_and_typed_times_are_read(value, expected):
    assert parse_response({"response_id": "r", "created_at": value, "claims": []}).created_at == expected


# --- text limits -------------------------------------------------------------------------------------


def test_text_over_its_limit_is_refused_naming_the_field():
    limits = TextLimits(answer=10, question=5, claim_text=4, span=3)
    record = {"response_id": "r", "answer": "a" * 11, "question": "q" * 6,
              "claims": [claim(text="t" * 4, span="s" * 4)]}
    found = problems(record, limits=limits)
    assert set(found) == {"answer", "question", "claims[0].span"}
    assert "11 characters" in found["answer"] and "limit of 10" in found["answer"]


def test_default_limits_allow_a_long_answer_and_refuse_a_10_mb_one():
    ok = parse_response({"response_id": "r", "answer": "x" * 200_000, "claims": []})
    assert len(ok.answer) == 200_000
    assert list(problems({"response_id": "r", "answer": "x" * 10_000_000, "claims": []})) == ["answer"]


@pytest.mark.parametrize("field", ["response_id", "use_case", "model", "stakes"])
def test_identifiers_and_short_fields_have_a_limit_too(field):
    record = {"response_id": "r", "claims": [], field: "x" * (TextLimits().identifier + 1)}
    assert list(problems(record)) == [field]


# --- the JSON Lines decoder ------------------------------------------------------------------------------


def decoded(*lines: str):
    """(line number, record or RecordError) for each record of the lines."""
    return [(number, record) for number, _raw, record in iter_jsonl(line + "\n" for line in lines)]


def only_error(line: str) -> dict[str, str]:
    ((_, result),) = decoded(line)
    assert isinstance(result, RecordError), result
    return {p.loc: p.message for p in result.problems}


def test_duplicate_keys_are_refused_and_named_where_they_are():
    found = only_error('{"response_id": "a", "claims": [{"labels": ["SUPPORTED"], "criticality": 1, '
                       '"criticality": 3}], "response_id": "b"}')
    assert set(found) == {"response_id", "claims[0].criticality"}
    assert "duplicate key" in found["response_id"]


def test_a_lone_surrogate_is_refused_naming_the_field_and_a_pair_is_text():
    found = only_error('{"response_id": "s", "claims": [{"labels": ["SUPPORTED"], "text": "x\\ud800"}]}')
    assert list(found) == ["claims[0].text"]
    assert "surrogate" in found["claims[0].text"]
    ((_, record),) = decoded('{"response_id": "s", "answer": "\\ud83d\\ude00", "claims": []}')
    assert record["answer"] == "\U0001F600"


def test_nesting_deeper_than_the_recursion_limit_is_one_bad_line():
    deep = '{"response_id": "n", "claims": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    results = decoded('{"response_id": "ok", "claims": []}', deep, '{"response_id": "ok2", "claims": []}')
    assert [n for n, _ in results] == [1, 2, 3]
    assert isinstance(results[1][1], RecordError) and "nested" in str(results[1][1])
    assert [r["response_id"] for _, r in (results[0], results[2])] == ["ok", "ok2"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(literal):
    found = only_error('{"response_id": "x", "claims": [], "extra": ' + literal + "}")
    assert literal in found["extra"]  # the field named (issue 34)


def test_a_number_too_long_to_convert_is_one_bad_line():
    found = only_error('{"response_id": "x", "claims": [{"labels": ["SUPPORTED"], "criticality": ' + "9" * 5000 + "}]}")
    assert "5,000 digits" in found["claims[0].criticality"]  # the field named (issue 34)


@pytest.mark.parametrize(("line", "kind"), [("null", "null"), ("[1, 2]", "an array"), ('"text"', "a string"),
                                            ("42", "a number"), ("true", "a boolean")])
def test_a_line_that_is_not_an_object_gets_a_reason(line, kind):
    found = only_error(line)
    assert found == {"": f"expected a JSON object (one response), got {kind}"}


def test_valid_lines_decode_as_before():
    record = {"response_id": "r", "claims": [claim(criticality=2)]}
    ((number, result),) = decoded(json.dumps(record))
    assert (number, result) == (1, record)


@pytest.mark.parametrize(("rule", "field"), [
    ({"min_criticality": 10 ** 30}, "floors[0].min_criticality"),
    ({"max_criticality": MAX_CRITICALITY + 1}, "floors[0].max_criticality"),
    ({"condition": "repeated_or_unresolved", "min_feedback_count": 2 ** 63}, "floors[0].min_feedback_count"),
])
def test_a_floor_rule_is_bounded_like_the_claims_it_reads(rule, field):
    from hri_core import ProfileError, profile_from_dict

    with pytest.raises(ProfileError) as caught:
        profile_from_dict({"floors": [{"rule_id": "x", "label": "CONTRADICTED", "value": 0.5, **rule}]})
    assert [p.loc for p in caught.value.problems] == [field]
