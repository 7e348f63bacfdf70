"""``python -m register import --defer-index`` stores and scores and leaves the search index behind, its JSON report
the same as the default's but for ``"search_index": "deferred"``; ``python -m register search-index`` then catches the
index up, printing its progress; the default import still indexes before its report (scripts rely on it)."""

from __future__ import annotations

import json

import pytest

from register import Store
from tests.helpers.cli import run_module
from tests.helpers.feedback import two_claims

REPORT_KEYS = {"batch_ids", "records", "accepted", "new_responses", "new_revisions", "unchanged", "quarantined",
               "resolved", "balanced", "batches", "quarantined_records", "notes", "search_index"}


@pytest.fixture
def run(register_cli):
    return register_cli("Casey CLI")


def _answers(tmp_path, name: str, n: int, prefix: str):
    path = tmp_path / name
    path.write_text("".join(json.dumps({**two_claims(f"{prefix}{i}"), "answer": f"Tacit renewal {prefix}{i}."}) + "\n"
                            for i in range(n)), encoding="utf-8")
    return path


def _pending(db) -> tuple[int, int]:
    store = Store(db)
    try:
        return store.query_one("SELECT (SELECT count(*) FROM responses WHERE response_key > indexed_through), "
                               "indexed_through FROM search_index")
    finally:
        store.close()


def test_defer_index_reports_the_same_json_and_leaves_the_index_to_search_index(run, tmp_path):
    assert run("init").returncode == 0
    default = run("import", "--json", "--quiet", _answers(tmp_path, "first.jsonl", 4, "a"))
    assert default.returncode == 0, default.stderr
    indexed = json.loads(default.stdout)
    assert set(indexed) == REPORT_KEYS and indexed["search_index"] == "indexed"
    assert _pending(run.db) == (0, 4)

    deferred = run("import", "--defer-index", "--json", "--quiet", _answers(tmp_path, "second.jsonl", 6, "b"))
    assert deferred.returncode == 0, deferred.stderr
    report = json.loads(deferred.stdout)
    assert set(report) == REPORT_KEYS and report["search_index"] == "deferred"
    assert (report["accepted"], report["batches"][0]["scored"]) == (6, 6)  # stored and scored
    assert _pending(run.db) == (6, 4)

    caught_up = run("search-index")
    assert caught_up.returncode == 0, caught_up.stderr
    assert "search index: 6 revision(s) to index above key 4" in caught_up.stderr  # its progress, on stderr
    assert "6 of 6 revisions indexed" in caught_up.stderr
    assert "search index: 6 revision(s) indexed now (6 were pending)" in caught_up.stdout
    assert _pending(run.db) == (0, 10)
    assert run("search-index", "--check", "--quiet").returncode == 0


def test_the_text_report_says_the_index_was_left_for_later(run, tmp_path):
    assert run("init").returncode == 0
    deferred = run("import", "--defer-index", "--quiet", _answers(tmp_path, "answers.jsonl", 3, "a"))
    assert deferred.returncode == 0, deferred.stderr
    assert "search index: left to catch up later (`python -m register search-index`" in deferred.stdout
    default = run("import", "--quiet", _answers(tmp_path, "more.jsonl", 3, "b"))
    assert "search index:" not in default.stdout and _pending(run.db) == (0, 6)


def test_from_outside_import_defer_index_then_search_index(tmp_path):
    """The check of the issue, as separate processes: the import's report first, then the catch-up."""
    path = _answers(tmp_path, "answers.jsonl", 5, "a")
    imported = run_module("register", "import", "--defer-index", "--json", path)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["search_index"] == "deferred"
    indexed = run_module("register", "search-index")
    assert indexed.returncode == 0, indexed.stderr
    assert "5 of 5 revisions indexed" in indexed.stderr and "5 revision(s) indexed now" in indexed.stdout
