"""A register with sources and scored answers whose claims rest on them, for the Authority tests.

Each answer has one SUPPORTED claim on one source, so that each check can fail alone:

* ``au-ok``         on ``src-ok``: unrestricted, tier 1, current;
* ``au-stale``      on ``src-old``: superseded by ``src-ok``;
* ``au-expired``    on ``src-expiring``: valid until 2026-03-31, answer given on 2026-04-01;
* ``au-restricted`` on ``src-legal-only``: restricted to ``reviewer`` while the use case's requesters are
  ``viewer`` (use case ``helpdesk``);
* ``au-weak``       a ``legal`` claim on ``src-blog`` (tier 4; legal claims need tier <= 2);
* ``au-unknown``    on ``src-missing`` (not in the register);
* ``au-contra``     a CONTRADICTED claim on ``src-old``: a finding, never a proposal.
"""

from __future__ import annotations

import json
from pathlib import Path

from register import SYSTEM, Store
from register.governance.registers import add_row
from register.ingest.importer import import_path
from register.scoring.authority_rules import save_use_cases

SOURCES = (
    {"source_id": "src-ok", "title": "Current policy", "source_type": "official framework", "authority_tier": 1},
    {"source_id": "src-old", "title": "Old policy", "source_type": "official framework", "authority_tier": 1,
     "superseded_by": "src-ok"},
    {"source_id": "src-expiring", "title": "Expiring notice", "source_type": "official framework", "authority_tier": 1,
     "valid_until": "2026-03-31"},
    {"source_id": "src-legal-only", "title": "Counsel memo", "source_type": "official framework", "authority_tier": 1,
     "restricted_to": "reviewer"},
    {"source_id": "src-blog", "title": "A blog post", "source_type": "web page", "authority_tier": 4,
     "access_date": "2026-01-05"},
)


def _record(rid: str, source: str, *, label: str = "SUPPORTED", category: str | None = None,
            created_at: str = "2026-04-01T09:00:00Z", use_case: str = "helpdesk") -> dict:
    claim = {"claim_id": "c1", "text": f"The claim of {rid}.", "labels": [label], "criticality": 2,
             "source_id": source}
    if category:
        claim["category"] = category
    return {"response_id": rid, "use_case": use_case, "model": "m", "created_at": created_at,
            "question": "Q?", "answer": f"The answer of {rid}.", "claims": [claim]}


RECORDS = (
    _record("au-ok", "src-ok"),
    _record("au-stale", "src-old"),
    _record("au-expired", "src-expiring"),
    _record("au-restricted", "src-legal-only"),
    _record("au-weak", "src-blog", category="legal"),
    _record("au-unknown", "src-missing"),
    _record("au-contra", "src-old", label="CONTRADICTED"),
)


def load_authority_register(store: Store, folder: Path, *, use_cases: bool = True) -> Store:
    """``store`` with ``SOURCES``, the ``helpdesk`` use case (requesters: viewer) and ``RECORDS`` imported
    and scored."""
    for source in SOURCES:
        add_row(store, SYSTEM, "sources", source)
    if use_cases:
        save_use_cases(store, SYSTEM, [{"use_case": "helpdesk", "requester_roles": ["viewer"]}],
                       "who asks the helpdesk's questions")
    path = folder / "authority.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    import_path(store, SYSTEM, path)
    return store
