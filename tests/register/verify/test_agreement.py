"""Judges against the people who decided their proposals: kappa, false clearance by threshold, and a threshold
chosen from the curve as the profile's next version."""

from __future__ import annotations

import json

import pytest

from hri_core.vocabulary import Label
from register.verify.agreement import judge_agreement, profile_with_threshold
from register.verify.judge_cli import judge_for, load_profile
from register.verify.pipeline import read_inputs, verify
from register.verify.proposals import Decision, decide_proposals, list_proposals
from tests.helpers.actors import ANNOTATOR, enrol

CONTEXT = ["The Nile flows north and flows into the Mediterranean Sea at Alexandria. The Amazon flows into the "
           "Atlantic Ocean."]
RECORDS = [{"response_id": f"r-{i}", "answer": answer, "retrieved_context": CONTEXT} for i, answer in enumerate([
    "The Nile flows into the Mediterranean Sea.", "The Amazon flows into the Atlantic Ocean.",
    "The Nile flows into the Atlantic Ocean.", "Bananas are the largest export of Egypt."])]


def test_agreement_counts_the_people_s_decisions_against_the_judge(store):
    verify(store, ANNOTATOR, list(read_inputs(json.dumps(r) for r in RECORDS)),
           judge_for(load_profile("offline-default")), source_name="t")
    rows = {r["response_id"]: r for r in list_proposals(store)}
    assert rows["r-0"]["label"] == rows["r-1"]["label"] == "SUPPORTED"
    cleared_wrongly = rows["r-2"]["label"] == "SUPPORTED"  # same words, another ocean: word overlap may clear it
    decide_proposals(store, ANNOTATOR, [
        Decision(rows["r-0"]["proposal_id"], "confirm"),
        Decision(rows["r-1"]["proposal_id"], "reject"),                       # a person refuses this clearance
        Decision(rows["r-2"]["proposal_id"], "confirm", Label.CONTRADICTED)])
    (entry,) = judge_agreement(store)
    assert entry["judge_profile"] == "offline-default@2" and entry["decided"] == 3
    # people: r-0 supported; r-1 not (rejected clearance); r-2 not (contradicted)
    assert entry["false_clearance"]["total"] == 2
    assert entry["false_clearance"]["count"] == 1 + cleared_wrongly
    low = entry["curve"][0]
    assert low["threshold"] == 0.5 and low["supported_recall"]["total"] == 1
    top = entry["curve"][-1]
    assert top["coverage"]["count"] <= low["coverage"]["count"]
    assert top["false_clearance"]["count"] <= low["false_clearance"]["count"]


def test_no_decision_no_agreement(store):
    assert judge_agreement(store) == []


def test_a_chosen_threshold_is_the_profile_s_next_version():
    profile = load_profile("offline-default")
    chosen = profile_with_threshold(profile, 0.8, "false clearance 0/12 at 0.80 on 40 decided proposals")
    assert chosen.key == "offline-default@3" and chosen.thresholds["supported"] == 0.8
    assert chosen.thresholds["abstain"] == profile.thresholds["abstain"] and "threshold_v3" in chosen.provenance
    assert profile.measured and chosen.measured == {}  # the old threshold's figures do not carry over
    with pytest.raises(ValueError):
        profile_with_threshold(profile, 0.0, "")


def test_the_agreement_command_prints_the_curve_and_writes_a_new_profile_version(register_cli, tmp_path):
    from register import Store

    run = register_cli()
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n")
    assert run("verify", path, "--quiet").returncode == 0
    store = Store(run.db)
    try:
        enrol(store, ANNOTATOR)
        first = list_proposals(store)[0]
        decide_proposals(store, ANNOTATOR, [Decision(first["proposal_id"], "confirm")])
    finally:
        store.close()
    shown = run("judge-agreement")
    assert shown.returncode == 0 and "offline-default@2 (offline-lexical): 1 decided" in shown.stdout
    assert ">= 0.95: coverage" in shown.stdout
    out = tmp_path / "offline-default-2.json"
    written = run("judge-agreement", "--threshold", "0.9", "--out", out)
    assert written.returncode == 0, written.stderr
    assert load_profile(str(out)).key == "offline-default@3"
    assert load_profile(str(out)).thresholds["supported"] == 0.9
