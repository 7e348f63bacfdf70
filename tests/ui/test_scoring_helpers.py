"""The profile editor's pure helpers: normalising weights and turning editor rows into profile fields."""

from __future__ import annotations

import math

import pytest

from hri_core import default_profile, profile_from_dict
from hri_core.errors import ProfileError
from ui.features.scoring import bands_frame, bands_from_frame, floors_frame, floors_from_frame, normalised


def test_normalised_sums_to_one_exactly_at_six_decimals():
    out = normalised({"F": 0.35, "C": 0.2, "U": 0.15, "O": 0.1, "S": 0.1, "P": 0.1, "H": 0.1})
    assert math.fsum(out.values()) == pytest.approx(1.0, abs=1e-12)
    assert out["F"] == pytest.approx(0.35 / 1.1, abs=1e-6)
    profile_from_dict({"weights": out})  # accepted by the profile's own check


def test_normalised_all_zero_gives_equal_weights():
    assert set(normalised({"F": 0, "C": 0}).values()) == {0.5}


def test_frames_round_trip_to_the_same_profile():
    base = default_profile()
    again = profile_from_dict({"floors": floors_from_frame(floors_frame(base)),
                               "bands": bands_from_frame(bands_frame(base))}, base=base)
    assert again.fingerprint() == base.fingerprint()


def test_edited_rows_with_problems_are_all_named():
    base = default_profile()
    floors = floors_frame(base)
    floors.loc[0, "value"] = 1.5
    bands = bands_frame(base)
    bands.loc[3, "upper"] = 90.0
    with pytest.raises(ProfileError) as caught:
        profile_from_dict({"floors": floors_from_frame(floors), "bands": bands_from_frame(bands)}, base=base)
    locs = {p.loc for p in caught.value.problems}
    assert any(loc.startswith("floors") for loc in locs) and any(loc.startswith("bands") for loc in locs)
