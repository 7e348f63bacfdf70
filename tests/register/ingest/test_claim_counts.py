"""``claim_source_counts`` (migrations 024, 025, 031) holds the current sourced claims counted by label mask, source,
category, use case and model through every write that changes which claims are current: an import of new
responses, a revision (the old revision's claims leave, the new one's come), an unchanged re-import, synthetic
copies; a database from before it is counted by the migration; ``check`` names a group that differs.
``claim_source_answers`` (migration 032) holds the same claims' answers through the same writes."""

from __future__ import annotations

import json

from register import SYSTEM, Store
from register.ingest.importer import import_path
from register.ingest.replicate import replicate
from register.readmodels import claim_counts
from register.scoring.profiles import ensure_default_profile
from tests.helpers.migrations import migrations_before


def _records(prefix: str, source: str, labels: list[str], n: int = 3) -> list[dict]:
    return [{"response_id": f"{prefix}-{i}", "claims": [
        {"claim_id": "a", "labels": labels, "source_id": source, "category": "legal"},
        {"claim_id": "b", "labels": ["SUPPORTED"], "source_id": "src-2"},
        {"claim_id": "c", "labels": ["UNSUPPORTED"]}]} for i in range(n)]


def _import(store: Store, tmp_path, name: str, records: list[dict]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    import_path(store, SYSTEM, path)


def _counts(store: Store, *, scoped: bool = False) -> dict[tuple, int]:
    """The table as {(mask, source, category): claims}, or with ``scoped`` {(..., use case, model): claims}."""
    rows = store.query("SELECT label_mask, source_id, category, use_case, model, claims FROM claim_source_counts")
    if scoped:
        return {tuple(row[:5]): row[5] for row in rows}
    assert all(row[3] is None and row[4] is None for row in rows), "these records name no use case or model"
    return {tuple(row[:3]): row[5] for row in rows}


def test_imports_revisions_and_copies_keep_the_counts(store, tmp_path):
    _import(store, tmp_path, "first", _records("r", "src-1", ["SUPPORTED"]))
    assert _counts(store) == {(1, "src-1", "legal"): 3, (1, "src-2", None): 3}
    # two responses revised: their first claim now cites src-9 as CONTRADICTED; one sent again unchanged
    revised = _records("r", "src-9", ["CONTRADICTED", "OUTDATED"], n=2) + _records("r", "src-1", ["SUPPORTED"])[2:]
    _import(store, tmp_path, "second", revised)
    assert _counts(store) == {(1, "src-1", "legal"): 1, (8 | 16, "src-9", "legal"): 2, (1, "src-2", None): 3}
    assert claim_counts.check(store) == []
    batch = store.scalar("SELECT batch_id FROM import_batches WHERE source_name = 'first.jsonl'")
    replicate(store, SYSTEM, batch, 5)  # copies of the batch's current responses
    assert claim_counts.check(store) == []
    assert sum(_counts(store).values()) == store.scalar(
        "SELECT count(*) FROM claims WHERE is_current AND source_id IS NOT NULL")
    assert sum(_counts(store).values()) == 6 + 10  # five copies of two sourced claims each


def _answers(store: Store) -> set[tuple]:
    return set(store.query("SELECT a.source_id, a.label_mask, a.category, r.response_id, r.revision "
                           "FROM claim_source_answers a JOIN responses r USING (response_key)"))


def test_imports_revisions_and_copies_keep_the_sources_answers(store, tmp_path):
    _import(store, tmp_path, "first", _records("r", "src-1", ["SUPPORTED"], n=2))
    assert _answers(store) == {("src-1", 1, "legal", "r-0", 1), ("src-2", 1, None, "r-0", 1),
                               ("src-1", 1, "legal", "r-1", 1), ("src-2", 1, None, "r-1", 1)}
    # r-0 revised (its first claim now cites src-9), r-1 sent again unchanged: r-0's first revision leaves
    _import(store, tmp_path, "second", _records("r", "src-9", ["CONTRADICTED"], n=1) + _records("r", "src-1",
                                                                                           ["SUPPORTED"], n=2)[1:])
    assert _answers(store) == {("src-9", 8, "legal", "r-0", 2), ("src-2", 1, None, "r-0", 2),
                               ("src-1", 1, "legal", "r-1", 1), ("src-2", 1, None, "r-1", 1)}
    batch = store.scalar("SELECT batch_id FROM import_batches WHERE source_name = 'first.jsonl'")
    replicate(store, SYSTEM, batch, 2)
    assert len(_answers(store)) == 4 + 2 * 2 and claim_counts.check(store) == []


def test_check_names_an_answer_row_that_differs_and_rebuild_lists_them_again(store, tmp_path):
    _import(store, tmp_path, "first", _records("r", "src-1", ["SUPPORTED"], n=2))
    with store.cursor() as cur:
        cur.execute("DELETE FROM claim_source_answers WHERE source_id = 'src-2' AND label_mask = 1 AND response_key = "
                    "(SELECT min(response_key) FROM responses)")
        cur.execute("INSERT INTO claim_source_answers VALUES ('src-7', 1, NULL, NULL, NULL, 999)")
    problems = claim_counts.check(store)
    assert any("response key 999, source 'src-7'" in p and "held, not in a recount" in p for p in problems)
    assert any("source 'src-2'" in p and "in a recount, not held" in p for p in problems)
    with store.cursor() as cur:
        claim_counts.rebuild(cur)
    assert claim_counts.check(store) == []


def test_check_names_a_group_that_differs_and_rebuild_counts_again(store, tmp_path):
    _import(store, tmp_path, "first", _records("r", "src-1", ["SUPPORTED"]))
    with store.cursor() as cur:
        cur.execute("UPDATE claim_source_counts SET claims = claims + 1 WHERE source_id = 'src-1'")
        cur.execute("DELETE FROM claim_source_counts WHERE source_id = 'src-2'")
    problems = claim_counts.check(store)
    assert len(problems) == 2 and any("'src-1'" in p and "counted 4, recounted 3" in p for p in problems)
    assert any("'src-2'" in p and "counted None" in p for p in problems)
    with store.cursor() as cur:
        claim_counts.rebuild(cur)
    assert claim_counts.check(store) == []


def test_a_database_from_before_the_counts_is_counted_by_the_migration(tmp_path, monkeypatch):
    migrations_before(tmp_path, monkeypatch, 24, also=(26, 27, 28, 29, 30))
    monkeypatch.setattr(claim_counts, "move", lambda *args, **kwargs: None)  # the importer before the counts
    older = Store(tmp_path / "older.duckdb")
    ensure_default_profile(older, SYSTEM)
    _import(older, tmp_path, "old", _records("o", "src-1", ["PARTIAL", "OUTDATED"]))
    assert older.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'claim_source_counts'") == 0
    older.close()
    monkeypatch.undo()
    upgraded = Store(tmp_path / "older.duckdb")
    assert _counts(upgraded) == {(2 | 16, "src-1", "legal"): 3, (1, "src-2", None): 3}
    assert claim_counts.check(upgraded) == []
    upgraded.close()


def test_a_revision_that_moves_an_answer_to_another_use_case_moves_its_counts(store, tmp_path):
    """The use case and model are the answer's, not the claim's: a revision that changes only them (the claims the
    same) takes the old revision's claims out of the old scope and counts the new one's in the new scope."""
    first = [{**r, "use_case": "helpdesk", "model": "m1"} for r in _records("r", "src-1", ["SUPPORTED"])]
    _import(store, tmp_path, "first", first)
    assert _counts(store, scoped=True) == {(1, "src-1", "legal", "helpdesk", "m1"): 3,
                                           (1, "src-2", None, "helpdesk", "m1"): 3}
    moved = [{**first[0], "use_case": "hr"}, {**first[1], "model": "m2"}]
    _import(store, tmp_path, "second", moved)
    assert _counts(store, scoped=True) == {
        (1, "src-1", "legal", "helpdesk", "m1"): 1, (1, "src-2", None, "helpdesk", "m1"): 1,
        (1, "src-1", "legal", "hr", "m1"): 1, (1, "src-2", None, "hr", "m1"): 1,
        (1, "src-1", "legal", "helpdesk", "m2"): 1, (1, "src-2", None, "helpdesk", "m2"): 1}
    assert claim_counts.check(store) == []
    with store.cursor() as cur:
        cur.execute("UPDATE claim_source_counts SET use_case = 'elsewhere' WHERE use_case = 'hr'")
    assert any("use case 'hr'" in p and "counted None, recounted 1" in p for p in claim_counts.check(store))
    with store.cursor() as cur:
        claim_counts.rebuild(cur)
    assert claim_counts.check(store) == []


def test_the_claims_are_counted_by_their_answers_creation_day_in_utc(store, tmp_path):
    """The day is the UTC day of the answer's creation time (not the day written in its offset), NULL without one;
    ``check`` names a day that differs."""
    times = ["2026-03-31T21:30:00-03:00", "2026-04-01T01:30:00+02:00", None]
    records = [{**r, **({"created_at": when} if when else {})}
               for r, when in zip(_records("r", "src-1", ["SUPPORTED"]), times, strict=True)]
    _import(store, tmp_path, "first", records)
    days = {(row[0], str(row[1]) if row[1] else None): row[2] for row in store.query(
        "SELECT source_id, created_day, claims FROM claim_source_counts WHERE source_id = 'src-1'")}
    assert days == {("src-1", "2026-04-01"): 1, ("src-1", "2026-03-31"): 1, ("src-1", None): 1}
    with store.cursor() as cur:
        cur.execute("UPDATE claim_source_counts SET created_day = DATE '2026-03-30' WHERE created_day IS NULL")
    problems = claim_counts.check(store)
    assert any("created at no recorded time" in p and "counted None, recounted 1" in p for p in problems)
    assert any("created 2026-03-30" in p and "recounted None" in p for p in problems)
    with store.cursor() as cur:
        claim_counts.rebuild(cur)
    assert claim_counts.check(store) == []
