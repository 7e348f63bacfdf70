"""CLAIM's Mitigation step through the register: seed 004's decision table on stored scores, the bulk
decision equal to ``hri_core.mitigation.decide`` on every record, versioned policies published under four
eyes, and the reproduction of a stored decision."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hri_core import parse_response
from hri_core.mitigation import decide, default_mitigation_policy, mitigation_policy_from_dict
from register import SYSTEM, Store
from register.errors import FourEyesViolation
from register.governance.registers import add_row
from register.scoring import mitigation
from register.scoring.mitigation import (
    activate_policy,
    active_policy,
    apply_mitigation,
    create_policy_draft,
    default_policy_params,
    get_policy,
)
from register.scoring.profiles import get_profile
from register.scoring.reproduce import reproduce
from register.scoring.scorer import rescore
from tests.helpers.actors import ANN, BOB
from tests.helpers.fresh import fresh_store
from tests.helpers.parity import add_register, load, pure_authority
from tests.helpers.strategies import AS_OF, responses, source_registers

MITIGATION = ("mitigation_action", "mitigation_rule", "mitigation_reason", "mitigation_claim_id",
              "mitigation_policy_version")


def stored_mitigation(store: Store) -> dict[str, dict]:
    rows = store.query(f"SELECT response_id, {', '.join(MITIGATION)} FROM scores WHERE is_current")
    return {row[0]: dict(zip(MITIGATION, row[1:], strict=True)) for row in rows}


def expected(record: dict, policy=None, store: Store | None = None) -> dict:
    """``decide`` on the record, reading the Authority checks of ``store``'s register (none without one: a record
    citing no source is checked against nothing)."""
    policy = policy or default_mitigation_policy()
    response = parse_response(record)
    authority = ({r.claim_id: r.failures for r in pure_authority(store, response, AS_OF)} if store is not None
                 else None)
    decision = decide(response, policy, authority=authority)
    return {"mitigation_action": decision.action, "mitigation_rule": decision.rule,
            "mitigation_reason": decision.reason, "mitigation_claim_id": decision.claim_id,
            "mitigation_policy_version": policy.version}


def claim(cid: str, label: str, **extra) -> dict:
    return {"claim_id": cid, "labels": [label], **extra}


# --- seed 004's decision table, row by row, through import and rescore --------------------------------------

SUPPORTED_PAIR = [claim("a", "SUPPORTED", is_core=True), claim("b", "SUPPORTED", is_core=False)]

# (case, stakes, query_ambiguous, claims, expected action, expected rule, words the sentence must hold)
TABLE = [
    ("all supported", "high", None, SUPPORTED_PAIR, "answer", "answer", "every claim SUPPORTED (2 checked)"),
    ("overreach, fixable", "low", None, [claim("a", "SUPPORTED"), claim("b", "PARTIAL", is_core=True, span="s")],
     "revise", "revise-recoverable", "core claim 2 OVERREACH at Inference"),
    ("ambiguous query", "high", True, [claim("a", "UNSUPPORTED", is_core=True)], "ask", "ask",
     "the query is ambiguous and core claim 1 UNLINKED at Link"),
    ("core unlinked, not recoverable", "low", False, [claim("a", "UNSUPPORTED", is_core=True)], "abstain", "abstain",
     "not recoverable: no evidence is linked to it"),
    ("contradicted, low stakes", "low", None, [claim("a", "SUPPORTED"), claim("b", "CONTRADICTED")], "revise",
     "contradicted", "claim 2 CONTRADICTED at Inference, low stakes"),
    ("contradicted, high stakes", "high", None, [claim("a", "SUPPORTED"), claim("b", "CONTRADICTED")], "escalate",
     "contradicted", "claim 2 CONTRADICTED at Inference, high stakes"),
    ("core unlinked, high stakes", "critical", None, [claim("a", "UNSUPPORTED", is_core=True)], "escalate",
     "escalate-high-stakes", "core claim 1 UNLINKED at Link, critical stakes"),
    ("authority fails, high stakes", "high", None, [claim("a", "OUTDATED", is_core=False)], "escalate",
     "authority-high-stakes", "claim 1's source failed Authority as stale"),
    ("only non-core unlinked", "low", None, [claim("a", "SUPPORTED", is_core=True),
                                             claim("b", "UNSUPPORTED", is_core=False)],
     "answer", "non-core-unsupported", "only non-core claims failed"),
    ("no claims", "low", None, [], "escalate", "no-claims", "the answer has no claims"),
    ("no stakes given: high assumed", None, None, [claim("a", "CONTRADICTED")], "escalate", "contradicted",
     "high stakes (assumed: the response gives none)"),
]


@pytest.mark.parametrize(("case", "stakes", "ambiguous", "claims", "action", "rule", "words"), TABLE,
                         ids=[row[0] for row in TABLE])
def test_the_seed_decision_table_through_the_register(store, case, stakes, ambiguous, claims, action, rule, words):
    record = {"response_id": "r", "claims": [{**c, "claim_id": f"r-{c['claim_id']}"} for c in claims]}
    if stakes is not None:
        record["stakes"] = stakes
    if ambiguous is not None:
        record["query_ambiguous"] = ambiguous
    load(store, [record])
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    row = stored_mitigation(store)["r"]
    assert (row["mitigation_action"], row["mitigation_rule"]) == (action, rule), case
    assert row["mitigation_reason"].startswith(f"{action}: ") and words in row["mitigation_reason"], row
    assert row == expected(record), case


def test_the_same_verdicts_revise_at_low_stakes_and_escalate_at_high_stakes(store):
    """Seed 004: 'The same set of verdicts produces a revise in a low-stakes internal tool and an escalate in a
    clinical or legal context.'"""
    verdicts = [claim("1", "SUPPORTED", is_core=True), claim("2", "PARTIAL", is_core=True, span="the clause"),
                claim("3", "CONTRADICTED", is_core=False)]
    records = [{"response_id": f"{stakes}-tool", "stakes": stakes,
                "claims": [{**c, "claim_id": f"{stakes}-{c['claim_id']}"} for c in verdicts]}
               for stakes in ("low", "medium", "high", "critical")]
    load(store, records)
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    rows = stored_mitigation(store)
    assert {rid: row["mitigation_action"] for rid, row in rows.items()} == {
        "low-tool": "revise", "medium-tool": "revise", "high-tool": "escalate", "critical-tool": "escalate"}
    assert rows["low-tool"]["mitigation_claim_id"] == "low-3"  # the sentence names the contradicted claim
    for record in records:
        assert rows[record["response_id"]] == expected(record, store=store)


# --- the bulk decision equals decide on every record -------------------------------------------------------

VARIANT = {"unmarked_claims_core": False, "non_core_unsupported_action": "revise", "recoverable_when": "any",
           "recover_with_linked_evidence": False, "high_stakes": ["critical"], "unknown_stakes": "low",
           "readings": {"OUTDATED": {"verdict": "OVERREACH", "step": "Authority", "authority_failure": "stale"},
                        "SUPPORTED": {"verdict": "UNLINKED", "step": "Link"}}}


def _decided_in_fresh_db(records: list[dict], overrides: dict | None, register: dict) -> tuple[dict, dict]:
    with tempfile.TemporaryDirectory() as folder:
        store = fresh_store(Path(folder) / "mitigation.duckdb")  # a copy of a migrated file
        try:
            load(store, records)
            add_register(store, register)
            policy = active_policy(store)
            if overrides is not None:
                version = create_policy_draft(store, SYSTEM, overrides)
                activate_policy(store, SYSTEM, version, "test variant")
                policy = get_policy(store, version)
            from register.scoring.profiles import ensure_default_profile
            ensure_default_profile(store, SYSTEM)
            rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
            return stored_mitigation(store), {r["response_id"]: expected(r, policy, store) for r in records}
        finally:
            store.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=responses(min_size=1, max_size=25, min_claims=0, max_claims=6), register=source_registers())
def test_bulk_mitigation_equals_decide_on_random_records(records, register):
    """With a random source register: the bulk path reads each claim's Authority failures as ``decide`` does."""
    for overrides in (None, VARIANT):
        rows, want = _decided_in_fresh_db(records, overrides, register)
        for record in records:
            assert rows[record["response_id"]] == want[record["response_id"]], (record, overrides, register)


def test_decide_runs_once_per_distinct_input_tuple(store):
    """Ten responses with the same decision-relevant content (whatever their ids, texts, supported claims'
    other fields) are one tuple; another position of the failing claim is another."""
    same = [{"response_id": f"same-{i}", "stakes": "low", "claims": [
        {"claim_id": f"same-{i}-1", "labels": ["SUPPORTED"], "text": f"text {i}", "criticality": 1 + i % 3},
        {"claim_id": f"same-{i}-2", "labels": ["UNSUPPORTED"], "is_core": True}]} for i in range(10)]
    moved = {"response_id": "moved", "stakes": "low", "claims": [
        {"claim_id": "moved-1", "labels": ["UNSUPPORTED"], "is_core": True},
        {"claim_id": "moved-2", "labels": ["SUPPORTED"]}]}
    # neutral claims after the last failing one count in no sentence: the same tuple as "moved"
    trailing = {**moved, "response_id": "trailing", "claims": [
        {"claim_id": "trailing-1", "labels": ["UNSUPPORTED"], "is_core": True},
        *({"claim_id": f"trailing-{k}", "labels": ["SUPPORTED"]} for k in (2, 3, 4))]}
    # every claim neutral: answered whatever the stakes, one tuple per claim count
    answered = [{"response_id": f"ok-{stakes}", "stakes": stakes, "claims": [
        {"claim_id": f"ok-{stakes}-{k}", "labels": ["SUPPORTED"]} for k in (1, 2)]} for stakes in ("low", "critical")]
    load(store, [*same, moved, trailing, *answered])
    run = rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF).run_id

    def fn(tx):
        from register.db.store import Change
        return Change("score_run", str(run), None, {}, result=apply_mitigation(tx, run, active_policy(tx)))

    assert store.write(SYSTEM, "scores.rescore", fn) == 3
    rows = stored_mitigation(store)
    for record in (*same, moved, trailing, *answered):
        assert rows[record["response_id"]] == expected(record, store=store), record["response_id"]
    assert rows["ok-critical"]["mitigation_reason"] == (
        "answer: every claim SUPPORTED (2 checked) and none failed Authority")
    assert {rows[f"same-{i}"]["mitigation_claim_id"] for i in range(10)} == {f"same-{i}-2" for i in range(10)}
    assert rows["moved"]["mitigation_reason"] == ("abstain: core claim 1 UNLINKED at Link, low stakes, "
                                                  "not recoverable: no evidence is linked to it")


def test_evidence_linked_through_the_retrieved_context_makes_an_unlinked_claim_recoverable(store):
    base = {"stakes": "low", "retrieved_context": [{"id": "chunk-1", "text": "...", "source_id": "policy-7"}]}
    records = [{**base, "response_id": f"by-{how}", "claims": [
        {"claim_id": f"by-{how}-1", "labels": ["UNSUPPORTED"], "is_core": True, "source_id": source}]}
        for how, source in (("chunk", "chunk-1"), ("source", "policy-7"), ("none", "elsewhere"))]
    records.append({"response_id": "blank-span", "stakes": "low", "claims": [
        {"claim_id": "blank-1", "labels": ["UNSUPPORTED"], "is_core": True, "span": " \u00a0\u3000"}]})
    load(store, records)
    for source in ("chunk-1", "policy-7", "elsewhere"):  # registered, current and strong: Authority passes
        add_row(store, SYSTEM, "sources", {"source_id": source, "title": source, "source_type": "official framework",
                                           "authority_tier": 1, "access_date": "2026-01-01"})
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    rows = stored_mitigation(store)
    assert {rid: row["mitigation_action"] for rid, row in rows.items()} == {
        "by-chunk": "revise", "by-source": "revise", "by-none": "abstain", "blank-span": "abstain"}
    for record in records:
        assert rows[record["response_id"]] == expected(record, store=store)


# --- versions, publishing, reproduction ---------------------------------------------------------------------


def test_migration_009_stores_version_1_as_hri_core_defines_it(store):
    row = store.one("SELECT name, status, params, fingerprint FROM mitigation_policies WHERE policy_version = 1")
    default = default_mitigation_policy()
    assert (row["name"], row["status"]) == (default.name, "active")
    assert json.loads(row["params"]) == default_policy_params()
    assert row["fingerprint"] == default.fingerprint()
    assert active_policy(store) == default


def test_a_policy_draft_is_published_under_four_eyes_and_decides_the_next_run(store):
    load(store, [{"response_id": "nc", "stakes": "low", "claims": [
        {"claim_id": "nc-1", "labels": ["SUPPORTED"]}, {"claim_id": "nc-2", "labels": ["PARTIAL"], "is_core": False}]}])
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    assert stored_mitigation(store)["nc"]["mitigation_action"] == "answer"
    version = create_policy_draft(store, ANN, {"non_core_unsupported_action": "revise"})
    with pytest.raises(FourEyesViolation):
        activate_policy(store, ANN, version, "the table's 'Some claims ... but fixable' row")
    activate_policy(store, BOB, version, "the table's 'Some claims ... but fixable' row")
    assert [r[0] for r in store.query("SELECT status FROM mitigation_policies ORDER BY policy_version")] == [
        "archived", "active"]
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    row = stored_mitigation(store)["nc"]
    assert (row["mitigation_action"], row["mitigation_policy_version"]) == ("revise", version)
    actions = [a for (a,) in store.query("SELECT action FROM audit_events WHERE entity_type = 'mitigation_policy' "
                                         "ORDER BY seq")]
    assert actions[0] == "mitigation_policy.create_draft" and actions[-1] == "mitigation_policy.publish"


@pytest.mark.tampers
def test_reproduce_recomputes_the_stored_decision_and_names_a_difference(store):
    record = {"response_id": "rep", "stakes": "high", "claims": [
        {"claim_id": "rep-1", "labels": ["SUPPORTED"]}, {"claim_id": "rep-2", "labels": ["CONTRADICTED"]}]}
    load(store, [record])
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    first = reproduce(store, "rep")
    assert first.matches and first.mitigation is not None and first.mitigation.action == "escalate"
    store.write(SYSTEM, "test.tamper", lambda tx: (tx.execute(
        "UPDATE scores SET mitigation_action = 'answer' WHERE response_id = 'rep'"), _change())[1])
    second = reproduce(store, "rep")
    assert not second.matches
    assert second.differences == ("mitigation_action: stored 'answer', recomputed 'escalate'",)


def test_an_invalid_policy_draft_names_the_field(store):
    from hri_core.mitigation import MitigationPolicyError
    with pytest.raises(MitigationPolicyError) as caught:
        create_policy_draft(store, SYSTEM, {"high_stakes": ["extreme"]})
    assert "high_stakes" in str(caught.value)
    assert store.scalar("SELECT count(*) FROM mitigation_policies") == 1
    assert mitigation_policy_from_dict({}) == default_mitigation_policy()


def _change():
    from register.db.store import Change
    return Change("scores", "rep", None, {"tampered": True})


def test_mitigation_in_slices_decides_each_response_as_in_one_pass(store, monkeypatch):
    """Ten million responses are decided in slices by response key (one pass outgrew a 4 GB memory limit):
    slices of 7 decide every response as one slice of all does, and each distinct tuple is decided once."""
    from hri_core.synthetic import generate_responses
    from register.scoring import mitigation

    records = list(generate_responses(120, seed=11))
    load(store, records)
    rescore(store, SYSTEM, get_profile(store, 1))  # one slice: 120 responses
    whole = stored_mitigation(store)
    assert len(whole) == 120 and len({m["mitigation_action"] for m in whole.values()}) > 1
    calls = []
    real = mitigation.decide_tuples
    monkeypatch.setattr(mitigation, "decide_tuples", lambda policy, tuples: calls.append(len(tuples)) or real(
        policy, tuples))
    monkeypatch.setattr(mitigation, "MITIGATION_SLICE", 7)
    rescore(store, SYSTEM, get_profile(store, 1))
    assert stored_mitigation(store) == whole
    assert len(calls) >= 120 // 7  # one call per slice ...
    distinct = store.scalar("SELECT count(DISTINCT (mitigation_action, mitigation_rule, mitigation_reason)) "
                            "FROM scores WHERE is_current")
    assert sum(calls) >= distinct  # ... and no tuple decided twice: repeated tuples are remembered
    assert sum(calls) < 120
    for record in records[:10]:  # and each is what decide says of the record itself
        assert whole[record["response_id"]] == expected(record, store=store)


def test_claims_past_the_ninth_are_placed_by_their_position_not_their_text(store):
    """Only claims that are not neutral enter a tuple, each as ``"claim_idx:token"``, sorted as text ("10:..."
    before "2:..."): the decision must still see each at its own position, and two responses whose failing
    claims sit at other positions (or the same positions with neutral claims between) are other tuples."""
    def record(rid: str, failing: dict[int, str], count: int = 12, **extra) -> dict:
        return {"response_id": rid, "stakes": "low", **extra, "claims": [
            claim(f"{rid}-{k + 1}", failing.get(k, "SUPPORTED"), is_core=k in failing) for k in range(count)]}

    records = [record("late", {2: "UNSUPPORTED", 10: "CONTRADICTED"}),
               record("swapped", {2: "CONTRADICTED", 10: "UNSUPPORTED"}),
               record("early", {1: "UNSUPPORTED", 10: "CONTRADICTED"}),
               record("eleventh", {10: "UNSUPPORTED"}), record("third", {2: "UNSUPPORTED"}),
               record("neutral", {}, count=11), record("neutral-high", {}, count=11, query_ambiguous=True)]
    load(store, records)
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    rows = stored_mitigation(store)
    for rec in records:
        assert rows[rec["response_id"]] == expected(rec), rec["response_id"]
    assert rows["eleventh"]["mitigation_claim_id"] == "eleventh-11"
    assert rows["third"]["mitigation_claim_id"] == "third-3"
    assert rows["neutral"]["mitigation_reason"] == rows["neutral-high"]["mitigation_reason"]
    assert "11 checked" in rows["neutral"]["mitigation_reason"]


# --- the mitigation reads the register's Authority checks (seed 004: answer only when authority passes) -------


def test_answers_on_superseded_forbidden_and_weak_sources_are_not_answered(store, tmp_path):
    """Before issue 33 every one of these was stored as "answer: every claim SUPPORTED ... none failed Authority"."""
    from tests.helpers.authority import load_authority_register
    load_authority_register(store, tmp_path)
    rows = stored_mitigation(store)
    for rid in ("au-stale", "au-expired", "au-restricted", "au-weak", "au-unknown"):
        assert rows[rid]["mitigation_action"] != "answer", (rid, rows[rid])
        assert "failed Authority" in rows[rid]["mitigation_reason"] or "Authority" in rows[rid]["mitigation_reason"]
    assert rows["au-ok"]["mitigation_action"] == "answer"
    assert "stale" in rows["au-stale"]["mitigation_reason"]
    assert "not allowed" in rows["au-restricted"]["mitigation_reason"]
    assert "insufficient authority" in rows["au-weak"]["mitigation_reason"]


_TOKEN_LABELS = ("SUPPORTED", "PARTIAL", "UNSUPPORTED", "CONTRADICTED", "OUTDATED", "ACCESS_GAP", "OUT_OF_SCOPE",
                 "VALIDATED_NEGATIVE_FEEDBACK", "NOT_A_LABEL")


@st.composite
def _claim_tokens(draw):
    """A tuple's claim tokens as ``mitigation_inputs`` writes them, unknown and conflicting label sets included."""
    tokens = []
    for _ in range(draw(st.integers(0, 7))):
        if draw(st.booleans()):
            tokens.append(mitigation.NEUTRAL_TOKEN)
            continue
        labels = draw(st.lists(st.sampled_from(_TOKEN_LABELS), min_size=1, max_size=2))
        words = draw(st.lists(st.sampled_from(("stale", "not allowed", "unknown source")), max_size=2, unique=True))
        tokens.append(f"{','.join(labels)}/{draw(st.sampled_from('CN?'))}/{draw(st.sampled_from('L-'))}/"
                      + "+".join(words))
    return tokens


@settings(max_examples=150, deadline=None)
@given(batch=st.lists(st.tuples(st.sampled_from((None, "low", "medium", "high", "critical")),
                                st.sampled_from((None, True, False)), _claim_tokens()), min_size=1, max_size=12))
def test_decide_tuples_reads_each_claim_once_and_decides_as_decide_does(batch):
    """The bulk decision reads each distinct claim token once and places it; every tuple's action, rule, sentence
    and named claim equal ``decide`` on the whole canonical response (the way it was decided before), and a tuple
    this version cannot read still fails closed."""
    policy = default_mitigation_policy()
    tuples = [(str(i), stakes, ambiguous, tokens) for i, (stakes, ambiguous, tokens) in enumerate(batch)]
    got = mitigation.decide_tuples(policy, tuples).to_pylist()
    for (sig, stakes, ambiguous, tokens), row in zip(tuples, got, strict=True):
        assert row["sig"] == sig
        try:
            response, authority = mitigation._canonical_response(stakes, ambiguous, list(tokens), "SUPPORTED")
            expected = decide(response, policy, authority=authority)
        except ValueError:
            assert (row["action"], row["rule"]) == ("escalate", mitigation.UNREADABLE_RULE)
            continue
        assert (row["action"], row["rule"], row["reason"]) == (expected.action, expected.rule, expected.reason)
        assert row["position"] == (int(expected.claim_id[1:]) if expected.claim_id else None)


def test_the_tuples_are_read_and_decided_with_the_collector_paused_and_it_is_back_on_after(store, monkeypatch):
    """The decision's Python pass over its distinct tuples pauses the cyclic collector (``register.collector``):
    it ran over and over during the pass, half again its CPU at 100,000 answers (docs/performance.md)."""
    import gc

    seen = []
    real = mitigation.decide_tuples

    def watched(policy, tuples):
        seen.append((gc.isenabled(), len(tuples)))
        return real(policy, tuples)

    monkeypatch.setattr(mitigation, "decide_tuples", watched)
    load(store, [{"response_id": f"r-{i}", "stakes": "low",
                  "claims": [claim(f"r-{i}-1", "UNSUPPORTED", is_core=True)]} for i in range(3)])
    assert gc.isenabled()
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF)
    assert seen and all(not enabled for enabled, _ in seen), seen
    assert gc.isenabled()
    assert stored_mitigation(store)["r-0"]["mitigation_action"] == "abstain"
