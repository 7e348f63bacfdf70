"""Weights fitted from outcomes become a draft profile with their evidence, previewed and published like any draft."""

from __future__ import annotations

import json

import pytest

from hri_core.outcome_fit import FitError
from hri_core.synthetic_outcomes import SYNTHETIC_AS_OF, outcome_records
from register.errors import PermissionDenied, RegisterError
from register.scoring.elicitation import elicitations_for
from register.scoring.fitted_weights import draft_from_fit
from register.scoring.impact import impact_preview
from register.scoring.profiles import activate, active_profile, get_profile, profile_meta
from tests.helpers.actors import ANN, BOB, REVIEWER, enrol
from tests.helpers.cli import call_main

TRUE_WEIGHTS = {"F": 0.35, "C": 0.05, "U": 0.10, "O": 0.25, "S": 0.05, "P": 0.15, "H": 0.05}


def lines(n=300, seed=21):
    records = outcome_records(n, TRUE_WEIGHTS, seed=seed)
    return [("line 1", {**records[0], "outcome": "bad"}),
            *((f"line {i}", r) for i, r in enumerate(records[1:], start=2))]


def test_a_fit_becomes_a_draft_with_its_evidence_previewed_and_published_by_a_second_person(demo_store):
    enrol(demo_store, ANN, BOB, REVIEWER)
    with pytest.raises(PermissionDenied):
        draft_from_fit(demo_store, REVIEWER, lines(), source_name="outcomes.jsonl", as_of=SYNTHETIC_AS_OF)
    base = active_profile(demo_store)
    draft = draft_from_fit(demo_store, ANN, lines(), source_name="outcomes.jsonl", as_of=SYNTHETIC_AS_OF,
                           resamples=10)
    meta = profile_meta(demo_store, draft.profile_version)
    assert meta["status"] == "draft" and meta["based_on"] == base.version and meta["created_by"] == ANN.name
    stored = get_profile(demo_store, draft.profile_version)
    assert {d.value: w for d, w in stored.weights.items()} == pytest.approx(draft.fit.weights, abs=1e-12)
    assert stored.floors == base.floors and stored.bands == base.bands  # only the weights change
    (record,) = elicitations_for(demo_store, draft.profile_version)
    evidence = record["record"]
    assert record["elicitation_id"] == draft.elicitation_id and record["method"] == "calibration"
    assert evidence["method"] == "outcome_fit" and evidence["n"] == 299
    assert evidence["data"]["sha256"] == draft.fit.data_hash
    assert set(evidence["intervals"]) == set("FCUOSPH") and "auc" in evidence["cv"]["fitted"]
    assert evidence["quarantined"][0]["where"] == "line 1" and evidence["quarantined"][0]["field"] == "outcome"
    assert evidence["baseline"]["profile"]["version"] == base.version
    preview = impact_preview(demo_store, stored)
    assert preview.total > 0
    with pytest.raises(RegisterError):  # four eyes: the author does not publish their own draft
        activate(demo_store, ANN, draft.profile_version, "fitted to outcomes")
    activate(demo_store, BOB, draft.profile_version, "fitted to outcomes, preview checked")
    assert active_profile(demo_store).version == draft.profile_version


def test_data_that_cannot_carry_a_fit_writes_nothing(store):
    before = store.scalar("SELECT count(*) FROM scoring_profiles")
    one_class = [(w, {**r, "outcome": 0}) for w, r in lines(60)]
    with pytest.raises(FitError, match="harmful"):
        draft_from_fit(store, ANN, one_class, source_name="x.jsonl", as_of=SYNTHETIC_AS_OF, resamples=5)
    assert store.scalar("SELECT count(*) FROM scoring_profiles") == before


def test_profiles_draft_from_fit_command(tmp_path, capsys):
    from register.cli import main

    path = tmp_path / "outcomes.jsonl"
    records = outcome_records(200, TRUE_WEIGHTS, seed=4)
    path.write_text("{broken\n" + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    result = call_main(main, ["--db", tmp_path / "r.duckdb", "profiles", "draft-from-fit", path, "--json",
                              "--resamples", "5", "--as-of", "2027-01-01T00:00:00Z"], capsys)
    assert result.returncode == 2, result.stderr  # one line left out
    output = json.loads(result.stdout)
    assert output["profile_version"] == 2 and output["fit"]["n"] == 200
    assert sum(output["fit"]["weights"].values()) == pytest.approx(1.0)
    assert f"{path}:line 1: " in result.stderr


def test_a_fit_to_the_registers_outcomes_is_offered_by_a_profile_editor_only(demo_store):
    from register.scoring.fitted_weights import draft_from_register
    from register.scoring.register_outcomes import register_outcomes
    from tests.helpers.actors import ANNOTATOR
    from tests.helpers.outcomes import import_scored_outcomes

    enrol(demo_store, ANN, REVIEWER, ANNOTATOR)
    import_scored_outcomes(demo_store, 60)
    data = register_outcomes(demo_store)
    before = demo_store.scalar("SELECT count(*) FROM scoring_profiles")
    for actor in (ANNOTATOR, REVIEWER):
        with pytest.raises(PermissionDenied):
            draft_from_register(demo_store, actor, resamples=5)
    with pytest.raises(RegisterError, match="outcomes changed"):
        draft_from_register(demo_store, ANN, resamples=5, data_hash="f" * 64)
    assert demo_store.scalar("SELECT count(*) FROM scoring_profiles") == before
    draft = draft_from_register(demo_store, ANN, resamples=5, data_hash=data.data_hash)
    (record,) = elicitations_for(demo_store, draft.profile_version)
    evidence = record["record"]
    assert evidence["source_name"] == "register" and evidence["data"]["sha256"] == data.data_hash
    # the 60 imported outcomes and the demo's 30 review decisions on answers without one (register.demo)
    assert evidence["data"]["kinds"] == data.kind_counts() and evidence["n"] == 90
    assert profile_meta(demo_store, draft.profile_version)["status"] == "draft"
