"""A profile and a CLAIM lens per use case (issue 37, item 3): scoring per use case equals the pure scorer under
each bound profile and lens, four eyes on binding, a skipped step never lowers a decision, the impact preview limited
to the bound use cases."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from hri_core import parse_response, score_response
from hri_core.decision import authority_findings, decide_scored, scope_finding
from hri_core.lens import FULL_LENS, ClaimLens
from hri_core.mitigation import decide
from register import SYSTEM, Actor, Store
from register.errors import FourEyesViolation, ValidationFailed
from register.scoring.impact import impact_preview
from register.scoring.lens_versions import approve_lenses, bind_profile, save_lenses, set_lens
from register.scoring.lenses import lens_version, score_lens
from register.scoring.mitigation import active_policy
from register.scoring.preview import use_case_statuses
from register.scoring.profiles import create_draft, ensure_default_profile, get_profile
from register.scoring.scorer import rescore
from tests.helpers.actors import enrol
from tests.helpers.fresh import fresh_store
from tests.helpers.parity import add_register, assert_matches, load, pure_authority
from tests.helpers.strategies import AS_OF, profiles, responses, source_registers

ANNA = Actor("Anna Admin", "admin")
BEN = Actor("Ben Admin", "admin")
# supplier-contracts: its own profile, every step; hr-policy: a cheap Link-and-Inference pass; it-support: default
HR_LENS = ClaimLens(steps=("link", "inference"))


def pure_decision(store: Store, record: dict, profile, lens: ClaimLens):
    """``hri_core``'s decision on ``record`` under ``profile`` with only the steps ``lens`` runs."""
    policy = active_policy(store)
    response = parse_response(record)
    results = pure_authority(store, response, AS_OF) if lens.runs("authority") else ()
    mitigation = (decide(response, policy, authority={r.claim_id: r.failures for r in results})
                  if lens.runs("mitigation") else None)
    scope = scope_finding(response.use_case, use_case_statuses(store)) if lens.runs("scope") else None
    return decide_scored(score_response(response, profile, AS_OF), mitigation=mitigation, scope=scope,
                         authority=authority_findings(response, results,
                                                      unmarked_claims_core=policy.unmarked_claims_core),
                         human_review=lens.human_review)


def check_lens_parity(records: list[dict], bound, register: dict) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = fresh_store(Path(folder) / "lens.duckdb")  # a copy of a migrated file
        try:
            ensure_default_profile(store, SYSTEM)
            load(store, records)
            add_register(store, register)
            draft = create_draft(store, SYSTEM, bound.model_dump(mode="json", exclude={"name", "version"}))
            save_lenses(store, SYSTEM, [
                {"use_case": "supplier-contracts", "profile_version": draft},
                {"use_case": "hr-policy", "steps": list(HR_LENS.steps)},
                {"use_case": "it-support", "steps": "scope; link; inference; mitigation", "human_review": True}],
                "parity")
            default, bound_profile = get_profile(store, 1), get_profile(store, draft)
            rescore(store, SYSTEM, default, as_of=AS_OF)
            rows = {r["response_id"]: r for r in store.dicts("SELECT * FROM scores WHERE is_current")}
            for record in records:
                use_case = record.get("use_case")
                profile = bound_profile if use_case == "supplier-contracts" else default
                lens = {"hr-policy": HR_LENS, "it-support": ClaimLens(
                    steps=("scope", "link", "inference", "mitigation"), human_review=True)}.get(use_case, FULL_LENS)
                row = rows[record["response_id"]]
                assert row["profile_version"] == profile.version
                assert list(row["claim_steps"]) == list(lens.steps) and row["human_review"] == lens.human_review
                assert_matches(row, score_response(parse_response(record), profile, AS_OF))
                want = pure_decision(store, record, profile, lens)
                assert (row["decision"], list(row["decision_reasons"])) == (want.decision, list(want.reasons)), record
                assert (row["mitigation_policy_version"] is None) == (not lens.runs("mitigation"))
        finally:
            store.close()


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])  # a fresh register per example: no time to shrink
@given(records=responses(min_size=3, max_size=6), bound=profiles(), register=source_registers())
def test_each_use_case_is_scored_under_its_lens_as_the_pure_scorer_scores_it(records, bound, register):
    check_lens_parity(records, bound, register)


def contract_records() -> list[dict]:
    def record(rid: str, use_case: str) -> dict:
        return {"response_id": rid, "use_case": use_case, "claims": [
            {"claim_id": f"{rid}-1", "labels": ["SUPPORTED"], "criticality": 1, "is_core": True,
             "source_id": "kb-old"}]}
    return [record("a1", "clinical"), record("a2", "clinical"), record("b1", "search"), record("c1", "other")]


def test_a_skipped_step_never_lowers_and_human_review_means_review(store):
    from register.governance.registers import add_row
    load(store, contract_records())
    add_row(store, SYSTEM, "sources", {"source_id": "kb-old", "title": "old", "authority_tier": 1,
                                       "source_type": "official framework", "valid_until": "2001-01-01"})
    set_lens(store, SYSTEM, "search", steps=["link", "inference"], reason="a cheap pass")
    set_lens(store, SYSTEM, "clinical", human_review=True, reason="a person sees every answer")
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    decisions = dict(store.query("SELECT response_id, decision FROM scores WHERE is_current"))
    # the stale source fails Authority on a core claim: review where Authority runs; skipped, the band says release
    assert decisions["c1"] == "review" and decisions["b1"] == "release"
    assert decisions["a1"] == decisions["a2"] == "review"  # Authority and human review both ask for review
    lens = score_lens(store, "b1")
    assert (lens["profile_version"], lens["mitigation_policy_version"], list(lens["claim_steps"])) == (
        1, None, ["link", "inference"])


def test_a_lens_without_link_and_inference_is_refused_by_field(store):
    with pytest.raises(ValidationFailed, match="steps"):
        save_lenses(store, SYSTEM, [{"use_case": "x", "steps": ["scope", "authority"]}], "skip the score")
    with pytest.raises(ValidationFailed, match="human review"):
        save_lenses(store, SYSTEM, [{"use_case": "x", "steps": ["link", "inference"], "human_review": True}], "r")


def test_binding_a_profile_needs_a_second_person_and_rescores_only_its_use_case(store):
    enrol(store, ANNA, BEN)
    load(store, contract_records())
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    draft = create_draft(store, ANNA, {}, name="clinical-strict")
    version = bind_profile(store, ANNA, "clinical", draft, "clinical answers need stricter weights")
    assert lens_version(store) is None  # pending: nothing changed yet
    with pytest.raises(FourEyesViolation):
        approve_lenses(store, ANNA, version, "my own")
    summary = approve_lenses(store, BEN, version, "checked the preview")
    assert summary is not None and summary.responses_scored == 2
    assert lens_version(store) == version
    by_answer = dict(store.query("SELECT response_id, profile_version FROM scores WHERE is_current"))
    assert by_answer == {"a1": draft, "a2": draft, "b1": 1, "c1": 1}
    assert store.scalar("SELECT status FROM scoring_profiles WHERE profile_version = ?", [draft]) == "bound"
    events = [r[0] for r in store.query("SELECT action FROM audit_events WHERE entity_type = 'use_case_lens'")]
    assert "use_case_lens.propose" in events and "use_case_lens.approve" in events


def test_the_author_of_a_bound_draft_cannot_approve_its_binding(store):
    enrol(store, ANNA, BEN)
    load(store, contract_records())
    draft = create_draft(store, BEN, {}, name="bens")
    version = bind_profile(store, ANNA, "clinical", draft, "bind Ben's draft")
    with pytest.raises(FourEyesViolation):
        approve_lenses(store, BEN, version, "my own draft")


def test_the_preview_of_a_bound_draft_covers_its_use_cases_only(store):
    enrol(store, ANNA)
    load(store, contract_records())
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    draft = create_draft(store, ANNA, {}, name="clinical-strict")
    bind_profile(store, ANNA, "clinical", draft, "pending binding")
    preview = impact_preview(store, get_profile(store, draft), as_of=AS_OF)
    assert preview.total == 2 and "clinical" in preview.limited_to
    assert preview.method_line() == "Full rescore of the answers of use cases clinical only."
    other = create_draft(store, ANNA, {}, name="plain")
    assert impact_preview(store, get_profile(store, other), as_of=AS_OF).total == 4  # nothing bound yet


def test_deciding_again_under_lenses_keeps_every_answers_read_model(store):
    """A re-decision (a keyed run) under several lens groups refreshes the read models of all its answers, not only
    those of the group scored last."""
    from register.readmodels import current_scores
    from register.scoring.redecide import redecide_sources
    load(store, contract_records())
    set_lens(store, SYSTEM, "search", steps=["link", "inference"], reason="a cheap pass")
    set_lens(store, SYSTEM, "clinical", human_review=True, reason="a person sees every answer")
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    summary = redecide_sources(store, SYSTEM, ["kb-old"])
    assert summary is not None and summary.responses_scored == 4
    assert current_scores.check(store) == []
    runs = dict(store.query("SELECT response_id, run_id FROM current_scores"))
    assert set(runs.values()) == {summary.run_id}, runs
