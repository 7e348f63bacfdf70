"""A feedback time later than its import is quarantined, on every path that takes records (issue 34, class 7).

Feedback is validated before its record is imported; a ``feedback_at`` in the future (even tomorrow) was scored as
feedback "not validated yet": counted 0, it lowered the answer's risk to HRI 0, Low, release. Now such a record is
quarantined naming the claim's ``feedback_at``, whatever the format (JSON Lines through the bulk check and through the
per-record path, CSV, typed Parquet) and in a fix in place; a time within ``hri_core.feedback.FEEDBACK_CLOCK_SKEW``
of the import goes in (two clocks may differ), and the answer it belongs to is then decided at least review until
the as-of time reaches it (tests/register/scoring/test_feedback_window.py).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hri_core import RecordError
from hri_core.feedback import FEEDBACK_CLOCK_SKEW
from register import SYSTEM
from register.ingest.importer import import_path, reimport_quarantined
from register.scoring.profiles import ensure_default_profile


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def feedback_claim(when: str | None) -> dict:
    return {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"], "criticality": 2, "feedback_at": when, "feedback_count": 1,
            "feedback_resolved": True}


def record(rid: str, when: str | None) -> dict:
    return {"response_id": rid, "stakes": "low",
            "claims": [{"claim_id": f"{rid}-1", "labels": ["SUPPORTED"]}, {"claim_id": f"{rid}-2",
                                                                          **feedback_claim(when)}]}


def times() -> dict[str, str]:
    now = datetime.now(UTC)
    return {"tomorrow": iso(now + timedelta(days=1)), "far": "2999-01-01T00:00:00Z",
            "past-skew": iso(now + FEEDBACK_CLOCK_SKEW + timedelta(minutes=2)),
            "in-skew": iso(now + timedelta(minutes=1)), "yesterday": iso(now - timedelta(days=1))}


REFUSED = {"tomorrow", "far", "past-skew"}


def reasons(store) -> dict[str, list[dict]]:
    return {rid: json.loads(why) for rid, why in store.query("SELECT response_id, reasons FROM quarantine")}


@pytest.mark.parametrize("spelling", ["plain", "escaped"])
def test_json_lines_quarantine_a_future_feedback_time_by_the_bulk_and_the_per_record_path(store, tmp_path, spelling):
    """Plain lines go the bulk SQL way; an escape in the line sends it the per-record way: both refuse alike."""
    ensure_default_profile(store, SYSTEM)
    when = times()
    lines = [json.dumps(record(name, moment)) for name, moment in when.items()]
    if spelling == "escaped":
        lines = [line.replace('"response_id"', '"\\u0072esponse_id"') for line in lines]
    source = tmp_path / "feedback.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = import_path(store, SYSTEM, source)
    assert (report.records, report.accepted, report.quarantined) == (5, 2, 3)
    found = reasons(store)
    assert set(found) == REFUSED
    for name in REFUSED:
        (reason,) = found[name]
        assert reason["field"] == "claims[1].feedback_at"
        assert reason["message"].startswith(f"{when[name]} is in the future: later than the import by more than the "
                                            "5 minutes two clocks may differ"), reason
    assert sorted(r for (r,) in store.query("SELECT response_id FROM responses")) == ["in-skew", "yesterday"]
    # the one inside the clock skew is scored as of its import: its feedback is later, so a person looks
    decision, why = store.query("SELECT decision, decision_reasons FROM scores WHERE is_current "
                                "AND response_id = 'in-skew'")[0]
    assert decision == "review" and any("in-skew-2 carries validated negative feedback dated after" in r
                                        for r in why)


def test_csv_and_parquet_quarantine_a_future_feedback_time_naming_the_row(store, tmp_path):
    ensure_default_profile(store, SYSTEM)
    when = times()
    csv = tmp_path / "feedback.csv"
    csv.write_text("response_id,claim_id,labels,criticality,feedback_at,feedback_count\n"
                   f"c-late,c-late-1,VALIDATED_NEGATIVE_FEEDBACK,2,{when['tomorrow']},1\n"
                   f"c-ok,c-ok-1,VALIDATED_NEGATIVE_FEEDBACK,2,{when['yesterday']},1\n", encoding="utf-8")
    stamp = pa.timestamp("us", tz="UTC")
    parquet = tmp_path / "feedback.parquet"
    pq.write_table(pa.table({"response_id": ["p-late", "p-ok"], "claim_id": ["p-late-1", "p-ok-1"],
                             "labels": ["VALIDATED_NEGATIVE_FEEDBACK"] * 2,
                             "feedback_at": pa.array([datetime.now(UTC) + timedelta(days=1),
                                                      datetime.now(UTC) - timedelta(days=1)], stamp)}), parquet)
    for source in (csv, parquet):
        report = import_path(store, SYSTEM, source)
        assert (report.records, report.accepted, report.quarantined) == (2, 1, 1), source.name
    found = reasons(store)
    assert set(found) == {"c-late", "p-late"}
    for rid, row in (("c-late", 2), ("p-late", 1)):  # a CSV's header is its row 1
        (reason,) = found[rid]
        assert reason["field"] == "claims[0].feedback_at"
        assert reason["message"].startswith(f"row {row}: ") and "is in the future" in reason["message"]


def test_a_fix_in_place_with_a_future_feedback_time_stays_quarantined(store, tmp_path):
    ensure_default_profile(store, SYSTEM)
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps(record("fix", "not a time")) + "\n", encoding="utf-8")
    import_path(store, SYSTEM, source)
    (quarantine_id,) = store.query("SELECT quarantine_id FROM quarantine")[0]
    with pytest.raises(RecordError) as caught:
        reimport_quarantined(store, SYSTEM, quarantine_id, json.dumps(record("fix", times()["tomorrow"])))
    assert [p.loc for p in caught.value.problems] == ["claims[1].feedback_at"]
    assert store.query("SELECT status FROM quarantine") == [("open",)]
    reimport_quarantined(store, SYSTEM, quarantine_id, json.dumps(record("fix", times()["yesterday"])))
    assert store.query("SELECT status FROM quarantine") == [("resolved",)]
