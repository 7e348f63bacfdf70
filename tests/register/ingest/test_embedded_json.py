"""Issue 34, class 1: JSON text inside a field (``retrieved_context`` as a JSON Lines string or a CSV cell) is
decoded as strictly and within the same limits as a JSON Lines line (``hri_core.strict_json``), through the
command line: deep nesting, duplicate keys, NaN and overlong numbers quarantine that record alone, naming the
line or row and the field; the batch finishes, and an interrupted import resumes past such a record."""

from __future__ import annotations

import json

import pytest

from register import Store
from register.ingest import batches

DEEP = "[" * 100_000 + "]" * 100_000


def ok(rid: str, **extra) -> dict:
    return {"response_id": rid, "claims": [{"labels": ["SUPPORTED"]}], **extra}


def write_jsonl(path, *records: dict) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def quarantine(db) -> dict[str, list[tuple[str, str]]]:
    store = Store(db)
    try:
        rows = store.query("SELECT location, reasons FROM quarantine ORDER BY quarantine_id")
        unfinished = store.scalar("SELECT count(*) FROM import_batches WHERE finished_at IS NULL")
    finally:
        store.close()
    assert unfinished == 0
    return {location: [(r["field"], r["message"]) for r in json.loads(reasons)] for location, reasons in rows}


def imported(cli, *args) -> dict:
    done = cli("import", "--json", "--quiet", *args)
    assert done.returncode in (0, 2), done.stderr
    report = json.loads(done.stdout)
    assert report["balanced"] and report["accepted"] + report["quarantined"] == report["records"]
    return report


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_deeply_nested_context_text_quarantines_its_record_alone(register_cli, tmp_path, fmt):
    if fmt == "jsonl":
        source = write_jsonl(tmp_path / "deep.jsonl", ok("a1"), ok("a2", retrieved_context=DEEP), ok("a3"))
        where = "line 2"
    else:
        source = tmp_path / "deep.csv"
        source.write_text(f'response_id,labels,retrieved_context\na1,SUPPORTED,\na2,SUPPORTED,"{DEEP}"\n'
                          'a3,SUPPORTED,"[{""id"": ""1"", ""text"": ""chunk""}]"\n', encoding="utf-8")
        where = "row 3"
    cli = register_cli()
    report = imported(cli, source)
    assert (report["records"], report["accepted"], report["quarantined"]) == (3, 2, 1)
    ((field, message),) = quarantine(cli.db)[where]
    assert field == "retrieved_context" and "nested 100,000 levels deep, over the limit of 512" in message


def test_duplicate_keys_nan_and_long_numbers_in_context_text_are_quarantined_as_in_a_line(register_cli, tmp_path):
    chunks = ('[{"id": "1", "id": "2", "text": "t"}]', '[{"id": "1", "text": "t", "score": NaN}]',
              '[{"id": "1", "text": "t", "n": ' + "9" * 5000 + "}]")
    as_text = [ok(f"t{i}", retrieved_context=text) for i, text in enumerate(chunks)]
    source = tmp_path / "embedded.jsonl"
    lines = [json.dumps(r) for r in (*as_text, ok("fine", retrieved_context='[{"id": "1", "text": "t"}]'))]
    lines += [f'{{"response_id": "l{i}", "claims": [], "retrieved_context": {text}}}' for i, text in enumerate(chunks)]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli = register_cli()
    report = imported(cli, source)
    assert (report["records"], report["quarantined"]) == (7, 6)
    found = quarantine(cli.db)
    # embedded: the field, and where inside its text; the same JSON written as JSON: the same reason at that path
    for line, (inside, reason) in zip((1, 2, 3), (("[0].id", "duplicate key 'id'"), ("[0].score", "NaN"),
                                                  ("[0].n", "5,000 digits")), strict=True):
        ((field, message),) = found[f"line {line}"]
        assert field == "retrieved_context" and f"at {inside}: " in message and reason in message
        ((field, message),) = found[f"line {line + 4}"]
        assert field == f"retrieved_context{inside}" and reason in message


def test_an_interrupted_import_resumes_past_a_deeply_nested_context(register_cli, tmp_path, monkeypatch):
    source = write_jsonl(tmp_path / "resume.jsonl", ok("r1"), ok("r2", retrieved_context=DEEP), ok("r3"))
    cli = register_cli()
    real, calls = batches.write_chunk, {"n": 0}

    def stop_after_one(*args, **kwargs):  # as Ctrl-C or a kill after the first chunk was committed
        if calls["n"] == 1:
            raise KeyboardInterrupt
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(batches, "write_chunk", stop_after_one)
    stopped = cli("import", "--json", "--quiet", "--chunk-size", "1", source)
    assert stopped.returncode != 0 and "--resume" in stopped.stderr
    monkeypatch.setattr(batches, "write_chunk", real)
    report = imported(cli, "--resume", source)
    assert (report["records"], report["accepted"], report["quarantined"]) == (3, 2, 1)
    assert "resumed after 1 stored records" in " ".join(report["batches"][0]["notes"])
    assert list(quarantine(cli.db)) == ["line 2"]
