"""The paper's own register as the example: Table VII's claims, their references, Table VIII's rules.

Called by the demo loader (``register.demo.seed_demo``), through the ordinary import path
(``register.governance.transfer.import_register``), so the example is validated and audited like any
user's file.
"""

from __future__ import annotations

from pathlib import Path

from register.db.store import Actor, Store
from register.errors import RegisterError
from register.governance.evidence import ensure_default_rules
from register.governance.transfer import import_register, read_upload

__all__ = ["seed_paper_register"]

DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"


def seed_paper_register(store: Store, actor: Actor, folder=None) -> dict:
    """The paper's Table VII (``data/demo/paper_register.csv``) and its references
    (``paper_sources.csv``) as the example register, plus Table VIII as rule version 1.
    Idempotent: skipped when the claims register has ever held a row."""
    folder = Path(folder) if folder else DEMO_DIR
    ensure_default_rules(store, actor)
    if store.scalar("SELECT count(*) FROM register_claims"):
        return {"skipped": True}
    out: dict[str, bool | int] = {"skipped": False}  # and the rows inserted into each register
    for kind, name in (("sources", "paper_sources.csv"), ("claims", "paper_register.csv")):
        path = folder / name
        if path.is_file():
            result = import_register(store, actor, kind, read_upload(name, path.read_bytes()))
            out[kind] = result.inserted
            if result.rejected:
                raise RegisterError(f"{name}: " + "; ".join(str(p) for p in result.rejected)
                                    + " (the shipped example register no longer validates: fix the file)")
    return out
