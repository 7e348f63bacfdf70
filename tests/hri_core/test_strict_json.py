"""The one strict, bounded JSON decoder (issue 34): its limits hold exactly at their values, every refusal names
the field, nothing raises, and a document's list is cut into its items' own texts without decoding it."""

from __future__ import annotations

import json

import pytest

from hri_core import Response, parse_response
from hri_core.errors import RecordError
from hri_core.rag_import import ragas_rows
from hri_core.strict_json import MAX_JSON_DEPTH, MAX_NUMBER_DIGITS, decode_json, json_list_items, nesting_depth


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_at_the_limit_decodes_and_one_level_more_is_refused_naming_the_field():
    at_limit = '{"x": ' + nested(MAX_JSON_DEPTH - 1) + "}"
    assert nesting_depth(at_limit) == MAX_JSON_DEPTH
    assert decode_json(at_limit)[1] == []
    value, problems = decode_json('{"ok": 1, "x": ' + nested(MAX_JSON_DEPTH) + "}")
    assert value is None and [p.loc for p in problems] == ["x"]
    assert f"over the limit of {MAX_JSON_DEPTH}" in problems[0].message


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = json.dumps({"text": "[" * 10_000 + "{" * 10_000, "n": 1})
    assert nesting_depth(text) == 1
    assert decode_json(text) == ({"text": "[" * 10_000 + "{" * 10_000, "n": 1}, [])


@pytest.mark.parametrize("depth", [100_000, 1_000_000])
def test_any_depth_is_refused_without_recursing(depth):
    value, problems = decode_json('{"claims": [{"labels": ' + nested(depth) + "}]}")
    assert value is None and problems[0].loc == "claims[0].labels" and f"{depth + 3:,} levels" in problems[0].message


@pytest.mark.parametrize(("number", "refused"), [
    ("9" * MAX_NUMBER_DIGITS, False), ("9" * (MAX_NUMBER_DIGITS + 1), True), ("-" + "9" * MAX_NUMBER_DIGITS, False),
    ("0." + "1" * (MAX_NUMBER_DIGITS - 1), False), ("0." + "1" * MAX_NUMBER_DIGITS, True), ("1e400", True),
    ("-1e400", True), ("1e308", False), ("1e-400", False),
], ids=["int-at-limit", "int-over", "negative-at-limit", "fraction-at-limit", "fraction-over", "1e400", "-1e400",
        "1e308", "1e-400"])
def test_numbers_are_bounded_by_their_digits_and_must_be_finite(number, refused):
    value, problems = decode_json('{"a": [1, {"n": ' + number + "}]}")
    assert (value is None) is refused
    if refused:
        assert [p.loc for p in problems] == ["a[1].n"]


def test_a_string_never_closed_is_read_once_not_once_per_quote():
    """Each escaped quote of an unclosed string used to start a new scan to the end of the text (quadratic)."""
    unclosed = '"' + '\\"' * 100_000
    assert "600 levels" in decode_json("[" * 600 + unclosed)[1][0].message
    assert json_list_items('{"results": [{"a": 1}, ' + unclosed, "results") == (['{"a": 1}', unclosed], ["results"])


def test_every_refusal_of_one_text_is_named():
    text = '{"a": NaN, "b": {"k": 1, "k": 2}, "c": [Infinity], "d": ' + "7" * 5000 + ', "e": "\\ud800"}'
    value, problems = decode_json(text)
    assert value is None
    assert {p.loc for p in problems} == {"a", "b.k", "c[0]", "d"}  # the surrogate is looked for once these are fixed


def test_malformed_text_after_a_refused_value_is_reported_as_malformed():
    assert decode_json('{"a": NaN, "b": }')[1][0].message.startswith("malformed JSON")


def test_the_list_of_a_document_is_cut_into_its_items_texts():
    items = [{"q": "a ], [ {"}, {"q": '"quoted"', "n": [1, [2]]}, 3]
    document = json.dumps({"results": items, "metrics": {}}, indent=2)
    texts, keys = json_list_items(document, "results")
    assert [json.loads(text) for text in texts] == items and keys == ["results", "metrics"]
    assert all(text in document for text in texts)  # each item's own text, verbatim
    assert json_list_items(json.dumps(items), "results") == ([json.dumps(item) for item in items], [])
    assert json_list_items("[1, 2, {", "results") == (["1", "2", "{"], [])  # cut short: the rest is the last item
    assert json_list_items("[]", "results") == ([], [])
    assert json_list_items('{"results": [1], "results": [2]}', "results") is None  # the key twice: decode whole
    assert json_list_items('{"results": {"a": 1}}', "results") is None
    assert json_list_items('"text"', "results") is None


def test_an_embedded_context_text_is_held_to_the_same_rules_as_a_line():
    def problems(context: str) -> list[str]:
        try:
            parse_response({"response_id": "r", "claims": [], "retrieved_context": context})
        except RecordError as error:
            return [f"{p.loc}: {p.message}" for p in error.problems]
        return []

    assert problems('[{"id": "1", "text": "t"}]') == []
    assert "at [0].id: duplicate key 'id'" in problems('[{"id": "1", "id": "2", "text": "t"}]')[0]
    assert "at [0].n: NaN is not a JSON value" in problems('[{"id": "1", "text": "t", "n": NaN}]')[0]
    assert "nested 100,000 levels deep" in problems(nested(100_000))[0]
    assert "5,000 digits" in problems('[{"id": "1", "text": "t", "n": ' + "1" * 5000 + "}]")[0]
    assert problems(nested(100_000))[0].startswith("retrieved_context: ")
    assert isinstance(parse_response({"response_id": "r", "claims": [], "retrieved_context": "[]"}), Response)


@pytest.mark.parametrize(("cell", "message"), [
    (nested(100_000), "nested 100,000 levels deep"),
    ("-" * 100_000, "not a list of strings"),
    ("[" + "-" * 100_000 + "1]", "not a list of strings"),
    ("(" * 10_000, "not a list of strings"),
    ('["a", "a\\ud800"]', "lone surrogate"),
    ("['a', '\\ud800']", "lone surrogate"),
], ids=["deep", "dashes", "dashes-in-a-list", "parentheses", "json-surrogate", "python-surrogate"])
def test_a_ragas_context_cell_fails_its_row_alone(cell, message):
    rows = [{"user_input": "q1", "retrieved_contexts": "['one', \"it's\"]"},
            {"user_input": "q2", "retrieved_contexts": cell}]
    conversion = ragas_rows(rows)
    assert [r.record["retrieved_context"] for r in conversion.records] == [[{"id": "1", "text": "one"},
                                                                           {"id": "2", "text": "it's"}]]
    (failure,) = conversion.failures
    assert failure.line == 3 and failure.error.problems[0].loc == "retrieved_contexts"
    assert message in failure.error.problems[0].message


@pytest.mark.parametrize("value", [1.0, 1e300, float("nan"), True])
def test_a_ragas_response_id_that_is_no_id_fails_its_row_naming_the_column(value):
    conversion = ragas_rows([{"user_input": "q", "response_id": value}, {"user_input": "q", "response_id": 7}])
    if value != value:  # NaN is a data frame's missing value: the row takes its generated id (a file's float
        assert not conversion.failures  # column is refused whole by the Parquet reader: test_rag_files)
        return
    assert [r.response.response_id for r in conversion.records] == ["7"]
    (failure,) = conversion.failures
    assert failure.response_id is None and failure.error.problems[0].loc == "response_id"
    assert "must be text or an integer" in failure.error.problems[0].message
