"""A small register for the labelling tests: three responses (one with retrieved context and categories), the
shipped rubric, accounts for two annotators, a third annotator, a reviewer and an admin."""

from __future__ import annotations

from pathlib import Path

from register import SYSTEM, Actor, Store
from register.access.identity import create_user
from register.ingest.importer import import_path
from register.labels.rubrics import ensure_default_rubric
from register.scoring.profiles import ensure_default_profile
from tests.helpers.console_records import write_jsonl

ANNA = Actor("anna", "annotator")
BEN = Actor("ben", "annotator")
CARL = Actor("carl", "annotator")
RITA = Actor("rita", "reviewer")
ADA = Actor("ada", "admin")
VIEWER = Actor("vic", "viewer")

RECORDS = [
    {"response_id": "r1", "use_case": "contracts", "model": "m1", "created_at": "2026-11-01T09:00:00Z",
     "question": "What does the contract say about support?",
     "answer": "The contract expires on 31 December 2026. The SLA includes 24/7 support.",
     "retrieved_context": [{"id": "k1", "text": "Support: Mon-Fri 8:00-18:00.", "source_id": "src-contract"}],
     "claims": [
         {"claim_id": "r1-1", "text": "The contract expires on 31 December 2026.", "labels": ["SUPPORTED"],
          "category": "contractual", "criticality": 3},
         {"claim_id": "r1-2", "text": "The SLA includes 24/7 support.", "labels": ["SUPPORTED"],
          "category": "contractual", "criticality": 1}]},
    {"response_id": "r2", "use_case": "contracts", "model": "m1", "created_at": "2026-11-02T09:00:00Z",
     "question": "Is the supplier certified?", "answer": "The supplier has ISO 27001 certification.",
     "claims": [{"claim_id": "r2-1", "text": "The supplier has ISO 27001 certification.", "labels": ["SUPPORTED"]}]},
    {"response_id": "r3", "use_case": "hr", "model": "m2", "created_at": "2026-11-03T09:00:00Z",
     "question": "Who is eligible?", "answer": "Everyone is eligible.",
     "claims": [{"claim_id": "r3-1", "text": "Everyone is eligible.", "labels": ["UNSUPPORTED"],
                 "feedback_at": "2026-10-01T00:00:00Z", "feedback_count": 1},
                {"claim_id": "r3-2", "text": "Nobody is excluded.", "labels": ["VALIDATED_NEGATIVE_FEEDBACK"],
                 "feedback_at": "2026-10-01T00:00:00Z", "feedback_count": 1}]},
]


def labelling_store(path: Path, name: str = "labels.duckdb") -> Store:
    """A fresh register ``name`` in the folder ``path`` with RECORDS imported and scored, the rubric and the
    accounts (each account costs a password hash: the labelling tests copy a template of it)."""
    store = Store(path / name)
    ensure_default_profile(store, SYSTEM)
    ensure_default_rubric(store, SYSTEM)
    import_path(store, SYSTEM, write_jsonl(path / "records.jsonl", RECORDS))
    for actor in (ANNA, BEN, CARL, RITA, ADA, VIEWER):
        create_user(store, SYSTEM, actor.name, actor.role)
    return store


def label_all(store: Store, batch_id: int, actor: Actor, readings: dict[tuple[str, str], dict]) -> None:
    """Save ``readings[(response_id, unit_id)]`` (keyword arguments of ``save_annotation``) as ``actor``."""
    from register.labels.workbench import save_annotation

    for (response_id, unit_id), reading in readings.items():
        save_annotation(store, actor, batch_id, response_id, unit_id, **reading)


AGREED = {("r1", "r1-1"): {"labels": ["SUPPORTED"], "criticality": 3, "category": "contractual"},
          ("r2", "r2-1"): {"labels": ["UNSUPPORTED"], "criticality": 2, "category": "security"}}
