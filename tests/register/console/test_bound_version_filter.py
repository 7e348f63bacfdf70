"""The overview's profile filter under per-use-case profiles (issue 37, item 3): a score run under a lens scores the
use cases a lens binds under their own profile version, while ``score_runs.profile_version`` names the run's
default. A filter on the bound version shows the answers it scored, and a filter on the default the others only."""

from __future__ import annotations

from register import SYSTEM
from register.console.queries.filters import Filters, covers_every_current, filtered_scores
from register.console.queries.overview import filter_options, kpis
from register.db.sql import Params
from register.scoring.lens_versions import save_lenses
from register.scoring.profiles import create_draft, get_profile
from register.scoring.scorer import rescore
from tests.helpers.parity import load
from tests.helpers.strategies import AS_OF


def record(rid: str, use_case: str) -> dict:
    return {"response_id": rid, "use_case": use_case, "claims": [
        {"claim_id": f"{rid}-1", "labels": ["SUPPORTED"], "criticality": 1, "is_core": True}]}


def answers_under(store, version: int) -> set[str]:
    p = Params()
    sql = filtered_scores(store, Filters(profile_version=version), p)
    return {row[0] for row in store.query(f"SELECT response_id FROM ({sql})", p.values)}


def test_a_filter_on_a_bound_version_shows_the_answers_it_scored(store):
    load(store, [record("a1", "clinical"), record("a2", "clinical"), record("b1", "search"), record("c1", "other")])
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    bound = create_draft(store, SYSTEM, {}, name="clinical-strict")
    save_lenses(store, SYSTEM, [{"use_case": "clinical", "profile_version": bound}], "stricter for clinical answers")
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    assert dict(store.query("SELECT response_id, profile_version FROM current_scores")) == {
        "a1": bound, "a2": bound, "b1": 1, "c1": 1}
    assert bound in filter_options(store)["profile_versions"]
    assert answers_under(store, bound) == {"a1", "a2"}
    assert answers_under(store, 1) == {"b1", "c1"}
    assert kpis(store, Filters(profile_version=bound))["responses"] == 2
    assert not covers_every_current(store, bound)
