"""A draft profile the system created counts as nobody's: publishing it needs two different admins.

Before, ``activate`` exempted nobody but checked only the draft's author name: the system's set-up draft
(the review floors) could be published by the single first admin. Now one admin endorses it (reason,
audited), and a different admin publishes it.
"""

from __future__ import annotations

import pytest

from hri_core import default_profile
from register import SYSTEM
from register.access.version_approvals import endorsement, proposed_by_system
from register.db.store import MIGRATIONS_DIR
from register.errors import FourEyesViolation, RegisterError
from register.scoring.profiles import (
    activate,
    active_profile,
    create_draft,
    endorse_draft,
)
from tests.helpers.actors import ANN, BOB


def _system_draft(store) -> int:
    """A draft the system role made (as set-up or a command-line job does): the plain paper floors."""
    return create_draft(store, SYSTEM, {"floors": [f.model_dump(mode="json") for f in default_profile().floors]})


def _events(store, action: str) -> list[dict]:
    return store.dicts("SELECT actor_name, entity_id, after FROM audit_events WHERE action = ? ORDER BY seq", [action])


def test_the_single_first_admin_cannot_publish_a_system_draft(store):
    version = _system_draft(store)
    assert proposed_by_system(store, "scoring_profile", version)
    with pytest.raises(FourEyesViolation, match="counts as nobody's"):
        activate(store, ANN, version, "Table IV")
    assert active_profile(store).version != version
    denied = _events(store, "denied")[-1]
    assert (denied["actor_name"], denied["entity_id"]) == (ANN.name, str(version))


def test_one_admin_endorses_a_different_admin_publishes(store):
    version = _system_draft(store)
    endorse_draft(store, ANN, version, "Table IV asks for review")
    assert endorsement(store, "scoring_profile", version)["actor_name"] == ANN.name
    assert _events(store, "scoring_profile.endorse")[-1]["actor_name"] == ANN.name
    # the endorser is now its author: she cannot publish it too
    with pytest.raises(FourEyesViolation, match=f"{ANN.name} authored draft profile version {version}"):
        activate(store, ANN, version, "Table IV")
    activate(store, BOB, version, "Table IV's review rationale")
    assert active_profile(store).version == version


def test_an_endorsement_needs_a_reason_a_person_and_happens_once(store):
    version = _system_draft(store)
    with pytest.raises(RegisterError, match="reason"):
        endorse_draft(store, ANN, version, "  ")
    with pytest.raises(FourEyesViolation, match="not the system"):
        endorse_draft(store, SYSTEM, version, "set-up")
    endorse_draft(store, ANN, version, "ok")
    with pytest.raises(RegisterError, match="already endorsed"):
        endorse_draft(store, BOB, version, "me too")


def test_a_persons_draft_needs_no_endorsement_and_the_system_may_still_publish_it(store):
    version = create_draft(store, ANN, {"feedback_half_life_days": 14})
    assert not proposed_by_system(store, "scoring_profile", version)
    with pytest.raises(RegisterError, match="made by a person"):
        endorse_draft(store, BOB, version, "no need")
    activate(store, SYSTEM, version, "command-line job: the operator is the second person")
    assert active_profile(store).version == version


def test_a_system_draft_made_before_the_approvals_table_is_still_nobodys(store):
    # a draft the system wrote before migration 035 has no 'proposed' row: the migration finds it by its audit event
    version = _system_draft(store)
    backfill = (MIGRATIONS_DIR / "035_approval_steps.sql").read_text(encoding="utf-8").split(";")[-2]
    with store.cursor() as cur:
        cur.execute("DELETE FROM approval_steps WHERE kind = 'scoring_profile' AND version = ?", [version])
        cur.execute(backfill)
    assert proposed_by_system(store, "scoring_profile", version)
    with pytest.raises(FourEyesViolation, match="counts as nobody's"):
        activate(store, ANN, version, "Table IV")
