"""Label sets that make sense (issue 33, item 5): SUPPORTED stands alone, PARTIAL and UNSUPPORTED exclude each
other, and every other combination the paper allows is kept.

The allowed combinations are written once (``hri_core.vocabulary.LABEL_CONFLICTS``); the record model refuses
the rest with the claim, the field and the rule named, so every path that validates a record -- an import,
``python -m hri_core score``, the RAGChecker and RAGAS conversions, the workbench -- refuses them alike.
"""

from __future__ import annotations

import itertools
import json

import pytest

from hri_core import RecordError, parse_response
from hri_core.rag_import import CONTRADICTION, ENTAILMENT, NEUTRAL, claim_label, ragchecker_results
from hri_core.synthetic import generate_responses
from hri_core.vocabulary import (
    ALLOWED_LABEL_MASKS,
    LABEL_BIT,
    LABELS,
    Label,
    allowed_label_mask,
    cautious_label_set,
    label_mask,
    label_set_problem,
)
from tests.hri_core.test_rag_import import HAND_BUILT


def record(*label_sets: list[str]) -> dict:
    return {"response_id": "r-1", "claims": [{"labels": labels} for labels in label_sets]}


def problems(error: RecordError) -> dict[str, str]:
    return {p.loc: p.message for p in error.problems}


def test_supported_with_another_label_is_refused_naming_the_claim_and_the_field():
    with pytest.raises(RecordError) as caught:
        parse_response(record(["SUPPORTED"], ["PARTIAL"], ["SUPPORTED", "UNSUPPORTED"]))
    assert problems(caught.value) == {"claims[2].labels": "SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED"}
    assert caught.value.record == "response_id=r-1"


def test_partial_with_unsupported_is_refused():
    with pytest.raises(RecordError) as caught:
        parse_response(record(["unsupported", "partial "]))
    (message,) = problems(caught.value).values()
    assert message.startswith("PARTIAL and UNSUPPORTED exclude each other")
    assert message.endswith("; got PARTIAL, UNSUPPORTED")


def test_flat_table_labels_are_checked_too():
    with pytest.raises(RecordError) as caught:
        parse_response({"response_id": "r", "claims": [{"labels": "SUPPORTED;CONTRADICTED"}]})
    assert problems(caught.value) == {"claims[0].labels": "SUPPORTED stands alone; got SUPPORTED, CONTRADICTED"}


@pytest.mark.parametrize("labels", [
    ["OUTDATED", "CONTRADICTED"], ["ACCESS_GAP", "UNSUPPORTED"], ["PARTIAL", "ACCESS_GAP"],
    ["UNSUPPORTED", "CONTRADICTED"], ["PARTIAL", "CONTRADICTED"], ["OUT_OF_SCOPE", "UNSUPPORTED"],
    ["CONTRADICTED", "VALIDATED_NEGATIVE_FEEDBACK"], ["SUPPORTED", "SUPPORTED"], ["SUPPORTED"],
])
def test_combinations_the_paper_allows_are_kept(labels):
    (claim,) = parse_response(record(labels)).claims
    assert [label.value for label in claim.labels] == list(dict.fromkeys(labels))


def test_every_label_set_is_accepted_exactly_when_the_vocabulary_allows_it():
    for size in range(1, len(LABELS) + 1):
        for labels in itertools.combinations(LABELS, size):
            mask = label_mask(labels)
            try:
                parse_response(record([label.value for label in labels]))
                accepted = True
            except RecordError:
                accepted = False
            assert accepted == (mask in ALLOWED_LABEL_MASKS) == (label_set_problem(labels) is None), labels
    assert len(ALLOWED_LABEL_MASKS) == 1 + (2 ** 7 - 1) - 2 ** 5  # SUPPORTED alone; the rest without P+U
    assert not allowed_label_mask(0) and not allowed_label_mask(1 << len(LABELS))


def test_the_cautious_set_drops_what_gives_way_and_is_always_allowed():
    assert cautious_label_set(["SUPPORTED", "UNSUPPORTED"]) == (Label.UNSUPPORTED,)
    assert cautious_label_set(["PARTIAL", "UNSUPPORTED", "ACCESS_GAP"]) == (Label.UNSUPPORTED, Label.ACCESS_GAP)
    assert cautious_label_set(["SUPPORTED", "PARTIAL", "UNSUPPORTED"]) == (Label.UNSUPPORTED,)
    assert cautious_label_set(["SUPPORTED"]) == (Label.SUPPORTED,)
    for mask in range(1, 1 << len(LABELS)):
        labels = [label for label in LABELS if mask & LABEL_BIT[label]]
        assert label_mask(cautious_label_set(labels)) in ALLOWED_LABEL_MASKS


def test_every_label_the_ragchecker_mapping_gives_is_an_allowed_set():
    verdicts = [None, ENTAILMENT, NEUTRAL, CONTRADICTION]
    for target in verdicts:
        for context in [None, [], *itertools.product(verdicts[1:], repeat=2)]:
            for self_knowledge in (Label.SUPPORTED, Label.UNSUPPORTED, Label.PARTIAL):
                labels = claim_label(target, context, self_knowledge)["labels"]
                assert label_set_problem(labels) is None, (target, context, labels)


def test_a_ragchecker_query_that_would_give_a_refused_set_is_a_failure_naming_it(monkeypatch):
    import hri_core.rag_import as rag_import

    monkeypatch.setattr(rag_import, "claim_label", lambda *args: {"labels": ["SUPPORTED", "OUTDATED"]})
    query = json.loads(HAND_BUILT.read_text(encoding="utf-8"))["results"][0]
    conversion = ragchecker_results({"results": [query]})
    assert conversion.records == []
    (failure,) = conversion.failures
    assert {p.message for p in failure.error.problems} == {"SUPPORTED stands alone; got SUPPORTED, OUTDATED"}
    assert all(p.loc.endswith(".labels") for p in failure.error.problems)


def test_the_synthetic_demo_records_use_allowed_sets_only():
    for item in generate_responses(2_000, seed=7):
        for claim in item["claims"]:
            assert label_set_problem(claim["labels"]) is None, claim


def test_hri_core_score_refuses_a_contradictory_set_and_scores_the_rest(hri_core_cli, tmp_path):
    path = tmp_path / "answers.jsonl"
    lines = [record(["SUPPORTED"]) | {"response_id": "ok"},
             record(["SUPPORTED", "UNSUPPORTED"]) | {"response_id": "bad"},
             record(["OUTDATED", "CONTRADICTED"]) | {"response_id": "ok2"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = hri_core_cli("score", str(path))
    assert result.returncode == 2
    assert [json.loads(line)["response_id"] for line in result.stdout.splitlines()] == ["ok", "ok2"]
    assert "line 2" in result.stderr
    assert "claims[0].labels: SUPPORTED stands alone; got SUPPORTED, UNSUPPORTED" in result.stderr
