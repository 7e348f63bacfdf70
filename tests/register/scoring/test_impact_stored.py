"""Impact preview from the stored score rows (``register.scoring.impact_stored``).

A draft that differs from the profile behind the stored scores only in weights, bands or the no-claims
action is previewed from the stored rows; the figures equal a full rescore's exactly (transitions, action
transitions, changed rows, histogram; means and medians to 1e-9) over random responses and profiles,
band edges, floors binding and not, minimum-action floors, responses without claims and responses that
failed closed. Any other change, and stored rows that cannot stand in for a rescore (several profile
versions or as-of times, another parameter set under the version's number, floors out of step), take
the full rescore, which the preview names.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from hri_core import ScoringProfile, default_profile, recommended_profile
from register import SYSTEM, Store
from register.db.store import Change
from register.readmodels import current_scores
from register.scoring.impact import ImpactPreview, impact_preview
from register.scoring.impact_stored import METHOD_FULL, METHOD_STORED
from register.scoring.profiles import activate, create_draft, ensure_default_profile, get_profile
from register.scoring.scorer import rescore
from tests.helpers.fresh import fresh_store
from tests.helpers.parity import load
from tests.helpers.strategies import AS_OF, band_lists, profiles, responses, weight_maps

ACTIONS = ("release", "caution", "review", "block")
POISON_CRITICALITY = 2_147_483_647  # stored before the bound existed: the scorer fails the response closed


def poison(store: Store, claim_id: str) -> None:
    """Edit one stored claim out of the model's bounds (as a record stored by an older version would be)."""
    def fn(tx) -> Change:
        tx.execute("UPDATE claims SET criticality = ? WHERE claim_id = ?", [POISON_CRITICALITY, claim_id])
        return Change("claim", claim_id, None, {})
    store.write(SYSTEM, "test.poison", fn)


def stored_version(store: Store, profile: ScoringProfile) -> ScoringProfile:
    """``profile`` stored as a new version (its parameters; the register numbers it)."""
    return get_profile(store, create_draft(store, SYSTEM, profile.to_dict()))


def variant(base: ScoringProfile, weights: dict, bands=None, no_claims_action: str | None = None) -> ScoringProfile:
    data = {**base.to_dict(), "weights": weights, "version": base.version + 100}
    if bands is not None:
        data["bands"] = [b.model_dump(mode="json") for b in bands]
    if no_claims_action is not None:
        data["no_claims_action"] = no_claims_action
    return ScoringProfile.model_validate(data)


def assert_same(fast: ImpactPreview, full: ImpactPreview) -> None:
    """The fast preview took the stored rows, the other rescored, and every figure agrees."""
    assert (fast.method, full.method) == (METHOD_STORED, METHOD_FULL), fast.method_note
    assert (fast.total, fast.band_changes, fast.action_changes, fast.score_changes) == (
        full.total, full.band_changes, full.action_changes, full.score_changes)
    for name in ("transitions", "action_transitions", "histogram", "changed"):
        pd.testing.assert_frame_equal(getattr(fast, name), getattr(full, name), check_exact=True, obj=name)
    for name in ("mean_old", "mean_new", "median_old", "median_new"):
        assert getattr(fast, name) == pytest.approx(getattr(full, name), abs=1e-9, nan_ok=True), name
    assert fast.as_of == full.as_of == AS_OF


def both_ways(store: Store, draft: ScoringProfile, baseline) -> tuple[ImpactPreview, ImpactPreview]:
    fast = impact_preview(store, draft, baseline=baseline, changed_limit=100_000)
    full = impact_preview(store, draft, baseline=baseline, as_of=AS_OF, changed_limit=100_000, from_stored=False)
    return fast, full


# --- parity -------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=responses(min_size=1, max_size=25, min_claims=0, max_claims=6),
       base=hs.sampled_from([default_profile(), recommended_profile()]) | profiles(), data=hs.data())
def test_the_stored_rows_give_a_full_rescores_figures(records, base, data):
    with tempfile.TemporaryDirectory() as folder:
        store = fresh_store(Path(folder) / "impact.duckdb")  # a copy of a migrated file
        try:
            ensure_default_profile(store, SYSTEM)
            load(store, records)
            with_claims = [r for r in records if r["claims"]]
            if with_claims and data.draw(hs.booleans(), label="poison one response"):
                poison(store, data.draw(hs.sampled_from(with_claims))["claims"][0]["claim_id"])
            scored = stored_version(store, base)
            rescore(store, SYSTEM, scored, as_of=AS_OF)

            def draw_variant(label: str) -> ScoringProfile:
                weights = data.draw(hs.just({d.value: w for d, w in scored.weights.items()}) | weight_maps(),
                                    label=f"{label} weights")
                bands = data.draw(hs.none() | band_lists(), label=f"{label} bands")
                return variant(scored, weights, bands, data.draw(hs.none() | hs.sampled_from(ACTIONS)))

            draft = draw_variant("draft")
            baseline = data.draw(hs.sampled_from(["stored", "profile"]), label="baseline")
            assert_same(*both_ways(store, draft, draw_variant("baseline") if baseline == "profile" else "stored"))
        finally:
            store.close()


EDGE_RECORDS = [
    {"response_id": "empty", "claims": []},
    # s_U = 0.5: under U = 0.4 the score is 100 * 0.2 = 20.000000000000004, Low's upper edge at 9 decimals
    {"response_id": "edge", "claims": [{"claim_id": "edge-1", "labels": ["PARTIAL"], "criticality": 1}]},
    # the CONTRADICTED v = 2 floor (0.5, min_action review) binds: 50, Medium's edge, raised to review
    {"response_id": "floor-binds", "claims": [{"claim_id": "fb-1", "labels": ["CONTRADICTED"], "criticality": 2},
                                              {"claim_id": "fb-2", "labels": ["SUPPORTED"], "criticality": 5}]},
    # the same floor fires; it binds under the paper's weights (50), the draft's additive score beats it
    {"response_id": "floor-below", "claims": [
        {"claim_id": "fn-1", "labels": ["CONTRADICTED"], "criticality": 2, "dimensions": ["U"]},
        {"claim_id": "fn-2", "labels": ["UNSUPPORTED"], "criticality": 5,
         "dimensions": ["U", "S", "P", "H", "O"]}]},
    # repeated feedback: the feedback floor (min_action review) and a decayed H contribution
    {"response_id": "feedback", "claims": [{"claim_id": "fe-1", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"],
                                            "criticality": 2, "feedback_at": "2026-11-01T00:00:00Z",
                                            "feedback_count": 3}]},
    {"response_id": "failed", "claims": [{"claim_id": "bad-1", "labels": ["PARTIAL"], "criticality": 2}]},
]


def test_edges_floors_min_actions_no_claims_and_failures_match(store):
    load(store, EDGE_RECORDS)
    poison(store, "bad-1")
    scored = stored_version(store, recommended_profile())
    activate(store, SYSTEM, scored.version, "Table IV's review floors")
    rescore(store, SYSTEM, scored, as_of=AS_OF)
    draft = variant(scored, {"F": 0.1, "C": 0.1, "U": 0.4, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1},
                    no_claims_action="block")
    for baseline in ("active", "stored", scored):
        fast, full = both_ways(store, draft, baseline)
        assert_same(fast, full)
    rows = {r.response_id: r for r in fast.changed.itertuples()}
    assert (rows["empty"].old_action, rows["empty"].new_action) == ("review", "block")
    assert "failed" not in rows and "floor-binds" not in rows  # 100 and review; 50 and review, both ways
    assert (rows["edge"].new_band, rows["edge"].new_score) == ("Low", pytest.approx(20.0))
    below = rows["floor-below"]
    assert (below.old_score, below.new_action) == (pytest.approx(50.0), "review") and below.new_score > 50
    assert fast.method_line().startswith("Computed from the stored dimension scores")


# --- when the stored rows cannot stand in for a rescore ------------------------------------------------


WEIGHTS = {"F": 0.4, "C": 0.1, "U": 0.2, "O": 0.1, "S": 0.05, "P": 0.05, "H": 0.1}


@pytest.fixture
def scored(store):
    """Edge records scored under the default profile (v1, active) at ``AS_OF``."""
    load(store, EDGE_RECORDS[:-1])
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    return store


def test_a_weights_only_draft_of_the_active_profile_takes_the_stored_rows(scored):
    fast, full = both_ways(scored, variant(get_profile(scored, 1), WEIGHTS), "active")
    assert_same(fast, full)
    assert fast.score_changes > 0


@pytest.mark.parametrize(("override", "changed"), [
    ({"floors": [{"rule_id": "contradicted-medium", "label": "CONTRADICTED", "min_criticality": 2,
                  "max_criticality": 2, "value": 0.45}]}, "floors"),
    ({"contributions": {"PARTIAL": 0.4}}, "contributions"),
])
def test_a_draft_changing_more_than_weights_is_rescored(scored, override, changed):
    draft = get_profile(scored, create_draft(scored, SYSTEM, {**override, "weights": WEIGHTS}))
    preview = impact_preview(scored, draft)
    assert preview.method == METHOD_FULL
    assert f"the draft changes {changed} relative to version 1" in preview.method_note
    assert preview.method_line() == f"Full rescore of every response: {preview.method_note}."


def test_stored_rows_of_two_profile_versions_are_rescored(store):
    first = load(store, EDGE_RECORDS[:3], "first.jsonl")
    load(store, EDGE_RECORDS[3:5], "second.jsonl")
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    other = get_profile(store, create_draft(store, SYSTEM, {"weights": WEIGHTS}))
    rescore(store, SYSTEM, other, as_of=AS_OF, batch_id=first)
    assert store.query("SELECT DISTINCT profile_version FROM scores WHERE is_current ORDER BY 1") == [(1,), (2,)]
    preview = impact_preview(store, variant(other, WEIGHTS), baseline="stored")
    assert preview.method == METHOD_FULL
    assert "profile versions 1 to 2" in preview.method_note


def test_stored_rows_of_two_as_of_times_or_another_time_are_rescored(store):
    first = load(store, EDGE_RECORDS[:3], "first.jsonl")
    load(store, EDGE_RECORDS[3:5], "second.jsonl")
    v1 = get_profile(store, 1)
    rescore(store, SYSTEM, v1, as_of=AS_OF)
    draft = variant(v1, WEIGHTS)
    later = AS_OF.replace(day=2)
    assert "another time" in impact_preview(store, draft, as_of=later).method_note
    rescore(store, SYSTEM, v1, as_of=later, batch_id=first)
    assert "different as-of times" in impact_preview(store, draft).method_note


def test_rows_scored_with_other_parameters_under_the_same_number_are_rescored(scored):
    v1 = get_profile(scored, 1)
    impostor = v1.model_copy(update={"contributions": {**v1.contributions, "PARTIAL": 0.9}})
    rescore(scored, SYSTEM, impostor, as_of=AS_OF)  # version 1's number, not its parameters
    preview = impact_preview(scored, variant(v1, WEIGHTS))
    assert preview.method == METHOD_FULL
    assert "parameters other than version 1's" in preview.method_note


def test_rows_whose_floors_are_out_of_step_are_rescored(scored):
    def fn(tx) -> Change:
        tx.execute("DELETE FROM score_floors WHERE response_id = 'floor-below'")
        return Change("score_floors", "floor-below", None, {})
    scored.write(SYSTEM, "test.edit", fn)
    preview = impact_preview(scored, variant(get_profile(scored, 1), WEIGHTS))
    assert preview.method == METHOD_FULL
    assert "disagree with their recorded floors" in preview.method_note


@pytest.mark.parametrize("and_missing", [False, True])
def test_a_response_with_two_current_stored_scores_is_rescored(scored, and_missing):
    """A read model edited by hand: one response twice, alone or with another one missing (the count agrees)."""
    def edit(tx) -> Change:
        tx.execute("INSERT INTO current_scores SELECT * FROM current_scores WHERE response_id = 'floor-below'")
        if and_missing:
            tx.execute("DELETE FROM current_scores WHERE response_id = 'edge'")
        return Change("current_scores", "floor-below", None, {})
    scored.write(SYSTEM, "test.edit", edit)
    total = scored.scalar("SELECT count(*) FROM responses WHERE is_current")
    assert (scored.scalar("SELECT count(*) FROM current_scores") == total) is and_missing
    for baseline in ("active", "stored"):
        preview = impact_preview(scored, variant(get_profile(scored, 1), WEIGHTS), baseline=baseline)
        assert preview.method == METHOD_FULL
        assert "more than one current stored score" in preview.method_note

    def restore(tx) -> Change:
        current_scores.rebuild(tx)  # as it was, for the teardown's check of the read model
        return Change("current_scores", "all", None, {})
    scored.write(SYSTEM, "test.edit", restore)


def test_a_response_without_a_current_score_is_rescored_against_the_active_profile(scored):
    load(scored, [{"response_id": "late", "claims": [{"claim_id": "late-1", "labels": ["UNSUPPORTED"]}]}])
    draft = variant(get_profile(scored, 1), WEIGHTS)
    assert "no current stored score" in impact_preview(scored, draft).method_note
    # against the stored scores the unscored response is left out either way, so the stored rows do
    fast, full = both_ways(scored, draft, "stored")
    assert_same(fast, full)


def test_a_current_score_of_an_older_revision_is_left_out_as_the_full_rescore_leaves_it(scored):
    changed = {"response_id": "edge", "claims": [{"claim_id": "edge-1", "labels": ["CONTRADICTED"], "criticality": 3}]}
    load(scored, [changed])  # revision 2, not scored: the current score is of revision 1
    assert scored.query("SELECT revision FROM scores WHERE is_current AND response_id = 'edge'") == [(1,)]
    fast, full = both_ways(scored, variant(get_profile(scored, 1), WEIGHTS), "stored")
    assert_same(fast, full)
    assert fast.total == len(EDGE_RECORDS) - 2  # without "failed" (not loaded here) and "edge"
