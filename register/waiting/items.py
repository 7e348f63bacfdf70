"""Waiting for me: what the signed-in person may settle now, by their role and their name (issue 35, item 7).

``waiting_for(store, actor)`` re-reads the account (``authorize``: a disabled account or a changed role is refused)
and gathers, for the role the account holds now, every kind of work that waits for a second person, each through
the query of the package that owns it, leaving out what this person may not settle (four eyes). Kind: what, read by
(not for whom) -> the page where it is done.

- ``role_request``: pending admin requests, ``identity.admin_requests`` (not their requester nor the account) ->
  users;
- ``profile_draft``: draft scoring profiles to endorse or publish, ``profiles.list_profiles`` and
  ``system_draft_state`` (not their creator; a system draft's endorser), draft mitigation policies,
  ``mitigation.list_policies`` (not their creator) -> profiles;
- ``rules_version``: pending versions of the evidence rules, use cases and authority rules, their
  ``pending_*_versions`` (not their proposer) -> evidence-rules, authority;
- ``checklist_signoff``: the newest checklist run, still current and unsigned, ``checklist.run_detail`` (not an
  editor of its checked rows) -> checklist;
- ``risk_acceptance``: proposed risk acceptances, ``risk_acceptance.acceptances`` (not their proposer) -> review;
- ``label_change``: lower-risk label changes held, ``pending.list_pending`` (not their proposer) -> review;
- ``feedback``: reported feedback to validate, ``items.list_feedback`` (not its reporter) -> feedback;
- ``adjudication``: disagreements, one item per labelling batch, ``adjudication.queue`` (not the batch's
  annotators) -> adjudication.

A sole admin's own admin request is the exception: nobody else can settle it, and they may name that account the
second admin (``register.access.second_admin``), so it waits for them. Each item names the console page where it
is done by its URL path (``page``) with the query parameters the page reads (``params``), and the answer it is about
(``response_id``: its response detail page); the register does not know the page files. A system-made mitigation
draft waits for nobody (no console page endorses one) and a judge policy version neither (none approves one): they
are left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from register.access import identity, second_admin
from register.access.permissions import SYSTEM_ROLE, Permission, allowed, authorize
from register.console import risk_acceptance
from register.db.store import Actor, Store
from register.feedback import items as feedback_items
from register.governance import checklist, evidence
from register.ingest import pending
from register.labels import adjudication
from register.labels.batches import batch
from register.scoring import authority_rules, mitigation, profiles

__all__ = ["KINDS", "WaitingItem", "waiting_for"]

# kind -> how the console names a group of them, in the order the page shows them
KINDS: dict[str, str] = {
    "role_request": "Role requests",
    "profile_draft": "Drafts to publish",
    "rules_version": "Rules to approve",
    "checklist_signoff": "Checklist sign-offs",
    "risk_acceptance": "Risk acceptances to approve",
    "label_change": "Lower-risk label changes to approve",
    "feedback": "Feedback to validate",
    "adjudication": "Disagreements to adjudicate",
}


@dataclass(frozen=True)
class WaitingItem:
    """One thing waiting for the person: its ``kind`` (a key of ``KINDS``), a ``title`` in words (plain text: the
    page escapes it), when it was asked (``created_at``) and by whom (``asked_by``), where it is done: the console
    page's URL path (``page``) with its query parameters (``params``), and the answer it is about, if any
    (``response_id``)."""

    kind: str
    title: str
    created_at: datetime | None
    asked_by: str
    page: str
    params: dict[str, str] = field(default_factory=dict)
    response_id: str | None = None  # the answer it is about, when it is about one (the response detail page)


def _profile_drafts(store: Store, me: str) -> list[WaitingItem]:
    found = []
    for draft in (p for p in profiles.list_profiles(store) if p["status"] == "draft"):
        version = int(draft["profile_version"])
        system = profiles.system_draft_state(store, version)
        if system is None and draft["created_by"] != me:
            found.append(WaitingItem("profile_draft", f"Publish draft scoring profile v{version} ({draft['name']})",
                                     draft["created_at"], draft["created_by"], "profiles"))
        elif system is not None and system["endorsed_by"] is None:  # nobody's: any admin endorses it first
            found.append(WaitingItem("profile_draft", f"Endorse system-made draft scoring profile v{version} "
                                     f"({draft['name']}): a different admin then publishes it",
                                     draft["created_at"], draft["created_by"], "profiles"))
        elif system is not None and system["endorsed_by"] != me:
            found.append(WaitingItem("profile_draft", f"Publish draft scoring profile v{version} ({draft['name']}), "
                                     f"endorsed by {system['endorsed_by']}", draft["created_at"],
                                     system["endorsed_by"], "profiles"))
    for draft in mitigation.list_policies(store):
        # a system-made policy draft would need an endorsement no page gives: it waits for nobody here
        if draft["status"] == "draft" and draft["created_by"] not in (me, SYSTEM_ROLE):
            found.append(WaitingItem("profile_draft", f"Publish draft mitigation policy v{draft['policy_version']} "
                                     f"({draft['name']})", draft["created_at"], draft["created_by"], "profiles"))
    return found


# what each pending kind of versioned rules is called, its read and the page that approves it
_RULES = (("evidence rules", evidence.pending_rule_versions, "evidence-rules"),
          ("use cases", authority_rules.pending_use_case_versions, "authority"),
          ("authority rules", authority_rules.pending_authority_rule_versions, "authority"))


def _rules_versions(store: Store, me: str) -> list[WaitingItem]:
    return [WaitingItem("rules_version", f"Approve {what} version {row['version']}", row["proposed_at"],
                        row["proposed_by"], page)
            for what, read, page in _RULES for row in read(store) if row["proposed_by"] != me]


def _checklist_signoff(store: Store, me: str) -> list[WaitingItem]:
    """The newest run, when it still covers the register, nobody signed it yet and ``me`` edited none of its rows
    (older runs of the same state are covered by signing the newest)."""
    newest = store.scalar("SELECT max(run_id) FROM checklist_runs")
    if newest is None:
        return []
    run = checklist.run_detail(store, int(newest))
    if run["stale"] or run["signoffs"] or me in set(run["editors"]) | set(run["current_editors"]):
        return []
    return [WaitingItem("checklist_signoff", f"Sign checklist run {run['run_id']} (automated outcome "
                        f"{run['outcome']})", run["run_at"], run["run_by"], "checklist")]


def _when(value: Any) -> datetime | None:
    """A time read through a data frame (a pandas Timestamp, or NaT) as a plain ``datetime``."""
    if value is None or pd.isna(value):
        return None
    return value.to_pydatetime() if hasattr(value, "to_pydatetime") else value


def _risk_acceptances(store: Store, me: str) -> list[WaitingItem]:
    proposed = risk_acceptance.acceptances(store, status="proposed").to_dict("records")
    return [WaitingItem("risk_acceptance", f"Approve risk acceptance {row['acceptance_id']} of {row['response_id']} "
                        f"(revision {row['revision']}): {str(row['release']).replace('_', ' ')} until "
                        f"{row['expires_on']:%Y-%m-%d}", _when(row["proposed_at"]), row["proposed_by"], "review",
                        response_id=str(row["response_id"]))
            for row in proposed if row["proposed_by"] != me]


def _label_changes(store: Store, me: str) -> list[WaitingItem]:
    return [WaitingItem("label_change", f"Approve label change {row['change_id']} on {row['response_id']}: decision "
                        f"{row['decision_before']} -> {row['decision_after']}", row["proposed_at"], row["proposed_by"],
                        "review", response_id=str(row["response_id"]))
            for row in pending.list_pending(store, limit=10_000) if row["proposed_by"] != me]


def _feedback(store: Store, me: str) -> list[WaitingItem]:
    reported = feedback_items.list_feedback(store, states=("reported",), limit=10_000).to_dict("records")
    return [WaitingItem("feedback", f"Validate feedback #{row['feedback_id']} on {row['response_id']}"
                        + (f" claim {row['claim_id']}" if row["claim_id"] else "") + f": {_short(row['text'])}",
                        _when(row["reported_at"]), row["reported_by"], "feedback", response_id=str(row["response_id"]))
            for row in reported if row["reported_by"] != me]


def _adjudications(store: Store, actor: Actor) -> list[WaitingItem]:
    """One item per labelling batch with disagreements, for a reviewer who annotated none of it."""
    units: dict[int, int] = {}
    for row in adjudication.queue(store, actor).to_dict("records"):
        if actor.name not in list(row["annotators"]):
            units[int(row["batch_id"])] = units.get(int(row["batch_id"]), 0) + 1
    found = []
    for batch_id, count in sorted(units.items()):
        record = batch(store, batch_id)
        found.append(WaitingItem("adjudication", f"Adjudicate {count:,} disagreement(s) in labelling batch "
                                 f"#{batch_id} ({record['title']})", record["created_at"], record["created_by"],
                                 "adjudication"))
    return found


def _role_requests(store: Store, actor: Actor) -> list[WaitingItem]:
    found = []
    sole = second_admin.exception_problem(store, actor) is None
    for grant in identity.admin_requests(store):
        if grant["username"] == actor.name:
            continue
        if grant["requested_by"] != actor.name:
            found.append(WaitingItem("role_request", f"Approve the admin role for {grant['username']}",
                                     grant["requested_at"], grant["requested_by"], "users"))
        elif sole:  # their own request, which no second admin exists to approve
            found.append(WaitingItem("role_request", f"Name {grant['username']} the second admin: you are the only "
                                     "admin, so no one else can approve your request", grant["requested_at"],
                                     grant["requested_by"], "users"))
    return found


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def waiting_for(store: Store, actor: Actor) -> list[WaitingItem]:
    """Everything waiting for ``actor`` (module docstring), grouped by kind in ``KINDS`` order, oldest first.

    Needs ``Permission.READ`` on the account's current state (a disabled account or a role changed since the Actor
    was made is refused, audited); what each kind needs beyond it is checked against that role, so a role without
    the permission gets nothing of that kind. The command line's ``system`` role has no inbox: it gets nothing."""
    authorize(store, actor, Permission.READ, entity_type="waiting", entity_id=actor.name)
    if actor.role == SYSTEM_ROLE:
        return []
    me = actor.name
    found: list[WaitingItem] = []
    if allowed(actor.role, Permission.USERS_MANAGE):
        found += _role_requests(store, actor)
    if allowed(actor.role, Permission.PROFILE_PUBLISH):
        found += _profile_drafts(store, me)
    if allowed(actor.role, Permission.RULES_EDIT):
        found += _rules_versions(store, me)
    if allowed(actor.role, Permission.CHECKLIST_SIGN):
        found += _checklist_signoff(store, me)
    if allowed(actor.role, Permission.REVIEW_DECIDE):
        found += _risk_acceptances(store, me) + _label_changes(store, me)
    if allowed(actor.role, Permission.FEEDBACK_VALIDATE):
        found += _feedback(store, me)
    if allowed(actor.role, Permission.ADJUDICATE):
        found += _adjudications(store, actor)
    order = list(KINDS)
    return sorted(found, key=lambda item: (order.index(item.kind),
                                           item.created_at.timestamp() if item.created_at else float("-inf")))
