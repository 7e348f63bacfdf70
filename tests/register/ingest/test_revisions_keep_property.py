"""Revisions keep what they do not decide (issue 33, item 4), as a property: every revision path made in the
register -- agreed batch labels and adjudication (``_resolved_claims``), the verification confirm / correct form
(``Decision`` through ``revised_claim``), feedback validation and resolution -- is driven with random claims,
and every field the path does not decide comes out as it went in. ``contradicted_by`` follows the labels (it
belongs to a CONTRADICTED claim only), a validated-feedback label stays (only the feedback workflow sets it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as hs

from hri_core import Claim, parse_response
from hri_core.vocabulary import CATEGORIES, Label
from register.feedback.items import settled_claim, validated_claim
from register.ingest.revise import revised_claim
from register.labels.adjudication import _resolved_claims
from register.verify.proposals import Decision

FEEDBACK = Label.VALIDATED_NEGATIVE_FEEDBACK.value
PLAIN_LABELS = tuple(label.value for label in Label if label is not Label.VALIDATED_NEGATIVE_FEEDBACK)
FIELDS = tuple(Claim.model_fields)
_word = hs.text("abcdefghij -", min_size=1, max_size=12).map(str.strip).filter(bool)
_maybe_word = hs.none() | _word


@hs.composite
def claims(draw) -> dict[str, Any]:
    """A stored claim in JSON form with any of its optional fields."""
    label = draw(hs.sampled_from(PLAIN_LABELS))
    feedback = draw(hs.booleans()) and label != Label.SUPPORTED.value
    claim: dict[str, Any] = {
        "claim_id": "c1", "text": draw(_word), "labels": [label, *([FEEDBACK] if feedback else [])],
        "criticality": draw(hs.integers(1, 5)), "category": draw(hs.none() | hs.sampled_from(CATEGORIES)),
        "dimensions": draw(hs.none() | hs.lists(hs.sampled_from("FCUOSPH"), min_size=1, max_size=3, unique=True)),
        "source_id": draw(_maybe_word), "span": draw(_maybe_word), "is_core": draw(hs.none() | hs.booleans()),
        "feedback_at": draw(hs.none() | hs.datetimes(datetime(2020, 1, 1), datetime(2026, 1, 1),
                                                      timezones=hs.just(UTC)).map(datetime.isoformat)),
        "feedback_count": draw(hs.none() | hs.integers(0, 9)), "feedback_resolved": draw(hs.none() | hs.booleans()),
        "contradicted_by": draw(hs.sampled_from(("context", "world"))) if label == Label.CONTRADICTED.value
        else None,
        "entailment": draw(hs.none() | hs.just({"target": "Neutral", "context": ["Entailment"]})),
    }
    return {name: value for name, value in claim.items() if value is not None}


@hs.composite
def decisions(draw, before: dict[str, Any]) -> dict[str, Any]:
    """A person's reading: labels and criticality always, the other fields decided or left blank (None)."""
    label = draw(hs.sampled_from(PLAIN_LABELS))
    assume(not (label == Label.SUPPORTED.value and FEEDBACK in before["labels"]))
    return {"labels": [label], "criticality": draw(hs.integers(1, 5)),
            "category": draw(hs.none() | hs.sampled_from(CATEGORIES)),
            "dimensions": draw(hs.none() | hs.lists(hs.sampled_from("FCUOSPH"), min_size=1, max_size=2, unique=True)),
            "source_id": draw(_maybe_word), "span": draw(_maybe_word)}


def dumped(claim: dict[str, Any] | Claim) -> dict[str, Any]:
    model = claim if isinstance(claim, Claim) else Claim.model_validate(claim)
    return model.model_dump(mode="json")


def assert_kept(before: dict[str, Any], after: dict[str, Any] | Claim, decided: set[str]) -> None:
    """Every field not in ``decided`` is as it was; ``contradicted_by`` only while CONTRADICTED."""
    old, new = dumped(before), dumped(after)
    for name in FIELDS:
        if name in decided:
            continue
        if name == "contradicted_by" and Label.CONTRADICTED.value not in new["labels"]:
            assert new.get(name) is None
        else:
            assert new.get(name) == old.get(name), name
    if FEEDBACK in old["labels"]:
        assert FEEDBACK in new["labels"]


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])


@_SETTINGS
@given(hs.data())
def test_agreed_and_adjudicated_labels_keep_every_field_they_do_not_decide(data):
    before = data.draw(claims())
    reading = data.draw(decisions(before))
    base = parse_response({"response_id": "r", "answer": "a", "claims": [before],
                           "retrieved_context": [{"id": "k", "text": "t", "source_id": "s"}]})
    unit = {"unit_id": "c1", "keep": True, "text": before["text"], "provenance": "adjudicated", **reading}
    (after,), _ = _resolved_claims(base, [unit])
    assert_kept(before, after, {"labels", "criticality"} | {k for k, v in reading.items() if v is not None})


@_SETTINGS
@given(hs.data())
def test_a_confirmed_or_corrected_proposal_keeps_every_field_it_does_not_decide(data):
    before = data.draw(claims())
    reading = data.draw(decisions(before))
    criticality = data.draw(hs.none() | hs.just(reading["criticality"]))
    decision = Decision(1, "confirm", Label(reading["labels"][0]), criticality=criticality,
                        category=reading["category"], source_id=reading["source_id"], span=reading["span"])
    after = revised_claim(before, {"labels": reading["labels"], **decision.decided_fields()})
    assert_kept(before, after, {"labels", *decision.decided_fields()})


@_SETTINGS
@given(claims(), hs.booleans())
def test_feedback_validation_and_resolution_keep_every_field_they_do_not_decide(before, resolved):
    claim = Claim.model_validate(before)
    validated = validated_claim(claim, datetime(2026, 6, 1, tzinfo=UTC) + timedelta(hours=1))
    assert_kept(before, validated, {"labels", "feedback_at", "feedback_count", "feedback_resolved"})
    assert_kept(before, settled_claim(claim, resolved=resolved), {"feedback_resolved"})
