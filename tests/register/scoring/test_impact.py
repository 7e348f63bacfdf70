"""Impact preview: the SQL transition matrix equals an independent recomputation in Python."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

import pytest

from hri_core import score_response
from register.scoring.impact import impact_preview
from register.scoring.profiles import active_profile, create_draft, get_profile
from register.scoring.reproduce import load_response
from register.scoring.scorer import rescore
from tests.helpers.actors import ANN

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
STRICT = {
    "weights": {"F": 0.40, "C": 0.10, "U": 0.25, "O": 0.05, "S": 0.05, "P": 0.05, "H": 0.10},
    "bands": [{"name": "Low", "upper": 10, "action": "release"}, {"name": "Medium", "upper": 40, "action": "caution"},
              {"name": "High", "upper": 70, "action": "review"}, {"name": "Critical", "upper": 100, "action": "block"}],
    "floors": [{"rule_id": "contradicted-any", "label": "CONTRADICTED", "min_criticality": 1, "value": 0.45}],
}


def _python_counts(store, old, new):
    ids = [r[0] for r in store.query("SELECT response_id FROM responses WHERE is_current ORDER BY response_id")]
    bands, actions, changed = Counter(), 0, {}
    for rid in ids:
        response = load_response(store, rid)
        a, b = score_response(response, old, AS_OF), score_response(response, new, AS_OF)
        bands[(a.band, b.band)] += 1
        actions += a.action != b.action
        if a.band != b.band or a.action != b.action or abs(a.score - b.score) > 1e-9:
            changed[rid] = (a.score, b.score)
    return ids, bands, actions, changed


def test_transition_matrix_equals_python_recomputation(demo_store):
    draft = get_profile(demo_store, create_draft(demo_store, ANN, STRICT))
    active = active_profile(demo_store)
    preview = impact_preview(demo_store, draft, as_of=AS_OF, changed_limit=100_000)
    ids, bands, actions, changed = _python_counts(demo_store, active, draft)
    assert preview.total == len(ids)
    assert preview.matrix() == dict(bands)
    assert preview.band_changes == sum(c for (a, b), c in bands.items() if a != b) > 0
    assert preview.action_changes == actions > 0
    assert preview.score_changes == len(changed)
    shown = {r.response_id: (r.old_score, r.new_score) for r in preview.changed.itertuples()}
    assert shown.keys() == changed.keys()
    for rid, (old, new) in changed.items():
        assert shown[rid] == pytest.approx((old, new), abs=1e-9)
    assert list(preview.changed.delta.abs()) == sorted(preview.changed.delta.abs(), reverse=True)
    assert preview.histogram.old.sum() == preview.histogram.new.sum() == len(ids)
    lines = preview.transition_lines()
    biggest = max(((a, b, c) for (a, b), c in bands.items() if a != b), key=lambda t: t[2])
    assert f"{biggest[2]:,} {biggest[0]} -> {biggest[1]}" in lines


def test_identical_profile_changes_nothing(demo_store):
    same = get_profile(demo_store, create_draft(demo_store, ANN, {}))
    preview = impact_preview(demo_store, same, as_of=AS_OF)
    assert preview.band_changes == preview.action_changes == preview.score_changes == 0
    assert preview.changed.empty
    assert all(a == b for a, b in preview.matrix())


def test_stored_baseline_compares_with_the_current_scores(demo_store):
    rescore(demo_store, ANN, active_profile(demo_store), as_of=AS_OF)
    draft = get_profile(demo_store, create_draft(demo_store, ANN, STRICT))
    stored = impact_preview(demo_store, draft, as_of=AS_OF, baseline="stored")
    live = impact_preview(demo_store, draft, as_of=AS_OF)
    assert stored.matrix() == live.matrix()
    assert stored.baseline == "stored current scores"


def test_changed_limit_caps_the_list_not_the_counts(demo_store):
    draft = get_profile(demo_store, create_draft(demo_store, ANN, STRICT))
    preview = impact_preview(demo_store, draft, as_of=AS_OF, changed_limit=3)
    assert len(preview.changed) == 3 < preview.score_changes


def test_progress_is_told_and_the_figures_do_not_change(demo_store):
    """A page's progress bar hears how far the preview is (ending with its summary); the figures are the same
    as without one, on both ways of computing them."""
    draft = get_profile(demo_store, create_draft(demo_store, ANN, STRICT))
    for from_stored in (True, False):
        heard: list[tuple[float, str]] = []
        quiet = impact_preview(demo_store, draft, from_stored=from_stored)
        told = impact_preview(demo_store, draft, from_stored=from_stored, as_of=quiet.as_of,
                              progress=lambda fraction, what, heard=heard: heard.append((fraction, what)))
        assert heard[-1] == (1.0, "summarising")
        assert all(0.0 <= fraction <= 1.0 for fraction, _ in heard)
        assert (told.matrix(), told.action_changes, told.score_changes, told.method) == (
            quiet.matrix(), quiet.action_changes, quiet.score_changes, quiet.method)
