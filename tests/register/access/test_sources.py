"""Source access policies: a role outside ``restricted_to`` learns that a claim rests on a restricted
source, never what the source says."""

from __future__ import annotations

import pandas as pd
import pytest

from register.access.sources import RESTRICTED_NOTE, mask_restricted_claims, readable_sources


@pytest.fixture
def sources(store):
    with store.cursor() as cur:
        cur.execute("INSERT INTO sources (source_id, title, restricted_to) VALUES "
                    "('hr-file', 'HR file', ['reviewer', 'admin']), ('public', 'Public page', NULL), "
                    "('empty-list', 'No restriction', []), ('gone', 'Deleted', ['admin'])")
        cur.execute("UPDATE sources SET deleted = true WHERE source_id = 'gone'")
    return store


CLAIMS = pd.DataFrame({
    "claim_id": ["c1", "c2", "c3", "c4", "c5"],
    "source_id": ["hr-file", "public", None, "not-registered", "empty-list"],
    "span": ["salary of J. Doe: 90k", "open hours 9-5", None, "quoted text", "ok text"],
})


@pytest.mark.parametrize("role, hr_readable", [("viewer", False), ("annotator", False), ("reviewer", True),
                                               ("admin", True), ("system", True)])
def test_readable_sources_follow_restricted_to(sources, role, hr_readable):
    access = readable_sources(sources, ["hr-file", "public", "empty-list", "not-registered", "gone"], role)
    assert access == {"hr-file": hr_readable, "public": True, "empty-list": True, "not-registered": True,
                      "gone": True}


def test_a_viewer_sees_that_the_claim_rests_on_a_restricted_source_but_not_its_span(sources):
    masked = mask_restricted_claims(sources, CLAIMS, "viewer")
    assert masked.loc[0, "source_id"] == "hr-file" and masked.loc[0, "source_access"] == RESTRICTED_NOTE
    assert masked.loc[0, "span"] is None
    assert "90k" not in masked.to_string()
    assert list(masked["source_access"][1:]) == ["readable", "no source", "readable", "readable"]
    assert list(masked["span"][1:]) == list(CLAIMS["span"][1:])
    assert "ACCESS_GAP" in RESTRICTED_NOTE


def test_a_reviewer_sees_the_span(sources):
    masked = mask_restricted_claims(sources, CLAIMS, "reviewer")
    assert masked.loc[0, "span"] == "salary of J. Doe: 90k" and masked.loc[0, "source_access"] == "readable"
    assert CLAIMS.loc[0, "span"] == "salary of J. Doe: 90k"  # the input frame is not changed


def test_injection_in_a_source_id_is_only_data(sources):
    assert readable_sources(sources, ["' OR '1'='1", "hr-file"], "viewer") == {"' OR '1'='1": True,
                                                                              "hr-file": False}
