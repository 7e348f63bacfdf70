"""Responses for the feedback tests, imported through the ordinary importer, and a clock to pin times."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from register import SYSTEM, Store
from register.ingest import importer


def import_records(store: Store, folder: Path, records: list[dict], name: str = "feedback-seed.jsonl") -> None:
    """Import ``records`` (interchange dicts) as SYSTEM from a JSONL file in ``folder``."""
    path = folder / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    report = importer.import_path(store, SYSTEM, path)
    assert report.batches[0].quarantined == 0


def two_claims(response_id: str, use_case: str = "contracts", model: str = "rag-v3") -> dict:
    """A response of two supported claims of criticality 1 (scores 0 until feedback arrives)."""
    return {"response_id": response_id, "use_case": use_case, "model": model, "created_at": "2026-10-01T08:00:00Z",
            "question": "When does the contract end?", "answer": "It ends in 2027. Renewal is automatic.",
            "claims": [{"claim_id": "c1", "text": "It ends in 2027.", "labels": ["SUPPORTED"]},
                       {"claim_id": "c2", "text": "Renewal is automatic.", "labels": ["SUPPORTED"]}]}


class Clock:
    """``utc_now`` stand-in: returns ``now``, which the test moves."""

    def __init__(self, now: datetime):
        self.now = now

    def __call__(self) -> datetime:
        return self.now
