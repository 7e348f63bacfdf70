"""``python -m hri_core score`` on hostile input: a message naming the line and field, never a traceback, and
every readable record is still scored.

The hostile corpus of ``tests/data/hostile`` is run through it as well (``tests/register/ingest/
test_hostile_corpus.py``); these are the cases that crashed it.
"""

from __future__ import annotations

import json

import pytest

GOOD = '{"response_id": "ok", "claims": [{"labels": ["SUPPORTED"]}]}\n'


def scored_ids(stdout: str) -> list[str]:
    return [json.loads(line)["response_id"] for line in stdout.splitlines() if line.strip()]


@pytest.mark.parametrize(("name", "content", "field"), [
    ("deep.jsonl", '{"response_id": "n", "claims": [], "x": ' + "[" * 50_000 + "]" * 50_000 + "}\n", "x"),
    ("dates.jsonl", '{"response_id": "d", "created_at": "0001-01-01T00:00:00+01:00", "claims": []}\n', "created_at"),
    ("digits.jsonl", '{"response_id": "d", "claims": [{"labels": ["SUPPORTED"], "criticality": ' + "9" * 5000 + "}]}\n",
     "claims[0].criticality"),
    ("surrogate.jsonl", '{"response_id": "s", "answer": "\\udc00", "claims": []}\n', "answer"),
])
def test_a_record_that_crashed_the_scorer_is_reported_and_the_rest_scored(hri_core_cli, tmp_path, name, content,
                                                                          field):
    path = tmp_path / name
    path.write_text(GOOD + content + GOOD.replace('"ok"', '"ok2"'), encoding="utf-8")
    result = hri_core_cli("score", str(path))
    assert result.returncode == 2
    assert scored_ids(result.stdout) == ["ok", "ok2"]
    assert f"{path}:line 2" in result.stderr and f": {field}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_a_line_that_is_not_utf8_is_reported_alone(hri_core_cli, tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(GOOD.encode() + b'{"response_id": "l", "answer": "caf\xe9", "claims": []}\n'
                     + GOOD.replace('"ok"', '"ok2"').encode())
    result = hri_core_cli("score", str(path))
    assert (result.returncode, scored_ids(result.stdout)) == (2, ["ok", "ok2"])
    assert "line 2: (record): the line is not valid UTF-8 text" in result.stderr


@pytest.mark.parametrize(("name", "content"), [
    ("utf16.jsonl", GOOD.encode("utf-16")),
    ("utf16.csv", "response_id,labels\nr,SUPPORTED\n".encode("utf-16")),
    ("quote.csv", b'response_id,labels\nr,SUPPORTED\ns,"SUPPORTED\n'),
    ("nul.csv", b"response_id,labels\nr,SUPPORTED\ns,SUPP\x00ORTED\n"),
    ("ragged.csv", b"response_id,labels\nr,SUPPORTED,extra,more\n\n,\n"),
    ("binary.csv", bytes(range(256)) * 4),
])
def test_unreadable_or_odd_files_end_with_a_message_not_a_traceback(hri_core_cli, tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content)
    result = hri_core_cli("score", str(path))
    assert result.returncode in (1, 2)
    assert result.stderr.strip() and "Traceback" not in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (("--as-of", "yesterday"), "--as-of"),
    (("--profile", "deep.json"), "deep.json"),
    (("--profile", "missing.json"), "missing.json"),
])
def test_bad_options_are_usage_errors(hri_core_cli, tmp_path, args, message):
    (tmp_path / "deep.json").write_text('{"weights": ' + "[" * 50_000 + "]" * 50_000 + "}")
    args = tuple(str(tmp_path / a) if a.endswith(".json") else a for a in args)
    source = tmp_path / "ok.jsonl"
    source.write_text(GOOD)
    result = hri_core_cli("score", str(source), *args)
    assert result.returncode == 64
    assert message in result.stderr and result.stdout == ""


def test_a_folder_or_a_missing_file_is_named(hri_core_cli, tmp_path):
    for target in (tmp_path, tmp_path / "absent.jsonl"):
        result = hri_core_cli("score", str(target))
        assert result.returncode == 1 and str(target) in result.stderr and "Traceback" not in result.stderr
