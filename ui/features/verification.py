"""Reads and writes of the Claim verification page: machine proposals, their counts and the judge policy (a
decision on proposals is written with ``ui.framework.data.write``)."""

from __future__ import annotations

import pandas as pd

from hri_core.vocabulary import LABELS
from register.db.store import Actor, Store
from register.verify import policy, proposals, stored, testsets
from register.verify.agreement import judge_agreement
from register.verify.judge_cli import PROFILE_DIR, load_profile
from register.verify.run import judge_in_register
from ui.framework import data

ACTIONS = {"confirm": "Confirm the judge's verdict", "correct": "Confirm with another label", "reject": "Reject"}

PROPOSAL_COLUMNS = ("proposal_id", "response_id", "claim_id", "claim_text", "label", "confidence", "unlinked",
                    "link_score", "reason", "target_label", "category", "stakes", "backend", "judge_profile",
                    "span", "evidence_index", "run_id")


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


def decisions_from(choices: dict[int, tuple[str | None, str | None]],
                   abstained: set[int]) -> tuple[list[proposals.Decision], dict[int, str]]:
    """The decisions a form's ``choices`` (proposal id -> (action or None, label or None)) make, and why the
    others cannot be recorded, by proposal. No action: left for later, neither a decision nor a problem."""
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
            made.append(proposals.Decision(proposal_id, "reject" if action == "reject" else "confirm",
                                           by_value[label] if action == "correct" and label else None))
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
    """The judge profiles shipped in ``data/judge_profiles`` (by name), the offline default first."""
    names = sorted(path.stem for path in PROFILE_DIR.glob("*.json"))
    return sorted(names, key=lambda name: name != "offline-default")


def verify_selection(actor: Actor, response_ids: list[str], profile: str, progress) -> stored.VerifyReport:
    """Verify the chosen stored answers with a judge profile (a write: clears the cached reads)."""
    store = data.get_store()
    judge = judge_in_register(load_profile(profile), store, actor)
    try:
        return stored.verify_stored(store, actor, response_ids, judge, progress=progress)
    finally:
        data.after_write()

