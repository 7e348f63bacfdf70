"""Kept views of older profile versions (``register.readmodels.version_views``, migration 026): the read model kept
as its version's view when a run over everything replaces it, read by the console like the current one, and kept
exact -- revisions leave it, a run under its version drops it. The store fixture's teardown compares every kept
view with the view computed from the score rows (``version_views.check``), so every test here is checked that
way too."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pandas as pd
import pytest

from register import SYSTEM
from register.console.queries.explorer import responses_page
from register.console.queries.filters import Filters, covers_every_current, filtered_scores, read_model
from register.console.queries.overview import kpis, overview
from register.db.sql import Params
from register.errors import RegisterError
from register.ingest.importer import import_path
from register.readmodels import current_scores, version_views
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.scorer import rescore
from register.scoring.spark_exchange import import_scores
from tests.helpers.console_records import AS_OF, dataset, load, write_jsonl
from tests.helpers.spark_output import job_output

WEIGHTS = ({"F": 0.1, "C": 0.1, "U": 0.5, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05},
           {"F": 0.5, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05},
           {"F": 0.2, "C": 0.2, "U": 0.2, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1})


@pytest.fixture
def loaded(store, tmp_path):
    """Version 1 active, the dataset imported and run over everything under it."""
    load(store, tmp_path, dataset())
    return store


def _publish(store, weights: dict, days: int = 0) -> int:
    """A new version, published and run over everything (as publishing does)."""
    version = create_draft(store, SYSTEM, {"weights": weights})
    activate(store, SYSTEM, version, "test: another version")
    rescore(store, SYSTEM, get_profile(store, version), as_of=AS_OF + timedelta(days=days))
    return version


def _tables(store) -> set[str]:
    return {name for (name,) in store.query("SELECT table_name FROM duckdb_tables() WHERE table_name LIKE 'version_%'")}


def _aged_out(figures: dict) -> dict:
    return {k: v for k, v in figures.items() if k != "queue_oldest_age_days"}


def _frames_equal(a: dict, b: dict) -> None:
    for name in ("band_mix_by_week", "score_histogram", "high_share_by_use_case", "high_share_by_model"):
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=False, rtol=1e-12, obj=name)
    pd.testing.assert_frame_equal(a["dimension_contributions"], b["dimension_contributions"], check_exact=False,
                                  rtol=1e-9)
    assert a["kpis"] == b["kpis"]


def test_publishing_a_version_keeps_the_previous_view_and_the_console_reads_it_like_the_current_one(loaded,
                                                                                                    monkeypatch):
    store = loaded
    before = kpis(store, Filters())  # version 1's view, while current
    page_before, _ = responses_page(store, Filters(), limit=500)
    _publish(store, WEIGHTS[0])
    assert version_views.kept(store) == [1] and _tables(store) == set(version_views.tables(1))
    run = store.one("SELECT after FROM audit_events WHERE action = 'scores.rescore' ORDER BY seq DESC LIMIT 1")
    assert json.loads(run["after"])["kept_view_of_version"] == 1  # the audit trail says which view was kept
    under = Filters(profile_version=1)
    assert read_model(store, under)[1].scores == "version_scores_1"
    sql = filtered_scores(store, under, Params())
    assert "version_scores_1" in sql and "FROM scores" not in sql
    # version 1's figures as they were when it was current (but the queue's age, which is measured from now)
    assert _aged_out(kpis(store, under)) == _aged_out(before)
    page, total = responses_page(store, under, limit=500)
    pd.testing.assert_frame_equal(page, page_before)
    assert kpis(store, Filters())["band_counts"] != before["band_counts"]  # the current view moved on
    # the overview under the kept view equals the overview from the join of version 1's score rows
    weights, now = get_profile(store, 1).weights, AS_OF + timedelta(days=30)
    for f in (under, replace(under, use_cases=("hr-policy",)), replace(under, bands=("High", "Critical"))):
        got = overview(store, f, weights, now=now)
        with monkeypatch.context() as joined:  # no kept view: the console joins version 1's score rows
            joined.setattr(version_views, "kept", lambda store: [])
            assert "FROM scores" in filtered_scores(store, f, Params())
            _frames_equal(got, overview(store, f, weights, now=now))
    assert overview(store, under, weights, now=now)["kpis"]["responses"] == total


def test_a_revision_leaves_every_kept_view_and_a_new_answer_joins_none(loaded, tmp_path):
    store = loaded
    records = dataset()
    _publish(store, WEIGHTS[0])
    _publish(store, WEIGHTS[1], days=1)
    assert version_views.kept(store) == [1, 2]
    assert covers_every_current(store, 1) and covers_every_current(store, 2)  # counted from the kept view
    counts = {v: kpis(store, Filters(profile_version=v))["responses"] for v in (1, 2)}
    revised = {**records[0], "answer": "A revised answer."}
    new = {**records[1], "response_id": "brand-new"}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "late.jsonl", [revised, new]))
    for v in (1, 2):
        assert kpis(store, Filters(profile_version=v))["responses"] == counts[v] - 1
        page, _ = responses_page(store, Filters(profile_version=v), limit=1000)
        assert records[0]["response_id"] not in set(page["response_id"]) and "brand-new" not in set(page["response_id"])
    assert not covers_every_current(store, 1) and not covers_every_current(store, 2)
    assert version_views.check(store) == []


def test_a_run_under_a_kept_version_drops_its_view_and_the_join_takes_over(loaded, tmp_path):
    store = loaded
    _publish(store, WEIGHTS[0])
    batch = store.scalar("SELECT min(batch_id) FROM responses WHERE is_current")
    late = [{**r, "response_id": f"late-{i}"} for i, r in enumerate(dataset()[:3])]
    import_path(store, SYSTEM, write_jsonl(tmp_path / "late.jsonl", late))  # scored under version 2
    assert version_views.kept(store) == [1]
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF + timedelta(days=2), batch_id=batch)
    assert version_views.kept(store) == [] and _tables(store) == set()
    assert "FROM scores" in filtered_scores(store, Filters(profile_version=1), Params())
    # the current scores are now mixed (version 1 for the batch, 2 for the rest): a run over everything keeps none
    third = create_draft(store, SYSTEM, {"weights": WEIGHTS[2]})
    rescore(store, SYSTEM, get_profile(store, third), as_of=AS_OF)
    assert version_views.kept(store) == []


def test_scores_imported_from_spark_under_a_kept_version_drop_its_view(loaded, tmp_path):
    store = loaded
    version = _publish(store, WEIGHTS[0])
    _publish(store, WEIGHTS[1], days=1)
    assert version_views.kept(store) == [1, version]
    job_output(store, get_profile(store, version), tmp_path / "spark")
    import_scores(store, SYSTEM, tmp_path / "spark")
    assert version_views.kept(store) == [1]


def test_at_most_keep_versions_are_kept_the_oldest_goes_first(loaded):
    store = loaded
    for i, weights in enumerate(WEIGHTS):
        _publish(store, weights, days=i)
    assert version_views.KEEP == 2 and version_views.kept(store) == [2, 3]
    assert _tables(store) == {*version_views.tables(2), *version_views.tables(3)}
    assert "FROM scores" in filtered_scores(store, Filters(profile_version=1), Params())


@pytest.mark.parametrize("limit", [3, 1])
def test_how_many_versions_are_kept_is_a_setting(loaded, monkeypatch, limit):
    """``HRI_KEEP_VERSION_VIEWS``: the newest ``limit`` older versions are kept, the older ones joined -- and the
    console's figures for each are the same either way."""
    store = loaded
    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", str(limit))
    versions = [1] + [_publish(store, weights, days=i) for i, weights in enumerate(WEIGHTS)]
    older = versions[:-1]  # every version but the active one
    assert version_views.kept(store) == older[-limit:]
    assert _tables(store) == {t for v in older[-limit:] for t in version_views.tables(v)}
    for version in older:
        kept = version in older[-limit:]
        assert ("FROM scores" in filtered_scores(store, Filters(profile_version=version), Params())) != kept
        with monkeypatch.context() as m:
            m.setattr(version_views, "kept", lambda cur: [])  # the same version joined from its score rows
            assert "FROM scores" in filtered_scores(store, Filters(profile_version=version), Params())
            joined = kpis(store, Filters(profile_version=version))
        assert _aged_out(kpis(store, Filters(profile_version=version))) == _aged_out(joined)


def test_with_none_kept_the_read_model_is_rebuilt_in_place_and_kept_views_go(loaded, monkeypatch):
    store = loaded
    _publish(store, WEIGHTS[0])
    assert version_views.kept(store) == [1]
    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", "0")
    _publish(store, WEIGHTS[1], days=1)
    assert version_views.kept(store) == [] and _tables(store) == set()
    run = store.one("SELECT after FROM audit_events WHERE action = 'scores.rescore' ORDER BY seq DESC LIMIT 1")
    assert "kept_view_of_version" not in json.loads(run["after"])
    assert "FROM scores" in filtered_scores(store, Filters(profile_version=2), Params())


def test_a_bad_keep_setting_is_refused_naming_the_variable(loaded, monkeypatch):
    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", "-1")
    with pytest.raises(RegisterError, match="HRI_KEEP_VERSION_VIEWS"):
        _publish(loaded, WEIGHTS[0])
    assert version_views.kept(loaded) == []  # the run failed whole: nothing kept, nothing written

def test_a_failed_run_keeps_nothing_and_leaves_the_read_model_as_it_was(loaded, monkeypatch):
    store = loaded
    before = kpis(store, Filters())
    version = create_draft(store, SYSTEM, {"weights": WEIGHTS[0]})

    def fail(cur):
        raise RegisterError("the rebuild failed")

    monkeypatch.setattr(current_scores, "rebuild", fail)
    with pytest.raises(RegisterError, match="rebuild failed"):
        rescore(store, SYSTEM, get_profile(store, version), as_of=AS_OF)
    assert version_views.kept(store) == [] and _tables(store) == set()
    assert _aged_out(kpis(store, Filters())) == _aged_out(before) and current_scores.check(store) == []


@pytest.mark.tampers
def test_the_check_finds_a_kept_view_that_differs_from_the_score_rows(loaded):
    store = loaded
    _publish(store, WEIGHTS[0])
    assert version_views.check(store) == []
    with store.cursor() as cur:
        cur.execute("UPDATE version_scores_1 SET score = score + 1 WHERE response_id = 'hc-crit'")
        cur.execute("DELETE FROM version_summary_1 WHERE band = 'Low'")
    problems = version_views.check(store)
    assert any("hc-crit" in p for p in problems) and any("summary" in p for p in problems), problems


def test_a_version_not_kept_is_kept_on_request_and_read_like_the_current_one(loaded, monkeypatch):
    """``keep_view`` builds a version's view from its score rows (in slices of response keys): the console then
    reads it from its own read model, with the same figures as the join; the oldest kept view beyond the limit
    goes; the build is one audited write; the teardown's check compares the view with the score rows."""
    from register.readmodels.version_views import keep_view

    store = loaded
    for i, weights in enumerate(WEIGHTS):
        _publish(store, weights, days=i)
    assert version_views.kept(store) == [2, 3]
    under = Filters(profile_version=1)
    weights, now = get_profile(store, 1).weights, AS_OF + timedelta(days=30)
    joined = overview(store, under, weights, now=now)
    page_joined, total = responses_page(store, under, limit=500)
    monkeypatch.setattr(current_scores, "REBUILD_SLICE", 7)  # several slices, as at ten million
    steps = []
    dropped = keep_view(store, SYSTEM, 1, progress=lambda done, count, message: steps.append((done, count)))
    assert dropped == [2] and version_views.kept(store) == [3, 1]
    assert len(steps) > 1 and steps[-1][0] == steps[-1][1]
    assert _tables(store) == {*version_views.tables(3), *version_views.tables(1)}
    assert version_views.check(store) == []
    assert read_model(store, under)[1].scores == "version_scores_1"
    _frames_equal(overview(store, under, weights, now=now), joined)
    page, kept_total = responses_page(store, under, limit=500)
    pd.testing.assert_frame_equal(page, page_joined, check_dtype=False)  # the join reads wider integers
    assert kept_total == total
    event = store.one("SELECT actor_name, entity_type, entity_id, after FROM audit_events WHERE action = "
                      "'profile.keep_view'")
    assert (event["entity_type"], event["entity_id"]) == ("profile_version", "1")
    assert json.loads(event["after"])["dropped_views"] == [2]


def test_keeping_a_view_is_refused_where_there_is_nothing_to_keep_and_for_a_viewer(loaded, monkeypatch):
    from register import Actor
    from register.errors import NotFound, NothingToKeep, PermissionDenied
    from register.readmodels.version_views import keep_view
    from tests.helpers.actors import enrol

    store = loaded
    with pytest.raises(NothingToKeep, match="from the current scores"):
        keep_view(store, SYSTEM, 1)  # every current score is under version 1
    with pytest.raises(NotFound, match="version 9 does not exist"):
        keep_view(store, SYSTEM, 9)
    draft = create_draft(store, SYSTEM, {"weights": WEIGHTS[0]})
    with pytest.raises(NotFound, match="no score of a current response"):
        keep_view(store, SYSTEM, draft)
    assert _tables(store) == set() and version_views.kept(store) == []  # nothing of a refused build is left
    _publish(store, WEIGHTS[1])
    with pytest.raises(NothingToKeep, match="kept already"):
        keep_view(store, SYSTEM, 1)
    viewer = Actor("vera", "viewer")
    enrol(store, viewer)
    with pytest.raises(PermissionDenied):
        keep_view(store, viewer, 2)
    monkeypatch.setenv("HRI_KEEP_VERSION_VIEWS", "0")
    with pytest.raises(NothingToKeep, match="HRI_KEEP_VERSION_VIEWS is 0"):
        keep_view(store, SYSTEM, 2)
