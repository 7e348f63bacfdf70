"""Waiting for me (issue 35, item 7): ``waiting_for`` lists, per kind, what the signed-in person may settle now:
the right role sees it, its own author does not where four eyes applies, and it is gone once it is done."""

from __future__ import annotations

from datetime import timedelta

import pytest

from register import SYSTEM, Actor, Store
from register.access import identity, second_admin
from register.console.risk_acceptance import approve_acceptance, propose_acceptance
from register.db.store import utc_now
from register.errors import PermissionDenied
from register.feedback import items as feedback
from register.governance import checklist, evidence
from register.governance import registers as gov
from register.governance.checks import CHECKS
from register.ingest.approvals import approve_change
from register.ingest.pending import list_pending
from register.labels import adjudication, batches
from register.scoring import mitigation, profiles
from register.verify.proposals import Decision, decide_proposals, list_proposals
from register.verify.stored import verify_stored
from register.waiting.items import KINDS, WaitingItem, waiting_for
from tests.helpers.actors import enrol
from tests.helpers.console_records import dataset, load
from tests.helpers.feedback import import_records, two_claims
from tests.helpers.labelling import AGREED, ANNA, BEN, RITA, label_all, labelling_store
from tests.register.access.test_version_approvals import KINDS as RULE_KINDS
from tests.register.labels.test_adjudication import CONTRADICTED as CONTRADICTED_READING
from tests.register.labels.test_adjudication import PARTIAL as PARTIAL_READING
from tests.register.labels.test_adjudication import _disagreeing_batch
from tests.register.verify.test_judge_never_overwrites import AbstainingJudge
from tests.register.verify.test_lower_risk_pending import CONTRADICTED

ADA, BOB = Actor("ada", "admin"), Actor("bob", "admin")
ROSA, REX = Actor("rosa", "reviewer"), Actor("rex", "reviewer")
ANNIE, VIC = Actor("annie", "annotator"), Actor("vic", "viewer")
EVERYONE = (ADA, BOB, ROSA, REX, ANNIE, VIC)


@pytest.fixture
def register(store):
    enrol(store, *EVERYONE)
    return store


def kinds(store, actor: Actor, kind: str) -> list[WaitingItem]:
    return [item for item in waiting_for(store, actor) if item.kind == kind]


def who_sees(store, kind: str) -> set[str]:
    return {actor.name for actor in EVERYONE if kinds(store, actor, kind)}


# --- feedback --------------------------------------------------------------------------------------------------


def test_reported_feedback_waits_for_the_reviewers_but_its_reporter(register, tmp_path):
    import_records(register, tmp_path, [two_claims("r-fb")])
    by_viewer = feedback.report_feedback(register, VIC, "r-fb", "The contract ends in 2026.", 0.6, claim_id="c1")
    by_reviewer = feedback.report_feedback(register, REX, "r-fb", "Renewal is not automatic.", 0.4, claim_id="c2")
    (item,) = [i for i in kinds(register, REX, "feedback")]
    assert (item.title, item.asked_by, item.page) == (
        f"Validate feedback #{by_viewer} on r-fb claim c1: The contract ends in 2026.", "vic", "feedback")
    assert [i.title.split(" on ")[0] for i in kinds(register, ROSA, "feedback")] == [
        f"Validate feedback #{by_viewer}", f"Validate feedback #{by_reviewer}"]  # oldest first
    assert who_sees(register, "feedback") == {"ada", "bob", "rosa", "rex"}
    feedback.validate_feedback(register, ROSA, by_viewer, "review")
    feedback.reject_feedback(register, ROSA, by_reviewer, "renewal is automatic")
    assert who_sees(register, "feedback") == set()


# --- risk acceptances ------------------------------------------------------------------------------------------


def test_a_proposed_risk_acceptance_waits_for_a_second_reviewer(register, tmp_path):
    load(register, tmp_path, dataset())
    until = utc_now().date() + timedelta(days=30)
    acceptance = propose_acceptance(register, ROSA, "hc-crit", 1, "release_with_caution", "owner accepts", until)
    (item,) = kinds(register, REX, "risk_acceptance")
    assert item.title == f"Approve risk acceptance {acceptance} of hc-crit (revision 1): release with caution until " \
                         f"{until:%Y-%m-%d}"
    assert (item.asked_by, item.page) == ("rosa", "review") and item.created_at is not None
    assert who_sees(register, "risk_acceptance") == {"ada", "bob", "rex"}  # not rosa, who proposed it
    approve_acceptance(register, REX, acceptance, "agreed")
    assert who_sees(register, "risk_acceptance") == set()


# --- lower-risk label changes ----------------------------------------------------------------------------------


def test_a_held_label_change_waits_for_a_reviewer_but_its_proposer(register, tmp_path):
    import_records(register, tmp_path, [CONTRADICTED], "low.jsonl")
    verify_stored(register, ROSA, ["r-low"], AbstainingJudge())
    (proposal,) = list_proposals(register, response_id="r-low")
    decide_proposals(register, REX, [Decision(proposal["proposal_id"], "confirm", label="SUPPORTED")])
    (change,) = list_pending(register)
    (item,) = kinds(register, ROSA, "label_change")
    assert item.title.startswith(f"Approve label change {change['change_id']} on r-low: decision ")
    assert (item.asked_by, item.page) == ("rex", "review")
    assert who_sees(register, "label_change") == {"ada", "bob", "rosa"}
    approve_change(register, ROSA, change["change_id"])
    assert who_sees(register, "label_change") == set()


# --- checklist sign-offs ---------------------------------------------------------------------------------------


def _waive_all() -> dict:
    return {check.no: {"decision": "waived", "reason": "test register"} for check in CHECKS}


def test_the_newest_checklist_run_waits_for_a_signer_who_edited_none_of_its_rows(register):
    gov.save_claims(register, ROSA, gov.RowChanges(inserts=[{"values": {
        "claim_key": "k1", "statement": "a claim", "claim_type": "vendor capability", "source_ids": [],
        "verification_status": "unverified"}}]))
    older = checklist.record_run(register, REX)
    run = checklist.record_run(register, REX)
    (item,) = kinds(register, REX, "checklist_signoff")  # rex ran it but edited nothing: he may sign
    assert (item.title.split(" (")[0], item.asked_by, item.page) == (f"Sign checklist run {run}", "rex", "checklist")
    assert run > older
    assert who_sees(register, "checklist_signoff") == {"ada", "bob", "rex"}  # rosa edited a checked row
    checklist.sign(register, REX, run, _waive_all())
    assert who_sees(register, "checklist_signoff") == set()


def test_a_stale_checklist_run_waits_for_nobody(register):
    checklist.record_run(register, REX)
    assert who_sees(register, "checklist_signoff") == {"ada", "bob", "rosa", "rex"}
    gov.save_claims(register, ADA, gov.RowChanges(inserts=[{"values": {
        "claim_key": "k2", "statement": "another claim", "claim_type": "vendor capability", "source_ids": [],
        "verification_status": "unverified"}}]))
    assert who_sees(register, "checklist_signoff") == set()  # run the checklist again first


# --- drafts and versioned rules --------------------------------------------------------------------------------


def test_a_draft_profile_waits_for_another_admin(register):
    version = profiles.create_draft(register, ADA, {"weights": {"F": 0.35, "C": 0.10}})
    (item,) = kinds(register, BOB, "profile_draft")
    assert (item.title.split(" (")[0], item.asked_by, item.page) == (
        f"Publish draft scoring profile v{version}", "ada", "profiles")
    assert who_sees(register, "profile_draft") == {"bob"}
    profiles.activate(register, BOB, version, "reviewed")
    assert who_sees(register, "profile_draft") == set()


def test_a_system_draft_is_endorsed_by_one_admin_and_published_by_another(register):
    version = profiles.create_draft(register, SYSTEM, {"weights": {"F": 0.35, "C": 0.10}})
    assert who_sees(register, "profile_draft") == {"ada", "bob"}
    assert kinds(register, ADA, "profile_draft")[0].title.startswith(f"Endorse system-made draft scoring profile "
                                                                     f"v{version}")
    profiles.endorse_draft(register, ADA, version, "checked")
    assert who_sees(register, "profile_draft") == {"bob"}
    assert kinds(register, BOB, "profile_draft")[0].asked_by == "ada"
    profiles.activate(register, BOB, version, "reviewed")
    assert who_sees(register, "profile_draft") == set()


def test_a_draft_mitigation_policy_waits_for_another_admin(register):
    version = mitigation.create_policy_draft(register, BOB, {})
    (item,) = kinds(register, ADA, "profile_draft")
    assert item.title.startswith(f"Publish draft mitigation policy v{version}") and item.asked_by == "bob"
    assert who_sees(register, "profile_draft") == {"ada"}
    mitigation.activate_policy(register, ADA, version, "reviewed")
    assert who_sees(register, "profile_draft") == set()


@pytest.mark.parametrize("kind", RULE_KINDS[:3], ids=lambda k: k.name)
def test_a_pending_rules_version_waits_for_another_admin(register, kind):
    evidence.ensure_default_rules(register, SYSTEM)
    version = kind.save(register, ADA)
    (item,) = kinds(register, BOB, "rules_version")
    assert item.title.endswith(f"version {version}") and item.asked_by == "ada"
    assert item.page == ("evidence-rules" if kind.name == "evidence_rules" else "authority")
    assert who_sees(register, "rules_version") == {"bob"}
    kind.approve(register, BOB, version, "checked")
    assert who_sees(register, "rules_version") == set()


# --- role requests ---------------------------------------------------------------------------------------------


def test_an_admin_request_waits_for_the_other_admin_not_its_requester_nor_its_account(register):
    enrol(register, Actor("newbie", "reviewer"))
    grant = identity.request_admin(register, ADA, "newbie", "cover")
    (item,) = kinds(register, BOB, "role_request")
    assert (item.title, item.asked_by, item.page) == ("Approve the admin role for newbie", "ada", "users")
    assert who_sees(register, "role_request") == {"bob"}
    assert kinds(register, Actor("newbie", "reviewer"), "role_request") == []
    identity.approve_admin(register, BOB, grant)
    assert who_sees(register, "role_request") == set()


def test_the_sole_admins_own_request_waits_for_them_until_they_name_the_second_admin(store):
    enrol(store, ADA, ROSA, REX)
    identity.request_admin(store, ADA, ROSA.name, "added as admin")
    identity.request_admin(store, ADA, REX.name, "added as admin")
    titles = [i.title for i in kinds(store, ADA, "role_request")]
    assert titles == ["Name rosa the second admin: you are the only admin, so no one else can approve your request",
                      "Name rex the second admin: you are the only admin, so no one else can approve your request"]
    second_admin.name_second_admin(store, ADA, ROSA.name, "second admin")
    assert kinds(store, ADA, "role_request") == []  # rex's request waits for rosa now, the other admin
    assert [i.title for i in kinds(store, Actor(ROSA.name, "admin"), "role_request")] == [
        "Approve the admin role for rex"]


# --- adjudications ---------------------------------------------------------------------------------------------


@pytest.fixture
def lab(tmp_path, database_templates):
    def build(path) -> None:
        labelling_store(path.parent, path.name).close()

    store = Store(database_templates.copy("labelling", tmp_path / "labels.duckdb", build))
    yield store
    store.close()


def test_disagreements_wait_for_a_reviewer_who_annotated_none_of_the_batch(lab):
    batch_id = _disagreeing_batch(lab)
    enrol(lab, Actor("rhea", "reviewer"), Actor("anno-reviewer", "reviewer"))
    (item,) = kinds(lab, RITA, "adjudication")
    assert (item.title, item.asked_by, item.page) == (
        f"Adjudicate 1 disagreement(s) in labelling batch #{batch_id} (pilot)", "rita", "adjudication")
    assert kinds(lab, ANNA, "adjudication") == [] and kinds(lab, BEN, "adjudication") == []  # annotators
    adjudication.adjudicate(lab, RITA, batch_id, "r1", "r1-2", rule="escalation", reason="cautious")
    assert kinds(lab, RITA, "adjudication") == [] and kinds(lab, Actor("rhea", "reviewer"), "adjudication") == []


def test_a_reviewer_who_annotated_the_batch_is_not_asked_to_adjudicate_it(lab):
    remy = Actor("remy", "reviewer")
    enrol(lab, remy)
    batch_id = batches.create_batch(lab, RITA, "pilot", batches.Selection(use_cases=("contracts",)), ["anna", "remy"])
    for actor, reading in ((ANNA, CONTRADICTED_READING), (remy, PARTIAL_READING)):
        label_all(lab, batch_id, actor, AGREED)
        label_all(lab, batch_id, actor, {("r1", "r1-2"): reading})
    assert kinds(lab, remy, "adjudication") == []
    assert [i.title for i in kinds(lab, RITA, "adjudication")] == [
        f"Adjudicate 1 disagreement(s) in labelling batch #{batch_id} (pilot)"]


# --- the account as it is now ----------------------------------------------------------------------------------


def test_roles_are_read_from_the_account_now(register, tmp_path):
    import_records(register, tmp_path, [two_claims("r-fb")])
    feedback.report_feedback(register, VIC, "r-fb", "Wrong date.", 0.5, claim_id="c1")
    assert kinds(register, ROSA, "feedback")
    assert waiting_for(register, VIC) == [] and waiting_for(register, ANNIE) == []  # their roles settle none
    identity.set_role(register, ADA, ROSA.name, "viewer")
    with pytest.raises(PermissionDenied, match="now viewer"):  # the session's old role is refused, audited
        waiting_for(register, ROSA)
    assert waiting_for(register, Actor(ROSA.name, "viewer")) == []
    identity.set_disabled(register, ADA, REX.name, True)
    with pytest.raises(PermissionDenied, match="disabled"):
        waiting_for(register, REX)
    assert waiting_for(register, SYSTEM) == []


def test_every_kind_is_named_and_grouped_in_order(register, tmp_path):
    import_records(register, tmp_path, [two_claims("r-fb")])
    feedback.report_feedback(register, VIC, "r-fb", "Wrong date.", 0.5, claim_id="c1")
    identity.request_admin(register, BOB, ROSA.name)
    checklist.record_run(register, REX)
    found = [item.kind for item in waiting_for(register, ADA)]
    assert found == ["role_request", "checklist_signoff", "feedback"]
    assert set(found) <= set(KINDS)
