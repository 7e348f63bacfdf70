"""AHP and Delphi through the register: drafts with their elicitation record, hidden Delphi submissions."""

from __future__ import annotations

import numpy as np
import pytest

from hri_core import HRIError
from hri_core.ahp import DIMENSION_LETTERS
from register import Actor, StaleEdit
from register.errors import PermissionDenied
from register.scoring import elicitation as el
from register.scoring.profiles import get_profile, profile_meta
from tests.helpers.actors import enrol

FACILITATOR = Actor("Fay Facilitator", "admin")
EXPERTS = [Actor("Eve Risk", "reviewer"), Actor("Leo Legal", "viewer"), Actor("Ira IT", "annotator")]
TRUE_W = np.array([0.30, 0.20, 0.15, 0.10, 0.10, 0.05, 0.10])


@pytest.fixture
def store(store):
    """The shared register, with accounts for the facilitator, the experts and an outsider."""
    enrol(store, FACILITATOR, *EXPERTS, Actor("Outsider", "admin"))
    return store


def _consistent_judgements(w):
    """Judgements of an expert whose weights are exactly ``w`` (not on the scale: non-strict input)."""
    return {f"{a}/{b}": float(w[i] / w[j]) for i, a in enumerate(DIMENSION_LETTERS)
            for j, b in enumerate(DIMENSION_LETTERS) if i < j}


SCALE_JUDGEMENTS = [3, 2, 3, 3, 5, 3, 1, 2, 2, 3, 2, 2, 2, 3, 2, 1, 2, 1, 2, 1, 1]


def test_ahp_draft_carries_weights_and_the_record(store):
    experts = [{"expert": "Ann", "judgements": SCALE_JUDGEMENTS}, {"expert": "Bob", "judgements": [1] * 21}]
    version, record_id = el.save_ahp(store, FACILITATOR, experts, name="ahp-test")
    analysis = el.ahp_analysis(experts)
    profile = get_profile(store, version)
    assert profile_meta(store, version)["status"] == "draft"
    assert profile.name == "ahp-test"
    for d in DIMENSION_LETTERS:
        assert profile.weights[d] == pytest.approx(analysis["combined"].weights[d], abs=1e-5)
    (record,) = el.elicitations_for(store, version)
    assert record["elicitation_id"] == record_id and record["method"] == "ahp"
    body = record["record"]
    assert [e["expert"] for e in body["experts"]] == ["Ann", "Bob"]
    assert body["cr"] == pytest.approx(analysis["combined"].cr)
    assert len(body["experts"][0]["judgements"]) == 21
    assert body["date"] and body["aggregation"].startswith("geometric mean")


def test_geometric_mean_of_two_experts_is_between_them(store):
    a = {"expert": "A", "judgements": SCALE_JUDGEMENTS}
    b = {"expert": "B", "judgements": [1] * 21}
    analysis = el.ahp_analysis([a, b])
    wa = analysis["experts"][0][1].weights
    assert analysis["experts"][1][1].weights["F"] == pytest.approx(1 / 7)
    assert 1 / 7 < analysis["combined"].weights["F"] < wa["F"]


def test_inconsistent_ahp_is_refused_naming_the_judgements(store):
    bad = list(SCALE_JUDGEMENTS)
    bad[0] = 1 / 9  # F/C: C is now extremely more important than F, against every other judgement
    with pytest.raises(el.ElicitationError, match=r"CR = .* above 0.10.*F/C"):
        el.save_ahp(store, FACILITATOR, [{"expert": "Ann", "judgements": bad}])
    assert store.query_one("SELECT count(*) FROM elicitations")[0] == 0


def test_ahp_bad_judgements_are_named_per_expert(store):
    with pytest.raises(HRIError) as caught:
        el.ahp_analysis([{"expert": "Ann", "judgements": [1] * 20}, {"expert": "Ann", "judgements": [11] + [1] * 20}])
    locs = {p.loc for p in caught.value.problems}
    assert {"experts[0].judgements", "experts[1].expert", "experts[1].judgements[0]"} <= locs


def test_ahp_needs_profile_edit(store):
    with pytest.raises(PermissionDenied):
        el.save_ahp(store, EXPERTS[0], [{"expert": "A", "judgements": [1] * 21}])


# --- Delphi --------------------------------------------------------------------------------------


def _vector(base, shift):
    return {d: float(v) for d, v in zip(DIMENSION_LETTERS, base + shift, strict=True)}


def test_delphi_rounds_hidden_until_close_then_converge_and_finalise(store):
    sid = el.open_session(store, FACILITATOR, "Weights 2027", [e.name for e in EXPERTS], 0.03)
    rng = np.random.default_rng(42)
    spreads = [rng.uniform(-0.9, 0.9, size=(3, 7)) for _ in range(3)]
    shrink = [1.0, 0.4, 0.1]  # scripted experts move towards each other
    summaries = []
    for rnd in range(3):
        if rnd:
            assert el.open_next_round(store, FACILITATOR, sid) == rnd + 1
        for k, expert in enumerate(EXPERTS):
            assert el.submit_weights(store, expert, sid, _vector(TRUE_W, shrink[rnd] * spreads[rnd][k] * TRUE_W),
                                     rationale=f"round {rnd + 1} by {expert.name}") == rnd + 1
            # while the round is open nobody sees anyone else's weights, not even the facilitator
            for viewer in EXPERTS + [FACILITATOR]:
                seen = el.round_submissions(store, viewer, sid, rnd + 1)
                assert {s["expert"] for s in seen} <= {viewer.name}
        assert el.delphi_session(store, sid)["rounds"][-1]["submitted"] == sorted(e.name for e in EXPERTS)
        with pytest.raises(el.ElicitationError, match="not converged|still open"):
            el.finalise_delphi(store, FACILITATOR, sid)
        summary = el.close_round(store, FACILITATOR, sid)
        summaries.append(summary)
        seen = el.round_submissions(store, EXPERTS[0], sid, rnd + 1)
        assert len(seen) == 3 and all(s["rationale"] for s in seen)
        # the stored summary equals an independent computation from the submissions
        table = np.array([[s["weights"][d] for d in DIMENSION_LETTERS] for s in seen])
        q1, med, q3 = np.quantile(table, [0.25, 0.5, 0.75], axis=0)
        for i, d in enumerate(DIMENSION_LETTERS):
            assert summary["spread"][d]["median"] == pytest.approx(med[i])
            assert summary["spread"][d]["iqr"] == pytest.approx(q3[i] - q1[i])
        for s in seen:
            vec = np.array([s["weights"][d] for d in DIMENSION_LETTERS])
            assert summary["distances"][s["expert"]] == pytest.approx(float(np.sqrt(((vec - med) ** 2).sum())))
        assert summary["converged"] == (summary["max_iqr"] < 0.03)
    assert [s["converged"] for s in summaries] == [False, False, True]
    assert summaries[0]["max_iqr"] > summaries[1]["max_iqr"] > summaries[2]["max_iqr"]

    version, record_id = el.finalise_delphi(store, FACILITATOR, sid, name="delphi-2027")
    profile = get_profile(store, version)
    medians = summaries[-1]["median_vector"]
    total = sum(medians.values())
    for d in DIMENSION_LETTERS:
        assert profile.weights[d] == pytest.approx(medians[d] / total, abs=1e-5)
    (record,) = el.elicitations_for(store, version)
    body = record["record"]
    assert record["method"] == "delphi" and body["converged"] and not body["accepted_unconverged"]
    assert [len(r["submissions"]) for r in body["rounds"]] == [3, 3, 3]
    assert el.delphi_session(store, sid)["status"] == "finalised"
    with pytest.raises(StaleEdit):
        el.submit_weights(store, EXPERTS[0], sid, _vector(TRUE_W, 0))


def test_delphi_rules(store):
    sid = el.open_session(store, FACILITATOR, "Rules", [e.name for e in EXPERTS[:2]], 0.05)
    with pytest.raises(PermissionDenied, match="not an expert"):
        el.submit_weights(store, Actor("Outsider", "admin"), sid, _vector(TRUE_W, 0))
    with pytest.raises(PermissionDenied, match="may not profile.edit"):
        el.close_round(store, EXPERTS[0], sid)  # an expert's role may not edit profiles at all
    with pytest.raises(PermissionDenied, match="facilitator"):
        el.close_round(store, Actor("Outsider", "admin"), sid)  # another admin is not the facilitator
    el.submit_weights(store, EXPERTS[0], sid, _vector(TRUE_W, 0))
    with pytest.raises(el.ElicitationError, match="at least two"):
        el.close_round(store, FACILITATOR, sid)
    el.submit_weights(store, EXPERTS[0], sid, _vector(TRUE_W, 0.01), "changed my mind")  # replaces, still one
    el.submit_weights(store, EXPERTS[1], sid, {**_vector(TRUE_W, 0), "F": 0.9})
    assert len(el.round_submissions(store, EXPERTS[0], sid, 1)) == 1
    summary = el.close_round(store, FACILITATOR, sid)
    assert not summary["converged"]
    with pytest.raises(StaleEdit, match="closed"):
        el.submit_weights(store, EXPERTS[0], sid, _vector(TRUE_W, 0))
    with pytest.raises(el.ElicitationError, match="not converged"):
        el.finalise_delphi(store, FACILITATOR, sid)
    version, _ = el.finalise_delphi(store, FACILITATOR, sid, accept_unconverged=True)
    assert el.elicitations_for(store, version)[0]["record"]["accepted_unconverged"] is True


def test_delphi_session_validation(store):
    with pytest.raises(el.ElicitationError) as caught:
        el.open_session(store, FACILITATOR, "", ["Solo"], 2.0)
    message = str(caught.value)
    assert "title" in message and "two experts" in message and "iqr_threshold" in message
    with pytest.raises(PermissionDenied):
        el.open_session(store, EXPERTS[0], "t", ["a", "b"], 0.05)
