"""The demo's approved-use-case register (``data/demo/use_cases.csv``), so the Scope check finds real things.

Every use case of the demo's answers is listed, each owned by one person and approved by another (four eyes):
most are approved; ``open-domain-qa`` is suspended (its answers rest on web pages no one keeps), so the Scope
check holds each of its answers for review with that reason; ``it-helpdesk`` is approved but its review date
(``REVIEW_OVERDUE``) has passed, so its answers get an OUT_OF_SCOPE proposal; ``clinical-triage`` is proposed and
has no answers yet. Imported through the ordinary register import as the ``system`` role records approvals made
elsewhere (``register.governance.use_cases``), before the demo's answers, so they are scored with it.
Called by ``register.demo.seed_demo``.
"""

from __future__ import annotations

from pathlib import Path

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import RegisterError
from register.governance.transfer import import_register, read_upload

__all__ = ["FILE", "OVERDUE_USE_CASE", "SUSPENDED_USE_CASE", "seed_demo_use_cases"]

FILE = "use_cases.csv"
SUSPENDED_USE_CASE, OVERDUE_USE_CASE = "open-domain-qa", "it-helpdesk"


def seed_demo_use_cases(store: Store, actor: Actor, data_dir: Path) -> int:
    """Import the demo's use-case register; returns the rows inserted. Idempotent: skipped when the register has
    ever held a use case (a team's own register is never overwritten by the demo's)."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type="demo")  # first, whether or not it writes
    path = data_dir / "demo" / FILE
    if not path.is_file() or store.scalar("SELECT count(*) FROM use_case_register"):
        return 0
    result = import_register(store, actor, "usecases", read_upload(FILE, path.read_bytes()))
    if result.rejected:
        raise RegisterError(f"{FILE}: " + "; ".join(str(p) for p in result.rejected)
                            + " (the shipped demo register no longer validates: fix the file)")
    return result.inserted
