"""Reads and writes of the Claim verification page: machine proposals, their counts and the judge policy (a
decision on proposals is written with ``ui.framework.data.write``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from hri_core.models import MAX_CRITICALITY
from hri_core.vocabulary import CATEGORIES, LABELS
from register.db.store import Actor, Store
from register.verify import policy, proposals, stored, testsets
from register.verify.agreement import judge_agreement
from register.verify.judge_cli import PROFILE_DIR, load_profile
from register.verify.run import judge_in_register
from ui.framework import data
from ui.framework.text import escape_markdown

ACTIONS = {"confirm": "Confirm the judge's verdict", "correct": "Confirm with another label", "reject": "Reject"}

PROPOSAL_COLUMNS = ("proposal_id", "response_id", "claim_id", "claim_text", "label", "confidence", "unlinked",
                    "link_score", "reason", "target_label", "category", "stakes", "backend", "judge_profile",
                    "span", "evidence_index", "run_id", "current_criticality", "current_category",
                    "current_source_id", "current_span", "context_sources", "cited_sentences")
NO_CHOICE = "(none)"


def _given(value: Any) -> Any:
    """None for a missing value (a frame holds it as NaN)."""
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else value


def claim_fields(row: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The confirm / correct form's claim fields for one proposal -- criticality, category, source and span --
    each starting at the claim's current value; returns those the person changed, as ``Decision`` keywords
    (a cleared field as a blank text). Source offers the claim's current source and every source of the
    answer's retrieved context, registered or not."""
    criticality = _given(row.get("current_criticality")) or _given(row.get("criticality")) or 1
    category = _given(row.get("current_category"))
    source = _given(row.get("current_source_id"))
    span = _given(row.get("current_span")) or ""
    sources = list(dict.fromkeys(s for s in (source, *(_given(row.get("context_sources")) or [])) if s))
    categories = [NO_CHOICE, *CATEGORIES]
    cols = st.columns([1, 2, 2, 3])
    chosen_criticality = cols[0].number_input("Criticality", min_value=1, max_value=MAX_CRITICALITY,
                                              value=int(criticality), step=1, key=f"{key}_criticality")
    chosen_category = cols[1].selectbox("Category", categories,
                                        index=categories.index(category) if category in categories else 0,
                                        key=f"{key}_category")
    chosen_source = cols[2].selectbox("Source", [NO_CHOICE, *sources], index=sources.index(source) + 1
                                      if source in sources else 0, key=f"{key}_source")
    chosen_span = cols[3].text_input("Span", value=span, key=f"{key}_span")
    fields: dict[str, Any] = {}
    if int(chosen_criticality) != int(criticality):
        fields["criticality"] = int(chosen_criticality)
    if (None if chosen_category == NO_CHOICE else chosen_category) != category:
        fields["category"] = "" if chosen_category == NO_CHOICE else chosen_category
    if (None if chosen_source == NO_CHOICE else chosen_source) != source:
        fields["source_id"] = "" if chosen_source == NO_CHOICE else chosen_source
    if chosen_span.strip() != span.strip():
        fields["span"] = chosen_span
    return fields


@data.cached
def proposal_frame(store: Store, status: str) -> pd.DataFrame:
    """Proposals of one status as a frame (the page's table)."""
    rows = proposals.list_proposals(store, status=status)
    frame = pd.DataFrame(rows, columns=list(rows[0]) if rows else list(PROPOSAL_COLUMNS))
    return frame


@data.cached
def proposal_responses(store: Store, actor: Actor) -> pd.DataFrame:
    """The responses with proposals waiting for a person (``register.verify.proposals.proposal_responses``)."""
    return pd.DataFrame(proposals.proposal_responses(store, actor),
                        columns=["response_id", "proposals", "abstained", "unlinked", "run_id"])


proposal_item = data.cached(proposals.proposal_item)  # one response and its waiting proposals, with provenance
counts = data.cached(proposals.proposal_counts)  # proposals by status


@data.cached
def active_policy_version(store: Store) -> int | None:
    """The active judge policy's version, or None (off)."""
    active = policy.active_policy(store)
    return active.version if active else None


def decisions_from(choices: dict[int, tuple[str | None, str | None]], abstained: set[int],
                   fields: Mapping[int, Mapping[str, Any]] | None = None
                   ) -> tuple[list[proposals.Decision], dict[int, str]]:
    """The decisions a form's ``choices`` (proposal id -> (action or None, label or None)) make, and why the
    others cannot be recorded, by proposal. No action: left for later, neither a decision nor a problem.
    ``fields``: the claim fields a confirmation also sets, by proposal (``claim_fields``)."""
    made: list[proposals.Decision] = []
    problems: dict[int, str] = {}
    by_value = {label.value: label for label in LABELS}
    for proposal_id, (action, label) in choices.items():
        if action is None:
            continue
        if action == "correct" and label not in by_value:
            problems[proposal_id] = "choose the label that replaces the judge's"
        elif action == "confirm" and proposal_id in abstained:
            problems[proposal_id] = "the judge abstained: there is no verdict to confirm; give a label instead"
        elif action not in ACTIONS:
            problems[proposal_id] = f"unknown decision {action!r}"
        else:
            extra = dict((fields or {}).get(proposal_id, {})) if action != "reject" else {}
            made.append(proposals.Decision(proposal_id, "reject" if action == "reject" else "confirm",
                                           by_value[label] if action == "correct" and label else None, **extra))
    return made, problems


@data.cached
def agreement_frames(store: Store) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each judge against the people's decisions: a summary row per profile, and the threshold curves."""
    entries = judge_agreement(store)
    summary = pd.DataFrame([{"judge_profile": e["judge_profile"], "backend": e["backend"], "decided": e["decided"],
                             "kappa": e["kappa"], "false_clearance": e["false_clearance"]["value"],
                             "false_cleared": f"{e['false_clearance']['count']}/{e['false_clearance']['total']}"}
                            for e in entries])
    curve = pd.DataFrame([{"judge_profile": e["judge_profile"], "threshold": p["threshold"],
                           "coverage": p["coverage"]["value"], "false_clearance": p["false_clearance"]["value"],
                           "supported_recall": p["supported_recall"]["value"]}
                          for e in entries for p in e["curve"]])
    return summary, curve


CRITICAL_RUN_COLUMNS = ["test_run_id", "name", "version", "model", "started_at", "hallucination",
                        "hallucination_at_most", "claims",
                        "hallucinated_claims", "undecided_claims", "critical_questions", "hallucinated",
                        "question_share", "needs_review", "unanswered"]
CRITICAL_QUESTION_COLUMNS = ["test_run_id", "model", "response_id", "hallucination", "hallucination_at_most",
                             "claims", "hallucinated_claims", "undecided_claims"]


@data.cached
def critical_report(store: Store) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 003's hallucination on the critical questions of each test-set run (per model and time), and per
    question of each run."""
    rows = testsets.critical_report(store)
    questions = [{"test_run_id": r["test_run_id"], "model": r["model"], **q} for r in rows for q in r["questions"]]
    return (pd.DataFrame(rows, columns=CRITICAL_RUN_COLUMNS),
            pd.DataFrame(questions, columns=CRITICAL_QUESTION_COLUMNS))


verifiable = data.cached(stored.candidates)  # current answers a verification can take


def judge_profiles() -> list[str]:
    """The judge profiles shipped in ``data/judge_profiles`` (by name) that are offered, the offline default first.

    A profile whose provenance says ``withdrawn`` (measured and found not worth its cost: docs/judges.md) is not
    offered here; the command line still runs it by name, for anyone repeating the comparison."""
    names = sorted(path.stem for path in PROFILE_DIR.glob("*.json")
                   if "withdrawn" not in load_profile(path.stem).provenance)
    return sorted(names, key=lambda name: name != "offline-default")


def verify_selection(actor: Actor, response_ids: list[str], profile: str, progress) -> stored.VerifyReport:
    """Verify the chosen stored answers with a judge profile (a write: clears the cached reads)."""
    store = data.get_store()
    judge = judge_in_register(load_profile(profile), store, actor)
    try:
        return stored.verify_stored(store, actor, response_ids, judge, progress=progress)
    finally:
        data.after_write()



@st.cache_data(ttl=300, show_spinner=False)
def judge_worth(profile_key: str) -> pd.DataFrame:
    """What a judge profile is worth, as its file records it (``JudgeProfile.measured``): per data set the
    false clearance and supported recall with their 95% intervals, and the coverage. Empty when the profile
    file is missing, is another version than ``profile_key`` names, or records no measurement."""
    name, _, version = profile_key.partition("@")
    try:
        profile = load_profile(name)
    except Exception:  # noqa: BLE001 - a profile that cannot be read has no figures to show, the page goes on
        return pd.DataFrame()
    if str(profile.version) != version or not profile.measured:
        return pd.DataFrame()
    rows = [{"data set": where,
             "false clearance": f"{m['false_clearance']:.1%} [{m['false_clearance_low']:.1%}-"
                                f"{m['false_clearance_high']:.1%}]",
             "supported recall": f"{m['supported_recall']:.1%} [{m['supported_recall_low']:.1%}-"
                                 f"{m['supported_recall_high']:.1%}]",
             "coverage": f"{m['coverage']:.1%}", "pairs": int(m["n"])}
            for where, m in profile.measured.items()]
    return pd.DataFrame(rows)


def worth_caption(profile_key: str) -> str | None:
    """One line for beside a proposal: the profile's budget and its figures on held-out data (markdown-escaped),
    or None when the profile records none."""
    frame = judge_worth(profile_key)
    if frame.empty:
        return None
    held = frame[frame["data set"].str.contains("held out")]
    shown = held if not held.empty else frame
    parts = [f"{row['data set']}: false clearance {row['false clearance']}, supported recall {row['supported recall']}"
             for row in shown.to_dict("records")]
    return escape_markdown(f"What {profile_key} is worth (95% intervals) — " + "; ".join(parts))
