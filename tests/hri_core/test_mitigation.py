"""CLAIM's Mitigation step (seed 004): the decision table as parametrised cases, the seed's ``decide``
reproduced exactly on every small combination of its verdicts, stakes-awareness (the same verdicts
revise at low stakes and escalate at high stakes), the table's authority row, the policy as data, and
the one sentence naming the step that failed."""

from __future__ import annotations

import itertools
import random

import pytest

from hri_core import parse_response
from hri_core.mitigation import (
    MITIGATION_ACTIONS,
    RULES,
    MitigationPolicyError,
    decide,
    default_mitigation_policy,
    mitigation_policy_from_dict,
    read_claims,
)
from hri_core.vocabulary import LABELS, STAKES

# CLAIM verdict -> the HRI label that reads as it (DOMAIN.md section 5)
AS_LABEL = {"SUPPORTED": "SUPPORTED", "OVERREACH": "PARTIAL", "UNLINKED": "UNSUPPORTED",
            "CONTRADICTED": "CONTRADICTED"}


def seed_decide(claims, query_ambiguous: bool, stakes: str, recoverable) -> str:
    """Seed 004's ``decide``, transcribed line for line (claims: objects with ``label`` and ``is_core``)."""
    verdicts = [c.label for c in claims]
    if any(v == "CONTRADICTED" for v in verdicts):
        return "ESCALATE" if stakes == "high" else "REVISE"
    core_unsupported = [c for c in claims
                        if c.is_core and c.label in ("UNLINKED", "OVERREACH")]
    if not core_unsupported:
        return "ANSWER"
    if query_ambiguous:
        return "ASK"
    if stakes == "high":
        return "ESCALATE"
    if recoverable(core_unsupported):
        return "REVISE"
    return "ABSTAIN"


class SeedClaim:
    def __init__(self, label: str, is_core: bool, linked: bool) -> None:
        self.label, self.is_core, self.linked = label, is_core, linked


def policy_recoverable(core_unsupported) -> bool:
    """The default policy's reading of the seed's undefined ``recoverable``: every core unsupported claim
    is OVERREACH (a span to hedge to) or has evidence linked to it."""
    return all(c.label == "OVERREACH" or c.linked for c in core_unsupported)


def response_of(claims: list[SeedClaim], stakes: str | None, ambiguous: bool | None = None, **extra):
    record = {"response_id": "r", "claims": [
        {"labels": [AS_LABEL[c.label]], "is_core": c.is_core, **({"span": "quoted evidence"} if c.linked else {})}
        for c in claims], **extra}
    if stakes is not None:
        record["stakes"] = stakes
    if ambiguous is not None:
        record["query_ambiguous"] = ambiguous
    return parse_response(record)


def all_claim_sets(max_claims: int):
    options = [SeedClaim(v, core, linked) for v in AS_LABEL for core in (True, False) for linked in (True, False)]
    for n in range(1, max_claims + 1):
        yield from itertools.product(options, repeat=n)


def test_default_policy_reproduces_the_seed_decide_on_every_small_case():
    checked = 0
    for claims in all_claim_sets(2):
        for stakes, ambiguous in itertools.product(("low", "medium", "high"), (False, True)):
            expected = seed_decide(claims, ambiguous, stakes, policy_recoverable).lower()
            assert decide(response_of(list(claims), stakes, ambiguous)).action == expected, (
                [(c.label, c.is_core, c.linked) for c in claims], stakes, ambiguous)
            checked += 1
    assert checked == (16 + 16 ** 2) * 6


def test_default_policy_reproduces_the_seed_decide_on_random_larger_cases():
    rng = random.Random(20261201)
    options = [SeedClaim(v, core, linked) for v in AS_LABEL for core in (True, False) for linked in (True, False)]
    for _ in range(300):
        claims = [rng.choice(options) for _ in range(rng.randint(3, 7))]
        stakes, ambiguous = rng.choice(("low", "medium", "high")), rng.random() < 0.3
        expected = seed_decide(claims, ambiguous, stakes, policy_recoverable).lower()
        assert decide(response_of(claims, stakes, ambiguous)).action == expected


# --- the seed's decision table, row by row ------------------------------------------------------------

C = SeedClaim


@pytest.mark.parametrize(("row", "claims", "stakes", "ambiguous", "action"), [
    ("All claims SUPPORTED, authority passes", [C("SUPPORTED", True, True), C("SUPPORTED", False, False)],
     "high", False, "answer"),
    ("Some claims OVERREACH, fixable", [C("SUPPORTED", True, True), C("OVERREACH", True, False)],
     "low", False, "revise"),
    ("Some claims UNLINKED, fixable (evidence linked)", [C("UNLINKED", True, True)], "medium", False, "revise"),
    ("Query was ambiguous", [C("UNLINKED", True, False)], "high", True, "ask"),
    ("Core claims UNLINKED and not recoverable", [C("UNLINKED", True, False), C("SUPPORTED", True, True)],
     "low", False, "abstain"),
    ("CONTRADICTED, low stakes", [C("CONTRADICTED", False, True)], "low", False, "revise"),
    ("CONTRADICTED, high stakes", [C("CONTRADICTED", False, True)], "high", False, "escalate"),
    ("core unsupported at high stakes", [C("OVERREACH", True, True)], "high", False, "escalate"),
])
def test_decision_table_rows(row, claims, stakes, ambiguous, action):
    decision = decide(response_of(claims, stakes, ambiguous))
    assert decision.action == action, row
    assert decision.reason.startswith(f"{action}: ")


@pytest.mark.parametrize("verdicts", [
    ["CONTRADICTED"],
    ["SUPPORTED", "CONTRADICTED", "OVERREACH"],
    ["OVERREACH"],
    ["UNLINKED", "SUPPORTED"],
])
def test_the_same_verdicts_revise_at_low_stakes_and_escalate_at_high_stakes(verdicts):
    claims = [C(v, True, True) for v in verdicts]  # linked: recoverable at low stakes
    assert decide(response_of(claims, "low")).action == "revise"
    assert decide(response_of(claims, "high")).action == "escalate"
    assert decide(response_of(claims, "critical")).action == "escalate"  # critical counts as high


def test_high_stakes_plus_authority_failure_escalates_and_low_stakes_revises():
    record = {"response_id": "r", "claims": [{"labels": ["SUPPORTED"], "is_core": True},
                                             {"labels": ["OUTDATED"], "is_core": False}]}
    high = decide(parse_response({**record, "stakes": "high"}))
    assert (high.action, high.rule) == ("escalate", "authority-high-stakes")
    assert high.reason == "escalate: claim 2's source failed Authority as stale, high stakes"
    low = decide(parse_response({**record, "stakes": "low"}))
    assert (low.action, low.rule) == ("revise", "authority")  # the table answers only "if authority passes"


def test_register_authority_failures_count_like_labels():
    record = parse_response({"response_id": "r", "stakes": "high", "claims": [
        {"labels": ["SUPPORTED"]}, {"labels": ["SUPPORTED"]}, {"labels": ["CONTRADICTED"]}]})
    decision = decide(record, authority={"r-3": ["stale"]})
    # the example sentence of issue 12, word for word
    assert decision.reason == ("escalate: claim 3 CONTRADICTED at Inference, high stakes, "
                               "source failed Authority as stale")
    assert decision.claim_id == "r-3"
    clean = decide(record.model_copy(update={"claims": record.claims[:2]}), authority={"r-1": ["not allowed"]})
    assert (clean.action, clean.rule) == ("escalate", "authority-high-stakes")


@pytest.mark.parametrize(("failure", "action"), [
    ("stale", "revise"),  # re-source it from the current version
    ("not allowed", "abstain"),  # the evidence may not be used: say so
    ("unknown source", "abstain"),
])
def test_a_core_claim_failing_authority_at_low_stakes(failure, action):
    record = parse_response({"response_id": "r", "stakes": "low", "claims": [{"labels": ["SUPPORTED"],
                                                                             "is_core": True}]})
    decision = decide(record, authority={"r-1": [failure]})
    assert decision.action == action
    assert f"core claim 1's source failed Authority as {failure}" in decision.reason


# --- how labels read in CLAIM's terms -------------------------------------------------------------------

@pytest.mark.parametrize(("label", "verdict", "step", "failure"), [
    ("SUPPORTED", "SUPPORTED", None, None),
    ("PARTIAL", "OVERREACH", "Inference", None),
    ("UNSUPPORTED", "UNLINKED", "Link", None),
    ("CONTRADICTED", "CONTRADICTED", "Inference", None),
    ("OUTDATED", "SUPPORTED", None, ("Authority", "stale")),
    ("ACCESS_GAP", "SUPPORTED", None, ("Authority", "not allowed")),
    ("OUT_OF_SCOPE", "SUPPORTED", None, ("Scope", "outside the approved scope")),
    ("VALIDATED_NEGATIVE_FEEDBACK", "CONTRADICTED", "Feedback", None),
])
def test_each_label_reads_as_a_claim_verdict(label, verdict, step, failure):
    (reading,) = read_claims(parse_response({"response_id": "r", "claims": [{"labels": [label]}]}),
                             default_mitigation_policy())
    assert (reading.verdict, reading.step) == (verdict, step)
    assert [(f.step, f.failure) for f in reading.authority_failures] == ([failure] if failure else [])


def test_a_claim_with_several_labels_takes_the_worst_verdict_and_every_failure():
    (reading,) = read_claims(parse_response({"response_id": "r", "claims": [
        {"labels": ["PARTIAL", "OUTDATED", "CONTRADICTED", "ACCESS_GAP"]}]}), default_mitigation_policy())
    assert (reading.verdict, reading.step) == ("CONTRADICTED", "Inference")
    assert [f.failure for f in reading.authority_failures] == ["stale", "not allowed"]


def test_validated_feedback_reads_as_a_confirmed_contradiction():
    decision = decide(parse_response({"response_id": "r", "stakes": "medium", "claims": [
        {"labels": ["VALIDATED_NEGATIVE_FEEDBACK"]}]}))
    assert decision.reason == "revise: claim 1 CONTRADICTED by validated feedback, medium stakes"


# --- fail-closed defaults and their policy switches -----------------------------------------------------

def test_missing_stakes_are_taken_as_high_and_said_so():
    decision = decide(response_of([C("UNLINKED", True, True)], None))
    assert (decision.action, decision.stakes, decision.stakes_assumed) == ("escalate", "high", True)
    assert "high stakes (assumed: the response gives none)" in decision.reason
    lenient = mitigation_policy_from_dict({"unknown_stakes": "low"})
    assert decide(response_of([C("UNLINKED", True, True)], None), lenient).action == "revise"


def test_claims_not_marked_core_count_as_core_unless_the_policy_says_otherwise():
    record = parse_response({"response_id": "r", "stakes": "low", "claims": [{"labels": ["UNSUPPORTED"]}]})
    assert decide(record).action == "abstain"
    assert decide(record, mitigation_policy_from_dict({"unmarked_claims_core": False})).action == "answer"


def test_a_response_without_claims_is_never_answered_by_default():
    record = parse_response({"response_id": "r", "stakes": "low", "claims": []})
    decision = decide(record)
    assert (decision.action, decision.rule) == ("escalate", "no-claims")
    assert decide(record, mitigation_policy_from_dict({"no_claims_action": "abstain"})).action == "abstain"


def test_non_core_unsupported_claims_answer_like_the_seed_code_or_revise_like_its_table():
    record = response_of([C("SUPPORTED", True, True), C("UNLINKED", False, False)], "low")
    seed = decide(record)
    assert (seed.action, seed.rule) == ("answer", "non-core-unsupported")
    assert seed.reason == ("answer: only non-core claims failed (claim 2 UNLINKED at Link); "
                           "every core claim is SUPPORTED")
    table = mitigation_policy_from_dict({"non_core_unsupported_action": "revise"})
    assert decide(record, table).action == "revise"


def test_recoverable_when_all_or_any():
    record = response_of([C("OVERREACH", True, False), C("UNLINKED", True, False)], "low")
    assert decide(record).action == "abstain"  # one core claim has nothing to recover from
    assert decide(record, mitigation_policy_from_dict({"recoverable_when": "any"})).action == "revise"


def test_linked_evidence_is_a_span_or_a_retrieved_chunk():
    base = {"response_id": "r", "stakes": "low", "retrieved_context": [{"id": "k1", "text": "t", "source_id": "s7"}]}
    for linked_claim in ({"source_id": "k1"}, {"source_id": "s7"}, {"span": "exact words"}):
        record = parse_response({**base, "claims": [{"labels": ["UNSUPPORTED"], "is_core": True, **linked_claim}]})
        assert decide(record).action == "revise", linked_claim
    unlinked = parse_response({**base, "claims": [{"labels": ["UNSUPPORTED"], "is_core": True, "source_id": "zz"}]})
    assert decide(unlinked).action == "abstain"
    no_linking = mitigation_policy_from_dict({"recover_with_linked_evidence": False})
    record = parse_response({**base, "claims": [{"labels": ["UNSUPPORTED"], "is_core": True, "span": "w"}]})
    assert decide(record, no_linking).action == "abstain"


# --- sentences ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("claims", "stakes", "ambiguous", "reason"), [
    ([C("SUPPORTED", True, True)] * 2, "low", False,
     "answer: every claim SUPPORTED (2 checked) and none failed Authority"),
    ([C("SUPPORTED", True, True), C("OVERREACH", True, False)], "low", False,
     "revise: core claim 2 OVERREACH at Inference, low stakes, recoverable: hedge it to its span"),
    ([C("UNLINKED", True, False), C("UNLINKED", True, False), C("UNLINKED", True, False)], "medium", False,
     "abstain: core claim 1 UNLINKED at Link (and 2 more core claims), medium stakes, not recoverable: "
     "no evidence is linked to it"),
    ([C("UNLINKED", True, False)], "low", True, "ask: the query is ambiguous and core claim 1 UNLINKED at Link"),
    ([C("CONTRADICTED", True, True), C("CONTRADICTED", True, True)], "high", False,
     "escalate: claim 1 CONTRADICTED at Inference (and 1 more contradicted claim), high stakes"),
])
def test_one_sentence_names_the_step_that_failed(claims, stakes, ambiguous, reason):
    decision = decide(response_of(claims, stakes, ambiguous))
    assert decision.reason == reason
    assert decision.reason.count(". ") == 0  # one sentence


def test_decision_records_policy_and_claims():
    decision = decide(response_of([C("OVERREACH", True, True)], "low"))
    assert (decision.policy_name, decision.policy_version, decision.rule) == ("claim-seed", 1, "revise-recoverable")
    assert decision.action in MITIGATION_ACTIONS and decision.rule in RULES
    assert [c.verdict for c in decision.claims] == ["OVERREACH"]


# --- the policy as data ----------------------------------------------------------------------------------

def test_policy_defaults_cover_every_label_and_stakes_level():
    policy = default_mitigation_policy()
    assert set(policy.readings) == set(LABELS)
    assert set(policy.high_stakes) | {"low", "medium"} == set(STAKES)


def test_partial_policy_overrides_merge_label_by_label():
    policy = mitigation_policy_from_dict({"version": 2, "readings": {"OUTDATED": {"verdict": "UNLINKED",
                                                                                   "step": "Authority"}}})
    assert policy.version == 2 and policy.readings["OUTDATED"].verdict == "UNLINKED"
    assert policy.readings["PARTIAL"] == default_mitigation_policy().readings["PARTIAL"]
    assert policy.fingerprint() != default_mitigation_policy().fingerprint()
    assert mitigation_policy_from_dict({"name": "copy"}).fingerprint() == default_mitigation_policy().fingerprint()


@pytest.mark.parametrize(("override", "fields"), [
    ({"readings": {"PARTIAL": {"verdict": "MAYBE", "step": "Inference"}}}, ["readings.PARTIAL.verdict"]),
    ({"readings": {"PARTIAL": {"verdict": "OVERREACH"}}}, ["readings.PARTIAL.step"]),
    ({"high_stakes": ["huge"]}, ["high_stakes[0]"]),
    ({"no_claims_action": "shrug"}, ["no_claims_action"]),
    ({"colour": "red"}, ["colour"]),
])
def test_bad_policies_name_the_field(override, fields):
    with pytest.raises(MitigationPolicyError) as caught:
        mitigation_policy_from_dict(override)
    assert [p["field"] for p in caught.value.as_dict()["problems"]] == fields
