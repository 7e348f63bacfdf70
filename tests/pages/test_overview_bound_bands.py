"""The Overview's score histogram colours its bars by the active profile's band bounds: when a use case is scored by
a bound profile with other band bounds, the page says which, so no one reads a bar's colour as those answers' band."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register import SYSTEM
from register.scoring.lens_versions import bind_profile
from register.scoring.profiles import create_draft
from tests.helpers.accounts import login
from tests.helpers.paths import REPO_ROOT

APP = str(REPO_ROOT / "app.py")
NOTE = "scored by a profile with other band bounds"
TIGHTER = [{"name": "Low", "upper": 15.0, "action": "release"}, {"name": "Medium", "upper": 40.0, "action": "caution"},
           {"name": "High", "upper": 70.0, "action": "review"}, {"name": "Critical", "upper": 100.0, "action": "block"}]


def _overview_captions() -> list[str]:
    from ui.framework import data

    data.after_write()  # the bindings below are written beside the console: its cached reads are cleared by hand
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "viewer")
    at.run()
    assert not at.exception, at.exception
    return [c.value for c in at.caption]


def test_a_bound_profile_with_other_band_bounds_is_named_under_the_histogram(seeded_db):
    assert not any(NOTE in c for c in _overview_captions())
    weights_only = create_draft(seeded_db, SYSTEM, {"weights": {"F": 0.35, "C": 0.25, "U": 0.15, "O": 0.1, "S": 0.05,
                                                                "P": 0.05, "H": 0.05}})
    bind_profile(seeded_db, SYSTEM, "hr-policy", weights_only, "only the weights differ")
    assert not any(NOTE in c for c in _overview_captions())  # the same bounds: the bars' colours hold
    tighter = create_draft(seeded_db, SYSTEM, {"bands": TIGHTER})
    bind_profile(seeded_db, SYSTEM, "claims-handling", tighter, "tighter bands")
    (note,) = [c for c in _overview_captions() if NOTE in c]
    assert f"claims\\-handling (profile v{tighter})" in note and "hr\\-policy" not in note
