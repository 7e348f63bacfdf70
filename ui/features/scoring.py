"""Data helpers of the scoring pages (profiles, elicitation, calibration): cached reads and the impact preview.

Reads are cached like ``ui.framework.data``'s; the pages write through a register service function with the acting
user (``ui.framework.data.write``, which clears the caches). Also holds the profile editor's
small pure helpers (turning widget values into a profile mapping, normalising weights) so that the
page stays thin and the helpers are testable without Streamlit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from hri_core import ScoringProfile, recommended_profile
from register import Store
from register.scoring import calibration as reg_calibration
from register.scoring import elicitation as reg_elicitation
from register.scoring import mitigation as reg_mitigation
from register.scoring import profiles as reg_profiles
from register.scoring import publishes as reg_publishes
from register.scoring.impact import ImpactPreview, impact_preview
from ui.framework import data


@data.cached
def profiles_table(store: Store) -> pd.DataFrame:
    """Every profile version (status and provenance) as a table."""
    return pd.DataFrame(reg_profiles.list_profiles(store))


profile_meta = data.cached(reg_profiles.profile_meta)
incomplete_publish = data.cached(reg_publishes.incomplete_publish)
system_draft_state = data.cached(reg_profiles.system_draft_state)
elicitations_for = data.cached(reg_elicitation.elicitations_for)
outcome_pairs = data.cached(reg_calibration.outcome_pairs)
audit_sample_items = data.cached(reg_calibration.audit_sample_items)


@data.cached
def mitigation_policy(store: Store, version: int) -> dict:
    """One stored mitigation policy's parameters as JSON-ready data."""
    return reg_mitigation.get_policy(store, version).model_dump(mode="json")


def readings_frame(policy: dict) -> pd.DataFrame:
    """How each HRI label reads in CLAIM's terms under a policy: verdict, step, authority failure."""
    return pd.DataFrame([{"label": label, **reading} for label, reading in policy["readings"].items()],
                        columns=["label", "verdict", "step", "authority_failure"])


def review_floors_version() -> int | None:
    """The stored version of Table IV's review floors (``hri_core.recommended_profile``), if any (uncached). The
    register has no function for this lookup by fingerprint, so it is a query here, not a ``data.cached`` read."""
    return data.get_store().scalar("SELECT min(profile_version) FROM scoring_profiles WHERE fingerprint = ?",
                                   [recommended_profile().fingerprint()])


def preview(profile: ScoringProfile) -> ImpactPreview:
    """Impact of ``profile`` against the active profile (not cached: the user asks for it explicitly), with a
    progress bar while it runs (long at scale when every response is rescored: docs/performance.md)."""
    bar = st.progress(0.0, text="Impact preview: starting")

    def told(fraction: float, what: str) -> None:
        bar.progress(fraction, text=f"Impact preview: {what} ({fraction:.0%})")

    try:
        return impact_preview(data.get_store(), profile, progress=told)
    finally:
        bar.empty()


# --- pure editor helpers -------------------------------------------------------------------------


def normalised(weights: Mapping[str, float]) -> dict[str, float]:
    """Weights scaled to sum 1, rounded to 6 decimals with the remainder on the largest weight."""
    total = math.fsum(max(0.0, float(v)) for v in weights.values())
    if total <= 0:
        return {k: round(1.0 / len(weights), 6) for k in weights}
    out = {k: round(max(0.0, float(v)) / total, 6) for k, v in weights.items()}
    largest = max(out, key=out.get)
    out[largest] = round(out[largest] + 1.0 - math.fsum(out.values()), 6)
    return out


FLOOR_COLUMNS = ["rule_id", "label", "condition", "min_criticality", "max_criticality", "min_feedback_count",
                 "value", "min_action"]


def floors_frame(profile: ScoringProfile) -> pd.DataFrame:
    """The profile's floor rules, one row each; ``min_action`` is blank when the floor sets no minimum action."""
    return pd.DataFrame([{
        "rule_id": f.rule_id, "label": f.label.value, "condition": f.condition,
        "min_criticality": f.min_criticality, "max_criticality": f.max_criticality,
        "min_feedback_count": f.min_feedback_count, "value": f.value, "min_action": f.min_action}
        for f in profile.floors], columns=FLOOR_COLUMNS)


def bands_frame(profile: ScoringProfile) -> pd.DataFrame:
    return pd.DataFrame([b.model_dump(mode="json") for b in profile.bands], columns=["name", "upper", "action"])


def _clean(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def floors_from_frame(frame: pd.DataFrame) -> list[dict]:
    """Editor rows -> floor rule mappings (empty rows dropped; blanks left out so validation names them)."""
    rules = []
    for row in frame.to_dict("records"):
        row = {k: _clean(v) for k, v in row.items()}
        if all(v in (None, "") for v in row.values()):
            continue
        rule = {k: v for k, v in row.items() if v not in (None, "") or k in ("rule_id", "label", "value")}
        if rule.get("max_criticality") is not None:
            rule["max_criticality"] = int(rule["max_criticality"])
        for key in ("min_criticality", "min_feedback_count"):
            if rule.get(key) is not None:
                rule[key] = int(rule[key])
        rules.append(rule)
    return rules


def bands_from_frame(frame: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in row.items()} for row in frame.to_dict("records")
            if any(_clean(v) not in (None, "") for v in row.values())]
