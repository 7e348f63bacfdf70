"""The compiled one-pass check (``register.ingest.bulk``) and the per-record path decide alike, as a property.

Hypothesis draws chunks of JSON Lines lines -- records whose every field is either in its plain form or one of the
near-misses the per-record path reads otherwise (other spellings, other notations, numbers as text, out of range,
null, left out, label sets the vocabulary refuses, extensions, unknown keys, text of any Unicode, colons and quotes),
written with any key order, spacing and escaping, and at times edited as text (a key named twice, an escaped colon,
a trailing comma, NaN). For every line the compiled check takes, the per-record path (``readers.decode_line`` then
``items.validate_item``, as the importer runs it) accepts the record too, and stages exactly the same row
(``records.stage``): every column, the content hash included. A line the compiled check leaves goes to that same
per-record path, so the quarantine decisions are the same by construction; ``test_bulk.py`` imports whole files and
the hostile corpus both ways and compares what is stored. Plain records are always taken (the property is not of an
empty fast path).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as hs

from hri_core.feedback import latest_feedback_time
from hri_core.models import DEFAULT_LIMITS, TextLimits
from hri_core.vocabulary import CATEGORIES, LABELS, STAKES, cautious_label_set
from register.ingest import bulk
from register.ingest.bulk import stage_plain, utc_text
from register.ingest.items import Item, validate_item
from register.ingest.readers import decode_line
from register.ingest.records import stage

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
IMPORTED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
LIMITS = TextLimits(answer=60, question=40, claim_text=50, span=30, identifier=20)
LABEL_VALUES = [label.value for label in LABELS]

_text = hs.text(hs.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30) | hs.sampled_from(
    ["", "plain text", "a: b", 'say "yes"', "back\\slash", "line\nbreak\ttab", "café 😀", "\u2028", "\x7f\x00",
     "ends with space ", "http://x/y?z=1"])
_word = hs.text("abcz-_ 0:", min_size=1, max_size=8)


@hs.composite
def plain_times(draw) -> str:
    """A time in plain ISO 8601: any offset (or none), any fraction (or none)."""
    moment = draw(hs.datetimes(datetime(1000, 1, 2), datetime(9998, 12, 30)))
    if draw(hs.booleans()):
        moment = moment.replace(microsecond=0)
    offset = draw(hs.sampled_from(["", "Z", "Z", "+00:00", "+02:00", "-05:30", "+23:59", "-00:00"]))
    text = moment.isoformat(timespec=draw(hs.sampled_from(["seconds", "milliseconds", "microseconds"])))
    if "." in text and draw(hs.booleans()):
        text = text.rstrip("0").rstrip(".") if not text.endswith(".000") else text
    return text + offset


ODD_TIMES = ["2026-06-01 09:30:00", "2026-06-01", "2026-02-30T00:00:00Z", "2026-06-01T24:00:00Z",
             "2026-06-01T09:30:00.1234567Z", "0001-01-01T00:30:00+01:00", "9999-12-31T23:30:00-01:00",
             "0000-01-01T00:00:00Z", "1714550400", 1714550400, "2026-06-01t09:30:00z", " 2026-06-01T09:30:00Z",
             "0999-06-01T00:00:00Z", "2026-06-01T09:30:00.000000Z", "2026-06-01T09:30:60Z", None]


def allowed_labels():
    return hs.lists(hs.sampled_from(LABEL_VALUES), min_size=1, max_size=3, unique=True).map(
        lambda drawn: [label.value for label in cautious_label_set(drawn)])


ODD_LABELS = [[], ["supported"], " SUPPORTED ", "F,C", ["SUPPORTED "], None, [None], [1], ["SUPPORTED", "SUPPORTED"],
              ["SUPPORTED", "UNSUPPORTED"], ["PARTIAL", "UNSUPPORTED"], ["OUTDATED", "OUTDATED", "ACCESS_GAP"]]


def _field(draw, plain, odd: list, odds: int = 30):
    """A field's value: plain mostly, one of the near-misses ``odd`` one time in ``odds``."""
    return draw(hs.sampled_from(odd)) if draw(hs.integers(1, odds)) == 1 else draw(plain)


@hs.composite
def claims(draw, rid: str, index: int) -> dict:
    claim: dict = {"labels": _field(draw, allowed_labels(), ODD_LABELS, 15)}
    fields = {
        "claim_id": (hs.sampled_from([f"{rid}-{index + 1}", f"c{index}", "", None]), [f"{rid}-{index + 2}", "c1", 7,
                                                                                      "c:1"]),
        "text": (_text | hs.just(None), [3]), "source_id": (_word | hs.just(None), [0]),
        "span": (_text | hs.just(None), ["x" * 31]),
        "criticality": (hs.integers(1, 1000), [0, 1001, -1, True, 2.0, "2", None, 10**30]),
        "dimensions": (hs.lists(hs.sampled_from("FCUOSPH"), min_size=1, max_size=3, unique=True) | hs.just(None),
                       [[], ["f"], ["F", "F"], "F,C"]),
        "feedback_at": (hs.sampled_from(["2026-11-30T08:00:00+01:00", "2026-12-01T12:04:59Z", None]),
                        [*ODD_TIMES, "2026-12-01T12:05:01Z", "2026-12-01T13:04:00+01:00", "2027-01-01T00:00:00Z"]),
        "feedback_count": (hs.integers(0, 1_000_000) | hs.just(None), [1_000_001, -1, "3"]),
        "feedback_resolved": (hs.sampled_from([True, False, None]), ["true", 1]),
        "category": (hs.sampled_from([*CATEGORIES, None]), ["Legal", "discrimination / bias", ""]),
        "is_core": (hs.sampled_from([True, False, None]), [0]),
        "contradicted_by": (hs.just("context"), [None]), "entailment": (hs.just({"target": "Entailment"}), [None]),
        "weight": (hs.just(1), [None]),
    }
    for name, (plain, odd) in fields.items():
        if draw(hs.integers(0, 9)) < (1 if name in ("contradicted_by", "entailment", "weight") else 5):
            claim[name] = _field(draw, plain, odd, 6 if name in ("contradicted_by", "entailment", "weight") else 30)
    return claim


@hs.composite
def records(draw, index: int) -> dict:
    rid = _field(draw, hs.just(f"r-{index}"), [" r-pad", "r-é", "r:1", "", "r-\u00a0", 12, None, "x" * 21], 10)
    record: dict = {"response_id": rid}
    fields = {
        "use_case": (_word | hs.just(None), [7]), "model": (_word | hs.just(None), [0]),
        "created_at": (plain_times() | hs.just(None), ODD_TIMES), "question": (_text | hs.just(None), ["q" * 41]),
        "answer": (_text | hs.just(None), ["x" * 61, ["a"]]),
        "stakes": (hs.sampled_from([*STAKES, None]), ["High", " low", "", "urgent"]),
        "gt_answer": (_text | hs.just(None), [1]), "query_ambiguous": (hs.sampled_from([True, False, None]), ["false"]),
    }
    for name, (plain, odd) in fields.items():
        if draw(hs.booleans()):
            record[name] = _field(draw, plain, odd, 20)
    for name, value in (("retrieved_context", [{"id": "c1", "text": "chunk"}]), ("_quarantine", {"quarantine_id": 9}),
                        ("unknown", "kept out")):
        if draw(hs.integers(1, 30)) == 1:
            record[name] = value
    record["claims"] = ([draw(claims(str(rid), i)) for i in range(draw(hs.integers(0, 5)))]
                        if draw(hs.integers(0, 29)) else draw(hs.sampled_from([None, {}, "none", [None], [42]])))
    return record


@hs.composite
def lines(draw, index: int) -> str:
    """A record written as a JSON Lines line: any key order, spacing and escaping, at times edited as text."""
    record = draw(records(index))
    shuffle = random.Random(draw(hs.integers(0, 2**16)))
    keys = list(record)
    shuffle.shuffle(keys)
    record = {key: record[key] for key in keys}
    line = json.dumps(record, ensure_ascii=draw(hs.booleans()),
                      separators=draw(hs.sampled_from([(", ", ": "), (",", ":"), (" ,", " : ")])))
    edit = draw(hs.integers(0, 29))
    if edit == 0:  # a key named twice, the first value kept out of sight of a dict
        key = draw(hs.sampled_from(["response_id", "answer", "labels", "text", "criticality", "created_at"]))
        first = draw(hs.sampled_from(["null", "1", '"a:b"', "[]"]))
        line = line.replace(f'"{key}"', f'"{key}": {first}, "{key}"', 1)
    elif edit == 1:  # a colon written as an escape, in a key named twice or in text
        line = line.replace('"response_id"', '"response_id": "x\\u003ay", "response_id"', 1)
    elif edit == 6:
        line = line.replace("a: b", "a\\u003a b")
    elif edit == 2:
        line = line.replace("e", "\\u0065", 1)
    elif edit == 3:
        line = line.replace("]", ", ]", 1)
    elif edit == 4:
        line = line.replace('"labels"', '"weight": NaN, "labels"', 1)
    elif edit == 5:
        line = line.replace("\\n", "\\ud800", 1)
    return line


def _per_record(line: str):
    item = decode_line(Item("line 1", line, None, [], None, decoded=False))
    if item.ref is not None:
        return None
    response, _problems = validate_item(item, LIMITS, IMPORTED_AT)
    return response


def _check_alike(texts: list[str], limits: TextLimits) -> int:
    """Every line the compiled check takes is accepted and staged alike by the per-record path; how many it took."""
    found = stage_plain(texts, limits, latest_feedback=latest_feedback_time(IMPORTED_AT))
    whole, bulk._SLICE = bulk._SLICE, 3  # the lines staged three at a time give the same
    try:
        sliced = stage_plain(texts, limits, latest_feedback=latest_feedback_time(IMPORTED_AT))
    finally:
        bulk._SLICE = whole
    assert (sliced.positions, sliced.response_ids) == (found.positions, found.response_ids)
    assert sliced.responses.equals(found.responses) and sliced.claims.equals(found.claims)
    assert found.positions == sorted(found.positions)
    assert len(found.response_ids) == found.responses.num_rows == len(found.positions)
    first_claim = 0
    for row, position in enumerate(found.positions):
        line = texts[position]
        response = _per_record(line)
        assert response is not None, line
        staged_r, staged_c = stage([(response, line)])
        assert found.response_ids[row] == response.response_id
        assert found.responses.slice(row, 1).to_pylist() == staged_r.to_pylist(), line
        assert found.claims.slice(first_claim, staged_c.num_rows).to_pylist() == staged_c.to_pylist(), line
        first_claim += staged_c.num_rows
    assert first_claim == found.claims.num_rows
    return len(found.positions)


@SETTINGS
@given(hs.integers(1, 8).flatmap(lambda n: hs.tuples(*[lines(i) for i in range(n)])))
def test_the_compiled_check_takes_only_what_the_per_record_path_accepts_and_stages_it_alike(texts):
    taken = _check_alike(list(texts), LIMITS)
    accepted = sum(_per_record(line) is not None for line in texts)
    event("the compiled check took", taken)
    event("the per-record path accepted", accepted)


@hs.composite
def plain_lines(draw, index: int) -> str:
    """A plain record: every field in its canonical form (or left out, or null where that changes nothing)."""
    rid = f"r-{index}"
    record: dict = {"response_id": rid}
    for name, values in (("use_case", _word), ("model", _word | hs.just(None)), ("question", _text),
                         ("answer", _text), ("stakes", hs.sampled_from(STAKES)), ("gt_answer", _text),
                         ("query_ambiguous", hs.booleans()), ("created_at", hs.datetimes(
                             datetime(1970, 1, 1), datetime(2030, 1, 1),
                             timezones=hs.sampled_from([UTC, timezone(timedelta(hours=2))])).map(
                                 lambda moment: moment.isoformat().replace("+00:00", "Z")))):
        if draw(hs.booleans()):
            record[name] = draw(values)
    record["claims"] = []
    for i in range(draw(hs.integers(0, 6))):
        claim: dict = {"labels": draw(allowed_labels())}
        for name, values in (("claim_id", hs.sampled_from([f"{rid}-{i + 1}", "", None])), ("text", _text),
                             ("criticality", hs.integers(1, 1000)), ("source_id", _word), ("span", _text),
                             ("dimensions", hs.lists(hs.sampled_from("FCUOSPH"), min_size=1, max_size=3, unique=True)),
                             ("feedback_count", hs.integers(0, 1_000_000)), ("feedback_resolved", hs.booleans()),
                             ("category", hs.sampled_from(CATEGORIES)), ("is_core", hs.booleans() | hs.none()),
                             ("feedback_at", hs.just("2026-11-30T08:00:00+01:00"))):
            if draw(hs.booleans()):
                claim[name] = draw(values)
        record["claims"].append(claim)
    return json.dumps(record, ensure_ascii=draw(hs.booleans()))


@SETTINGS
@given(hs.integers(1, 6).flatmap(lambda n: hs.tuples(*[plain_lines(i) for i in range(n)])))
def test_plain_records_are_all_taken_and_staged_alike(texts):
    limits = DEFAULT_LIMITS
    assert _check_alike(list(texts), limits) == len(texts)


def test_a_text_holding_the_characters_of_an_escape_is_taken():
    """A value that holds a backslash and "u003" as text (written "\\\\u003") is no escaped colon: the compiled
    check takes it (a Hypothesis run found it left to the per-record path); a real escape before it still is not."""
    texts = [json.dumps({"response_id": "r-0", "gt_answer": "\\u003", "claims": []}),
             json.dumps({"response_id": "r-1", "answer": "C:\\u003a\\x", "claims": []})]
    assert "\\\\u003" in texts[0]
    assert _check_alike(texts, DEFAULT_LIMITS) == 2
    escaped = texts[1].replace('"answer"', '"answer": "\\\\\\u003a", "answer"', 1)  # a key named twice, then
    assert _check_alike([escaped], DEFAULT_LIMITS) == 0


def test_what_the_types_cannot_see_is_left_to_the_per_record_path():
    """Each of these lines decodes into the compiled types; each is left to the per-record path all the same."""
    ok = {"response_id": "r-1", "claims": [{"claim_id": "c1", "labels": ["SUPPORTED"]}]}
    line = json.dumps(ok)
    left = [
        line.replace('"response_id"', '"response_id": "r-0", "response_id"'),  # a key named twice
        line.replace('"labels"', '"labels": ["PARTIAL"], "labels"'),
        line.replace('"claim_id": "c1"', '"claim_id": "c1", "text": null, "text": "a:b"'),
        line.replace('"response_id"', '"response_id": "x\\u003a", "response_id"'),  # ... behind an escaped colon
        json.dumps({**ok, "response_id": " r-1"}),  # pydantic strips it
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED", "SUPPORTED"]}]}),  # pydantic keeps one
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED", "UNSUPPORTED"]}]}),  # refused together
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED"], "dimensions": []}]}),
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED"], "dimensions": ["F", "F"]}]}),
        json.dumps({**ok, "claims": [{"claim_id": "c1", "labels": ["SUPPORTED"]}, {"claim_id": "c1",
                                                                                   "labels": ["PARTIAL"]}]}),
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED"]}, {"claim_id": "r-1-1", "labels": ["PARTIAL"]}]}),
        json.dumps({**ok, "created_at": "2026-02-30T00:00:00Z"}),
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED"], "feedback_at": "2026-12-01T12:05:01Z"}]}),
        json.dumps({**ok, "claims": [{"labels": ["SUPPORTED"], "feedback_at": "2026-02-30T00:00:00Z"}]}),
    ]
    found = stage_plain([line, *left, line.replace("r-1", "r-2")], LIMITS,
                        latest_feedback=latest_feedback_time(IMPORTED_AT))
    assert found.positions == [0, len(left) + 1]
    assert found.claims.column("response_id").to_pylist() == ["r-1", "r-2"]


def test_times_are_read_and_written_as_pydantic_does():
    assert utc_text("2026-06-01T10:00:00.5+02:00")[1] == "2026-06-01T08:00:00.500000Z"
    assert utc_text("0999-06-01T00:00:00")[1] == "0999-06-01T00:00:00Z"
    assert utc_text("2026-06-01T09:30:00.000Z")[1] == "2026-06-01T09:30:00Z"
    assert utc_text("0001-01-01T00:30:00+01:00") is None  # before the year 1 in UTC
    assert utc_text("2026-02-30T00:00:00Z") is None
