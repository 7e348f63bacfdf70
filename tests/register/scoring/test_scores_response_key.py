"""Every score row and fired floor names its response revision by its integer key (migrations 019, 020): the
scorer and the Spark import write it, and the migrations give the rows of an older database theirs."""

from __future__ import annotations

from datetime import UTC, datetime

from register import SYSTEM, Store
from register.db.sql import Params
from register.ingest.importer import import_path
from register.readmodels import current_scores
from register.scoring.profiles import active_profile, ensure_default_profile
from register.scoring.scorer import fired_floors_select, rescore, score_select
from tests.helpers.console_records import dataset, write_jsonl
from tests.helpers.migrations import migrations_before

AS_OF = datetime(2026, 11, 1, tzinfo=UTC)
_KEYS_AGREE = ("SELECT count(*) FROM {table} s LEFT JOIN responses r ON r.response_id = s.response_id "
               "AND r.revision = s.revision WHERE s.response_key IS DISTINCT FROM r.response_key")


def test_the_scorer_stores_each_rows_revision_key(store, tmp_path):
    records = dataset()[:30]
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[0], "answer": "Revised."}]))
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
    assert store.scalar("SELECT count(DISTINCT revision) FROM scores WHERE response_id = ?",
                        [records[0]["response_id"]]) == 2
    assert store.scalar("SELECT count(*) FROM scores") > 30 and store.scalar("SELECT count(*) FROM score_floors") > 0
    for table in ("scores", "score_floors"):
        assert store.scalar(_KEYS_AGREE.format(table=table)) == 0


def test_migrations_019_and_020_give_an_older_databases_scores_and_floors_their_keys(tmp_path, monkeypatch):
    # before 019 and 020; and 022, 023: today's writers keep the summary of the read model and the search index
    migrations_before(tmp_path, monkeypatch, 19, also=(22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33))
    db = tmp_path / "older.duckdb"
    before = Store(db)
    ensure_default_profile(before, SYSTEM)
    # today's importer keeps the read model in step; before 019 its join was on (response_id, revision)
    monkeypatch.setattr(current_scores, "_JOIN", current_scores._JOIN.replace(
        "s.response_key = r.response_key", "s.response_id = r.response_id AND s.revision = r.revision"))
    records = dataset()[:25]
    revised = records[3]["response_id"]
    import_path(before, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records), score=False)
    # scores as the scorer before 019 wrote them (no key column): run 1 scores every response, a second
    # revision of one response comes in, run 2 scores it
    p = Params()
    select = score_select(active_profile(before), AS_OF, p)
    columns = ("s_f, s_c, s_u, s_o, s_s, s_p, s_h, hri_add, hri, score, band, action, no_claims, "
               "total_criticality, floors_fired")
    insert = (f"INSERT INTO scores (run_id, response_id, revision, profile_version, as_of, is_current, {columns}) "
              f"SELECT $run, response_id, revision, 1, {p(AS_OF)}, true, {columns} FROM ({select}) "
              f"WHERE $run = 1 OR response_id = {p(revised)}")
    for run in (1, 2):
        if run == 2:
            import_path(before, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[3], "answer": "Revised."}]),
                        score=False)
        with before.cursor() as cur:
            cur.execute("INSERT INTO score_runs (run_id, profile_version, as_of, started_at, actor_name, scope) "
                        "VALUES ($run, 1, $at, $at, 'system', 'all')", {"run": run, "at": AS_OF})
            cur.execute("UPDATE scores SET is_current = false WHERE response_id = $id", {"id": revised})
            cur.execute(insert, {**p.values, "run": run})
            floors = Params()
            cur.execute(f"INSERT INTO score_floors SELECT {floors(run)}, * FROM "
                        f"({fired_floors_select(active_profile(before), AS_OF, floors)})", floors.values)
            cur.execute("DELETE FROM current_scores")  # the read model made again as migration 017 made it
            cur.execute(f"INSERT INTO current_scores {current_scores._JOIN}")
            current_scores.rebuild_summary(cur)  # and its summary (022) counted again
    rows_before = before.query("SELECT * FROM scores ORDER BY response_id, revision")
    floors_before = before.query("SELECT * FROM score_floors ORDER BY ALL")
    assert floors_before
    assert len(rows_before) == 26
    before.close()
    monkeypatch.undo()
    after = Store(db)
    try:
        assert {"019_scores_response_key.sql", "020_score_floors_response_key.sql"} <= set(after.applied_migrations)
        for table in ("scores", "score_floors"):
            assert after.scalar(f"SELECT count(*) FROM {table} WHERE response_key IS NULL") == 0
            assert after.scalar(_KEYS_AGREE.format(table=table)) == 0
        assert after.query("SELECT * EXCLUDE (response_key) FROM scores ORDER BY response_id, revision") == rows_before
        assert after.query("SELECT * EXCLUDE (response_key) FROM score_floors ORDER BY ALL") == floors_before
        assert current_scores.check(after) == []  # the read model's join, now on the key, holds the same rows
        assert after.scalar("SELECT count(*) FROM current_scores") == 25
    finally:
        after.close()


def test_the_read_models_rebuild_in_slices_of_keys_keeps_every_current_response(store, tmp_path, monkeypatch):
    records = dataset()[:40]
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[-1], "answer": "Revised."}]))
    for size in (1, 7, 41, 10_000):  # one key per slice, a last slice of one key, two slices, one slice
        monkeypatch.setattr(current_scores, "REBUILD_SLICE", size)
        rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)
        assert current_scores.check(store) == []
        assert store.scalar("SELECT count(*) FROM current_scores") == 40
