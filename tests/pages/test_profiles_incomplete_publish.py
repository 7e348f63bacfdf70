"""The Profiles page names a publish stopped between its two steps and finishes it (``register.scoring.publishes``).

The draft is published through the register with its rescore failing (as if the process stopped after the
activation); the page then says "publish of version N incomplete: scores are under version 1" above everything,
and an admin's button runs the rescore that completes it.
"""

from __future__ import annotations

import pytest

from register import Actor
from register.scoring import profiles
from register.scoring.profiles import active_profile, create_draft
from register.scoring.publishes import incomplete_publish
from tests.helpers.accounts import open_page
from tests.helpers.actors import enrol
from ui.framework.text import escape_markdown

ANN = Actor("ann-admin", "admin")
BOB = Actor("bob-admin", "admin")


def _stopped(*_args, **_kwargs):
    raise RuntimeError("the process stopped between the two steps")


@pytest.fixture
def incomplete(seeded_db, monkeypatch) -> int:
    """A draft by Ann published by Bob whose rescore never ran: its version."""
    enrol(seeded_db, ANN, BOB)
    version = create_draft(seeded_db, ANN, {"weights": {"F": 0.4, "C": 0.1, "U": 0.2, "O": 0.1, "S": 0.05,
                                                        "P": 0.05, "H": 0.1}})
    with monkeypatch.context() as stopped:
        stopped.setattr(profiles, "rescore", _stopped)
        with pytest.raises(RuntimeError):
            profiles.publish(seeded_db, BOB, version, "stricter on contradictions")
    assert active_profile(seeded_db).version == version
    return version


def _notices(at, version: int) -> list[str]:
    said = escape_markdown(f"publish of version {version} incomplete: scores are under version 1.")
    return [w.value for w in at.warning if w.value.startswith(said)]


def test_an_incomplete_publish_is_named_and_finished_on_the_profiles_page(seeded_db, incomplete):
    at = open_page("pages/profiles.py", "admin", ANN.name)
    (notice,) = _notices(at, incomplete)
    assert notice.endswith(escape_markdown("Finish it here, or with: python -m register rescore"))
    at.button(key="pp_resume").click().run()
    assert not at.exception, at.exception
    current = seeded_db.scalar("SELECT count(*) FROM responses WHERE is_current")
    assert any(f"Finished publishing v{incomplete}: rescored {current:,} responses" in s.value for s in at.success)
    assert _notices(at, incomplete) == []
    assert incomplete_publish(seeded_db) is None
    assert seeded_db.query("SELECT profile_version, count(*) FROM scores WHERE is_current GROUP BY ALL") == \
        [(incomplete, current)]


def test_a_viewer_sees_the_notice_but_cannot_finish_it(seeded_db, incomplete):
    at = open_page("pages/profiles.py", "viewer")
    assert len(_notices(at, incomplete)) == 1
    assert at.button(key="pp_resume").disabled
