"""The demo scores two use cases by their own published profiles (``register.demo.lenses``): claims-handling by a
stricter one, hr-policy by one that weighs outdated claims more; every other use case by the default. Each stored
score says its profile version and recomputes exactly."""

from __future__ import annotations

from pathlib import Path

from register import SYSTEM, Store
from register.demo import seed_demo
from register.demo.lenses import BOUND_PROFILES
from register.scoring.lenses import bound_use_cases
from register.scoring.profiles import active_profile, get_profile
from register.scoring.reproduce import reproduce

SCORES = ("SELECT r.response_id, r.use_case, s.profile_version, s.hri, s.band FROM responses r "
          "JOIN scores s ON s.response_key = r.response_key AND s.is_current WHERE r.is_current ORDER BY 1")


def _demo(path: Path, **options) -> Store:
    store = Store(path)
    seed_demo(store, SYSTEM, synthetic=40, **options)
    return store


def test_two_use_cases_are_scored_by_their_bound_profiles(tmp_path):
    store = _demo(tmp_path / "demo.duckdb")
    try:
        profiles = dict(store.query("SELECT name, profile_version FROM scoring_profiles WHERE status = 'bound'"))
        assert set(profiles) == {name for name, _ in BOUND_PROFILES.values()}
        bound = bound_use_cases(store)
        assert bound == {use_case: profiles[name] for use_case, (name, _) in BOUND_PROFILES.items()}
        rows = store.query(SCORES)
        assert {uc for _, uc, _, _, _ in rows} >= set(bound)  # the demo has answers in both
        for response_id, use_case, version, _, _ in rows:
            assert version == bound.get(use_case, 1), response_id
        # only the weights differ: the overview colours its histogram by the active profile's band bounds
        assert all(get_profile(store, v).bands == active_profile(store).bands for v in bound.values())
        claims = next(r for r in rows if r[1] == "claims-handling")
        assert reproduce(store, claims[0]).matches  # scored by the bound profile, recomputed by it
        events = store.scalar("SELECT count(*) FROM audit_events")
        seed_demo(store, SYSTEM, synthetic=40)  # seeding again writes nothing: no second binding
        assert store.scalar("SELECT count(*) FROM audit_events") == events
    finally:
        store.close()


def test_the_binding_changes_the_bound_use_cases_scores_and_no_other(tmp_path):
    with_lenses, plain = _demo(tmp_path / "a.duckdb"), _demo(tmp_path / "b.duckdb", bound_profiles=False)
    try:
        bound = {row[0]: row[1:] for row in with_lenses.query(SCORES)}
        default = {row[0]: row[1:] for row in plain.query(SCORES)}
        assert bound.keys() == default.keys()
        changed = {rid for rid in bound if bound[rid][2:] != default[rid][2:]}
        assert changed and {bound[rid][0] for rid in changed} <= set(BOUND_PROFILES)
        assert all(bound[rid][1] == 1 for rid in bound if bound[rid][0] not in BOUND_PROFILES)
    finally:
        with_lenses.close()
        plain.close()
