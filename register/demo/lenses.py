"""The demo's per-use-case scoring: two profiles, each bound to one use case (``register.scoring.lens_versions``),
so a newcomer sees answers of different use cases scored by different, published parameters.

* ``claims-handling`` (high stakes: claims handlers act on the answers) is scored by ``claims-handling-strict``:
  more weight on contradictions and context deviations (F, C), so a claims answer with such findings scores
  higher, and reaches review sooner, than an answer of the same findings elsewhere;
* ``hr-policy`` is scored by ``hr-policy-currency``: more weight on outdated claims (O), because the handbook
  changes every year and an answer resting on last year's policy is the typical harm.

Both are drafts of the active profile with only the weights changed (the band bounds stay the default's, so the
overview's score histogram, coloured by the active profile's bands, agrees with the band cards), bound by one lens
version saved by the ``system`` role (in force at once: the demo's set-up records decisions made elsewhere), before
the answers are imported, so they are scored with them. Idempotent: skipped when a lens version exists. Called by
``register.demo.seed_demo``.
"""

from __future__ import annotations

from typing import Any

from hri_core.lens import CLAIM_STEPS
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.scoring.lens_versions import save_lenses
from register.scoring.lenses import lens_version
from register.scoring.profiles import create_draft

__all__ = ["BOUND_PROFILES", "seed_demo_lenses"]

# use case -> (profile name, the parameters laid over the active profile)
BOUND_PROFILES: dict[str, tuple[str, dict[str, Any]]] = {
    "claims-handling": ("claims-handling-strict", {
        "weights": {"F": 0.35, "C": 0.25, "U": 0.15, "O": 0.10, "S": 0.05, "P": 0.05, "H": 0.05}}),
    "hr-policy": ("hr-policy-currency", {
        "weights": {"F": 0.20, "C": 0.20, "U": 0.15, "O": 0.20, "S": 0.10, "P": 0.05, "H": 0.10}}),
}


def seed_demo_lenses(store: Store, actor: Actor) -> int | None:
    """Bind the demo's profiles to their use cases; the lens version written (None: a lens version exists)."""
    for permission in (Permission.PROFILE_EDIT, Permission.PROFILE_PUBLISH):  # first, whether or not it writes
        authorize(store, actor, permission, entity_type="demo")
    if lens_version(store) is not None:
        return None
    rows = []
    for use_case, (name, overrides) in BOUND_PROFILES.items():
        version = create_draft(store, actor, overrides, name=name)
        rows.append({"use_case": use_case, "profile_version": version, "policy_version": None,
                     "steps": list(CLAIM_STEPS), "human_review": False, "note": f"the demo's {name} profile"})
    return save_lenses(store, actor, rows, "the demo's per-use-case profiles")
