"""The approved-use-case register: what a person's edit may not do, the approval by a second person, the reads.

A use case (paper Fig. 1's Scope check; Table II's S dimension, "outside the approved use case") is a row of
``use_case_register`` (migration 049), edited, imported, exported and restored like a source or a claim
(``register.governance.registers``, ``register.governance.transfer``, ``kind="usecases"``) and validated by
``register.governance.rows`` (``normalise_use_case``; an approver who is the owner is refused there, whoever
saves).

Four eyes: a use case is approved by a second person. In the console that is ``approve_use_case`` only: a
person's edit or import never makes a row approved, nor changes what an approved row approves
(``change_problems``; it may suspend, retire or return it to proposed, and edit its notes), and the owner who
approves is refused with ``FourEyesViolation``. The ``system`` role (``python -m register governance import
usecases FILE``, run by whoever operates the machine) records approvals made elsewhere, as the file names them.
Called by the registers' save, the use-case page (through ``ui.features.governance``) and tests.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pandas as pd

from register.access.permissions import SYSTEM_ROLE, Permission, authorize, deny
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import FourEyesViolation, NotFound, Problem, StaleEdit, ValidationFailed
from register.governance.rows import USE_CASE_COLUMNS, same_person, validate
from register.governance.vocabulary import APPROVED, RETIRED
from register.scoring.redecide import any_approved_use_case, redecide_scope

__all__ = ["APPROVAL_FIELDS", "ENTITY", "approve_use_case", "change_problems", "list_use_cases", "use_case_row"]

ENTITY = "use_case"  # the audit trail's entity type of a use-case row
TABLE = "use_case_register"
# what an approval approves: every field but the status (suspending or retiring needs no second person) and the
# notes (a remark changes nothing approved)
APPROVAL_FIELDS = tuple(c for c in USE_CASE_COLUMNS if c not in ("status", "notes"))
MAX_REASON = 2000


# --- reads ----------------------------------------------------------------------------------------------


def list_use_cases(store: Store, *, include_deleted: bool = False) -> pd.DataFrame:
    """The use-case register by id, with each row's version, last editor and deleted flag."""
    return store.frame(f"SELECT {', '.join(USE_CASE_COLUMNS)}, row_version, updated_at, updated_by, deleted "
                       f"FROM {TABLE} WHERE NOT deleted OR ? ORDER BY use_case_id", [include_deleted])


def use_case_row(store: Store | Transaction, use_case_id: str) -> dict[str, Any] | None:
    """One live use case with its version and last editor (None when unknown or deleted)."""
    return store.one(f"SELECT {', '.join(USE_CASE_COLUMNS)}, row_version, updated_at, updated_by FROM {TABLE} "
                     "WHERE use_case_id = ? AND NOT deleted", [use_case_id])


# --- what a person's edit may not do ----------------------------------------------------------------------


def change_problems(actor: Actor, row: int, before: dict | None, after: dict) -> list[Problem]:
    """Why a person may not save ``after`` over ``before`` (None: a new row), row ``row`` of the edit: an edit
    never approves. A row becomes approved only through ``approve_use_case``; an approved row's approved fields
    (``APPROVAL_FIELDS``) change only by returning it to proposed and approving it again, and the approver is
    recorded by the approval alone. The ``system`` role records approvals made elsewhere (an imported register
    file) and is not asked."""
    if actor.role == SYSTEM_ROLE:
        return []
    problems = []
    if after.get("approved_by") != (None if before is None else before.get("approved_by")):
        problems.append(Problem(row, "approved_by", "the approver is recorded by the approval itself (Approve), "
                                                    "never typed"))
    if after.get("status") != APPROVED:
        return problems
    if before is None or before.get("status") != APPROVED:
        problems.append(Problem(row, "status", "an edit does not approve a use case: save it as proposed, then a "
                                               "person other than its owner approves it (Approve, four eyes)"))
        return problems
    changed = [c for c in APPROVAL_FIELDS if c != "approved_by" and before.get(c) != after.get(c)]
    problems += [Problem(row, column, "an approved use case changes only with a new approval: save the change with "
                                      "status proposed, then a person other than its owner approves it (four eyes)")
                 for column in changed]
    return problems


# --- the approval ---------------------------------------------------------------------------------------


def approve_use_case(store: Store, actor: Actor, use_case_id: str, row_version: int, *, review_by: date | None,
                     reason: str, evidence_link: str | None = None, evidence_hash: str | None = None,
                     today: date | None = None) -> int:
    """A second person approves use case ``use_case_id`` as read at ``row_version`` (its new version returned):
    status approved, ``approved_by`` the actor, reviewed again by ``review_by`` (a date after ``today``), with the
    approval's evidence (a link and its content hash; the row's own when not given) and a reason (audited as
    ``use_case.approve``). Also renews an approved one.

    Refused: without ``Permission.RULES_EDIT``; by the use case's owner or the person who made its last change
    while unapproved (``FourEyesViolation``, audited); a retired use case, a missing reason or review date, an
    evidence link that is not a web link (``ValidationFailed`` naming the field); a row changed since it was read
    (``StaleEdit``) or deleted (``NotFound``)."""
    authorize(store, actor, Permission.RULES_EDIT, entity_type=ENTITY, entity_id=use_case_id)
    row = use_case_row(store, use_case_id)
    if row is None:
        raise NotFound(f"use case {use_case_id} does not exist (deleted meanwhile?), reload")
    if same_person(row["owner"], actor.name):
        deny(store, actor, Permission.RULES_EDIT, ENTITY, use_case_id,
             f"{actor.name} owns use case {use_case_id} and cannot also approve it: a second person approves it "
             "(four eyes)", FourEyesViolation)
    if row["status"] != APPROVED and row["updated_by"] == actor.name:
        deny(store, actor, Permission.RULES_EDIT, ENTITY, use_case_id,
             f"{actor.name} made the last change to use case {use_case_id} and cannot also approve it: a second "
             "person approves it (four eyes)", FourEyesViolation)
    today = today or utc_now().date()
    problems: list[Problem] = []
    if row["status"] == RETIRED:
        problems.append(Problem(None, "status", "a retired use case is not approved again: set it to proposed "
                                                "first, or register a new one"))
    if not (reason or "").strip():
        problems.append(Problem(None, "reason", "say why you approve it"))
    elif len(reason.strip()) > MAX_REASON:
        problems.append(Problem(None, "reason", f"at most {MAX_REASON} characters"))
    if review_by is None or review_by <= today:
        problems.append(Problem(None, "review_by", f"a review-by date after today ({today.isoformat()})"))
    before = {c: (list(row[c]) if isinstance(row[c], (list, tuple)) else row[c]) for c in USE_CASE_COLUMNS}
    after = {**before, "status": APPROVED, "approved_by": actor.name, "review_by": review_by,
             "evidence_link": (evidence_link or "").strip() or before["evidence_link"],
             "evidence_hash": (evidence_hash or "").strip() or before["evidence_hash"]}
    problems += [Problem(None, p.column, p.message) for p in validate("usecases", [(1, after)])
                 if p.column not in ("review_by", "approved_by")]  # review_by said above; approved_by is the actor
    if problems:
        raise ValidationFailed(problems)

    def fn(tx: Transaction) -> Change:
        state = tx.one(f"SELECT row_version, deleted, updated_by, updated_at FROM {TABLE} WHERE use_case_id = ?",
                       [use_case_id])
        if state is None or state["deleted"]:
            raise NotFound(f"use case {use_case_id} does not exist (deleted meanwhile?), reload")
        if state["row_version"] != row_version:
            raise StaleEdit(f"use case {use_case_id} was changed by {state['updated_by']} (now version "
                            f"{state['row_version']}) since you read version {row_version}: reload, then approve "
                            "what it says now")
        tx.execute(f"UPDATE {TABLE} SET status = ?, approved_by = ?, review_by = ?, evidence_link = ?, "
                   "evidence_hash = ?, row_version = row_version + 1, updated_at = ?, updated_by = ? "
                   "WHERE use_case_id = ?",
                   [APPROVED, actor.name, review_by, after["evidence_link"], after["evidence_hash"], utc_now(),
                    actor.name, use_case_id])
        return Change(ENTITY, use_case_id, before, {**after, "reason": reason.strip()}, result=row_version + 1)

    approved_before = any_approved_use_case(store)
    version: int = store.write(actor, f"{ENTITY}.approve", fn)
    # approved now: its answers (and, with the register's first approval, those of unknown use cases) are decided again
    redecide_scope(store, actor, [use_case_id], approved_before=approved_before)
    return version
