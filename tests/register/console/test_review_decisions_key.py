"""Every review decision names its response revision by its integer key (migration 021): the writer fills it, the
migration gives an older database's decisions theirs, and the queue -- which leaves out the decided revisions by
that key -- is the same before and after the upgrade."""

from __future__ import annotations

from datetime import UTC, datetime

from register import SYSTEM, Actor, Store
from register.console.queries.filters import Filters
from register.console.review import queue_stats, record_decision, review_queue
from register.ingest.importer import import_path
from register.scoring.profiles import ensure_default_profile
from tests.helpers.actors import enrol
from tests.helpers.console_records import dataset, write_jsonl
from tests.helpers.migrations import migrations_before

REVIEWER = Actor("Rita Reviewer", "reviewer")
NOW = datetime(2027, 2, 1, 12, 0, tzinfo=UTC)
_KEYS_AGREE = ("SELECT count(*) FROM review_decisions d LEFT JOIN responses r ON r.response_id = d.response_id "
               "AND r.revision = d.revision WHERE d.response_key IS DISTINCT FROM r.response_key")


def _queued_ids(store: Store) -> list[str]:
    frame, size = review_queue(store, Filters(), limit=1_000, now=NOW)
    assert size == len(frame)
    return list(frame.response_id)


def test_a_decision_stores_its_revisions_key_and_leaves_the_queue(store, tmp_path):
    enrol(store, REVIEWER)
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", dataset()))
    queued = _queued_ids(store)
    assert len(queued) >= 2
    record_decision(store, REVIEWER, queued[0], 1, "block", "wrong figure")
    assert store.scalar("SELECT count(*) FROM review_decisions WHERE response_key IS NOT NULL") == 1
    assert store.scalar(_KEYS_AGREE) == 0
    assert _queued_ids(store) == queued[1:]


def test_migration_021_gives_an_older_databases_decisions_their_keys(tmp_path, monkeypatch):
    # 022, 023: today's importer keeps the summary and the search index (033: its scores carry the decision)
    migrations_before(tmp_path, monkeypatch, 21, also=(22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33))
    db = tmp_path / "older.duckdb"
    before = Store(db)
    ensure_default_profile(before, SYSTEM)
    records = dataset()
    import_path(before, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))
    # a second revision of one response: its decision names revision 2, a decision on another names revision 1
    revised = records[0]["response_id"]
    import_path(before, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[0], "answer": "Revised."}]))
    queued = before.query("SELECT response_id, revision FROM current_scores WHERE action IN ('review', 'block') "
                          "OR no_claims ORDER BY response_id")
    decided = [(revised, 2), *[row for row in queued if row[0] != revised][:2]]
    with before.cursor() as cur:  # as the writer before 021 stored them
        for n, (response_id, revision) in enumerate(decided, start=1):
            cur.execute("INSERT INTO review_decisions (decision_id, response_id, revision, decision, reason, "
                        "decided_by, decided_role, decided_at) VALUES (?, ?, ?, 'block', 'checked', 'rita', "
                        "'reviewer', ?)", [n, response_id, revision, NOW])
    rows_before = before.query("SELECT * FROM review_decisions ORDER BY decision_id")
    before.close()
    monkeypatch.undo()
    after = Store(db)
    try:
        assert "021_review_decisions_response_key.sql" in after.applied_migrations
        assert after.scalar("SELECT count(*) FROM review_decisions WHERE response_key IS NULL") == 0
        assert after.scalar(_KEYS_AGREE) == 0
        assert after.query("SELECT * EXCLUDE (response_key) FROM review_decisions ORDER BY decision_id") == rows_before
        queue = _queued_ids(after)
        assert not {response_id for response_id, _ in decided} & set(queue)  # the decided ones left the queue
        undecided = {r for (r, _) in queued} - {response_id for response_id, _ in decided}
        assert set(queue) >= undecided
        assert queue_stats(after, now=NOW)["size"] == len(queue)
    finally:
        after.close()
