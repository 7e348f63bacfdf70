"""Issue 34, class 3: the quarantine exports and fixes any row it could store. ``quarantine export`` writes every
open row, whatever its raw text holds (a row it cannot read back as JSON goes out as its raw text with its
reasons), never an empty or partial file; fixing such a row in place gives a named error, never a crash."""

from __future__ import annotations

import json

import pytest

from hri_core import RecordError
from register import SYSTEM, Store
from register.ingest import exporter
from register.ingest.importer import reimport_quarantined

HOSTILE = {
    "deep": '{"response_id": "deep", "claims": [], "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "digits": '{"response_id": "digits", "claims": [{"labels": ["SUPPORTED"], "criticality": ' + "9" * 5000 + "}]}",
    "nan": '{"response_id": "nan", "claims": [], "x": NaN}',
    "duplicate": '{"response_id": "dup", "response_id": "dup2", "claims": []}',
    "surrogate": '{"response_id": "sur", "answer": "\\ud800", "claims": []}',
}
UNREADABLE = list(HOSTILE)  # none of these texts can be read back as JSON
GOOD = '{"response_id": "good", "claims": [{"labels": ["SUPPORTED"]}]}'
BAD_LABEL = '{"response_id": "label", "claims": [{"labels": ["NOPE"]}]}'


@pytest.fixture
def quarantined(register_cli, tmp_path):
    """A register whose quarantine holds one row per hostile text and one bad label (all open)."""
    source = tmp_path / "hostile.jsonl"
    source.write_text("\n".join([GOOD, *HOSTILE.values(), BAD_LABEL]) + "\n", encoding="utf-8")
    cli = register_cli()
    done = cli("import", "--json", "--quiet", source)
    assert done.returncode == 2 and json.loads(done.stdout)["quarantined"] == len(HOSTILE) + 1, done.stderr
    return cli


def open_rows(db) -> list[tuple[int, str, str, str]]:
    store = Store(db)
    try:
        return store.query("SELECT quarantine_id, location, raw, status FROM quarantine ORDER BY quarantine_id")
    finally:
        store.close()


def test_every_open_row_is_exported_the_unreadable_ones_as_their_raw_text(quarantined, tmp_path):
    target = tmp_path / "out" / "quarantine.jsonl"
    done = quarantined("quarantine", "export", target)
    assert done.returncode == 0, done.stderr
    rows = open_rows(quarantined.db)
    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert f"wrote {len(rows)} quarantine row(s)" in done.stdout and len(lines) == len(rows) == len(HOSTILE) + 1
    for (qid, location, raw, _), line in zip(rows, lines, strict=True):
        meta = line["_quarantine"]
        assert meta["quarantine_id"] == qid and meta["location"] == location and meta["reasons"]
        if location == f"line {len(HOSTILE) + 2}":  # the bad label: readable, exported as the record to correct
            assert line["response_id"] == "label" and "raw" not in meta
        else:
            assert meta["raw"] == raw and set(line) == {"_quarantine"}
    assert sorted(p.name for p in target.parent.iterdir()) == ["quarantine.jsonl"]  # no partial file left


def test_an_export_that_fails_leaves_the_previous_file_and_no_partial_one(quarantined, tmp_path, monkeypatch):
    target = tmp_path / "quarantine.jsonl"
    target.write_text("previous export\n", encoding="utf-8")
    real, seen = exporter._fixable_line, []

    def failing(*row):
        seen.append(row)
        if len(seen) == 3:
            raise OSError("disk full")
        return real(*row)

    monkeypatch.setattr(exporter, "_fixable_line", failing)
    done = quarantined("quarantine", "export", target)
    assert done.returncode != 0 and "disk full" in done.stderr
    assert target.read_text(encoding="utf-8") == "previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir() if "quarantine" in p.name) == ["quarantine.jsonl"]


@pytest.mark.parametrize("name", UNREADABLE)
def test_fixing_an_unreadable_row_in_place_with_its_own_text_is_a_named_error(quarantined, name):
    rows = {raw: (qid, location) for qid, location, raw, _ in open_rows(quarantined.db)}
    qid, location = rows[HOSTILE[name]]
    store = Store(quarantined.db)
    try:
        with pytest.raises(RecordError) as raised:
            reimport_quarantined(store, SYSTEM, qid, HOSTILE[name])
        assert raised.value.record == f"quarantine {qid} (hostile.jsonl, {location})"
        assert raised.value.problems and all(p.loc and p.message for p in raised.value.problems)
        assert store.scalar("SELECT status FROM quarantine WHERE quarantine_id = ?", [qid]) == "open"
        fixed = reimport_quarantined(store, SYSTEM, qid, '{"response_id": "fixed", "claims": []}')
        assert (fixed.accepted, fixed.resolved) == (1, 1)
    finally:
        store.close()
