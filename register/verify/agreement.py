"""How far each judge agrees with the people who decided its proposals, and where to set its threshold.

The people's labels are the decided proposals: a confirmed proposal's ``final_label`` (the judge's label or a
person's correction); a rejected SUPPORTED proposal is "not supported" (a person refused the clearance). A
rejected proposal of another label says only that the judge was wrong, not what is right: it counts in the
kappa as a disagreement and nowhere else.

Per judge profile: Cohen's kappa of judge against people over the decided proposals the judge answered;
false clearance (judge SUPPORTED where people said otherwise) and supported recall, with coverage, at each
confidence threshold of a curve; ``profile_with_threshold`` turns a chosen point into the profile's next version.
"""

from __future__ import annotations

from typing import Any

from hri_core.agreement import Rating, cohen_kappa
from hri_core.judging import JudgeProfile, Rate
from register.db.store import Store

__all__ = ["THRESHOLDS", "judge_agreement", "profile_with_threshold"]

THRESHOLDS = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))  # 0.50 .. 0.95


def judge_agreement(store: Store) -> list[dict[str, Any]]:
    """One entry per judge profile with decided proposals: kappa, false clearance and the threshold curve."""
    rows = store.dicts("SELECT proposal_id, judge_profile, backend, label, confidence, abstained, status, final_label "
                       "FROM judge_proposals WHERE status IN ('confirmed', 'rejected') ORDER BY proposal_id")
    by_profile: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_profile.setdefault(row["judge_profile"], []).append(row)
    return [_profile_agreement(profile, decided) for profile, decided in sorted(by_profile.items())]


def _human_supported(row: dict[str, Any]) -> bool | None:
    """Whether people hold the claim supported (None: not known from this decision)."""
    if row["status"] == "confirmed":
        return row["final_label"] == "SUPPORTED"
    return False if row["label"] == "SUPPORTED" else None


def _profile_agreement(profile: str, decided: list[dict[str, Any]]) -> dict[str, Any]:
    ratings: list[Rating] = []
    for row in decided:
        if row["label"] is None:
            continue
        unit = str(row["proposal_id"])
        ratings.append(Rating(unit, "judge", row["label"]))
        # a rejection without a correction: the people's label is "not the judge's"
        ratings.append(Rating(unit, "people", row["final_label"] if row["status"] == "confirmed"
                              else f"not {row['label']}"))
    kappa = cohen_kappa(ratings, ("judge", "people")).kappa if ratings else None
    known = [(row, truth) for row in decided if (truth := _human_supported(row)) is not None]
    curve = []
    for threshold in THRESHOLDS:
        cleared = [(row, truth) for row, truth in known
                   if row["label"] == "SUPPORTED" and row["confidence"] >= threshold]
        answered = sum(1 for row in decided if row["label"] is not None and row["confidence"] >= threshold)
        curve.append({
            "threshold": threshold,
            "coverage": Rate.of(answered, len(decided)).as_dict(),
            "false_clearance": Rate.of(sum(1 for _r, truth in cleared if not truth),
                                       sum(1 for _r, truth in known if not truth)).as_dict(),
            "supported_recall": Rate.of(sum(1 for _r, truth in cleared if truth),
                                        sum(1 for _r, truth in known if truth)).as_dict(),
        })
    overall = [(row, truth) for row, truth in known if row["label"] == "SUPPORTED"]
    return {"judge_profile": profile, "backend": decided[0]["backend"], "decided": len(decided),
            "kappa": None if kappa is None else round(kappa, 4),
            "false_clearance": Rate.of(sum(1 for _r, truth in overall if not truth),
                                       sum(1 for _r, truth in known if not truth)).as_dict(),
            "curve": curve}


def profile_with_threshold(profile: JudgeProfile, supported: float, evidence: str) -> JudgeProfile:
    """The next version of ``profile`` with ``thresholds.supported`` set to ``supported``, saying why. The figures
    it recorded (``measured``) were for the old threshold, so the new version records none until measured."""
    if not 0.0 < supported <= 1.0:
        raise ValueError(f"threshold {supported} must lie in (0, 1]")
    return profile.model_copy(update={
        "version": profile.version + 1,
        "thresholds": {**profile.thresholds, "supported": supported},
        "provenance": {**profile.provenance, f"threshold_v{profile.version + 1}": evidence},
        "measured": {},
    })
