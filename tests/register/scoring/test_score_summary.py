"""The read model's summary (``score_summary``, migration 022): the current scores counted by use case, model,
creation day and week, band and claims-or-not, kept in step by every write that changes the read model, and read
by the overview for what adds up.

Every test's store is checked against a recount at teardown (``current_scores.check``); these tests move responses
between groups on purpose and check after each step."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pandas as pd
import pytest

from register import SYSTEM, Store
from register.console.queries.filters import Filters
from register.console.queries.overview import band_mix_by_week, dimension_contributions, high_share_by, kpis, overview
from register.ingest.importer import import_path
from register.readmodels import current_scores
from register.scoring.profiles import active_profile
from register.scoring.scorer import rescore
from tests.helpers.console_records import dataset, write_jsonl

AS_OF = datetime(2026, 11, 1, tzinfo=UTC)
NOW = datetime(2027, 3, 1, tzinfo=UTC)


def _totals(store: Store) -> tuple:
    return store.query_one("SELECT sum(responses), sum(claims), sum(floors_fired) FROM score_summary")


def _read_model_totals(store: Store) -> tuple:
    return store.query_one("SELECT count(*), sum(claim_count), count(decisive_claim_id) FROM current_scores")


def test_the_summary_follows_imports_revisions_and_rescores(store, tmp_path):
    records = dataset()
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))
    assert current_scores.check(store) == [] and _totals(store) == _read_model_totals(store)
    # revisions that move responses to other groups: another use case, another day, no creation time, no claims
    moved = [{**records[0], "use_case": "moved-elsewhere"}, {**records[1], "created_at": "2026-01-02T23:59:59Z"},
             {k: v for k, v in records[2].items() if k != "created_at"}, {**records[3], "claims": []}]
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", moved))
    assert current_scores.check(store) == []
    assert store.scalar("SELECT sum(responses) FROM score_summary WHERE use_case = 'moved-elsewhere'") == 1
    assert store.scalar("SELECT sum(responses) FROM score_summary WHERE day = DATE '2026-01-02'") >= 1
    rescore(store, SYSTEM, active_profile(store), as_of=AS_OF)  # everything: the summary counted again
    assert current_scores.check(store) == [] and _totals(store) == _read_model_totals(store)


def test_a_refresh_that_leaves_the_summary_behind_is_caught(store, tmp_path, monkeypatch):
    """The teardown check would catch a writer that skips the summary: shown here with a refresh that does."""
    records = dataset()
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))

    def without_summary(cur, gone, added, params=None, **_):  # the read model's rows alone, as before 022
        cur.execute(f"DELETE FROM current_scores WHERE response_key IN ({gone})", params or {})
        if added is not None:
            cur.execute(f"INSERT INTO current_scores {current_scores._JOIN} AND r.response_key IN ({added})",
                        params or {})

    monkeypatch.setattr(current_scores, "refresh", without_summary)
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[0], "use_case": "moved-elsewhere"}]))
    assert any("score summary" in line for line in current_scores.check(store))
    with store.cursor() as cur:  # put right for the teardown check
        current_scores.rebuild_summary(cur)
    assert current_scores.check(store) == []


@pytest.mark.parametrize("f", [Filters(), Filters(date_from=date(2026, 6, 1), date_to=date(2026, 6, 30)),
                               Filters(bands=("No claims", "Low")), Filters(use_cases=("hr-policy",), models=("x",))])
def test_the_overview_from_the_summary_equals_the_scans(store, tmp_path, f):
    records = dataset()
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", records))
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [{**records[3], "claims": []}]))
    profile = active_profile(store)
    bands = tuple(b.name for b in profile.bands)
    got = overview(store, f, profile.weights, bands, now=NOW)
    assert got["kpis"] == kpis(store, f, now=NOW)
    for name, alone in {"band_mix_by_week": band_mix_by_week(store, f),
                        "dimension_contributions": dimension_contributions(store, f, profile.weights),
                        "high_share_by_use_case": high_share_by(store, f, "use_case", bands),
                        "high_share_by_model": high_share_by(store, f, "model", bands)}.items():
        pd.testing.assert_frame_equal(got[name], alone, check_dtype=False, check_index_type=False, rtol=1e-12,
                                      obj=name)


def test_migration_022_counts_an_older_databases_read_model(tmp_path):
    db = tmp_path / "older.duckdb"
    store = Store(db)
    from register.scoring.profiles import ensure_default_profile

    ensure_default_profile(store, SYSTEM)
    import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", dataset()))
    want = store.query("SELECT * FROM score_summary ORDER BY ALL")
    with store.cursor() as cur:  # the database as it was before 022
        cur.execute("DROP TABLE score_summary")
        cur.execute("DELETE FROM schema_migrations WHERE name = '022_score_summary.sql'")
    store.close()
    after = Store(db)
    try:
        assert "022_score_summary.sql" in after.applied_migrations
        assert current_scores.check(after) == []
        got = after.query("SELECT * FROM score_summary ORDER BY ALL")
        assert [row[:9] for row in got] == [row[:9] for row in want]  # groups and counts; the sums to their bits
        assert got and all(g == pytest.approx(w, rel=1e-12) for gr, wr in zip(got, want, strict=True)
                           for g, w in zip(gr[9:], wr[9:], strict=True))
    finally:
        after.close()
