"""Roles and permissions, enforced in the register's service functions (not only by hiding buttons).

Roles (cumulative): viewer reads and reports problems with answers (anyone signed in may: feedback is
validated before it counts); annotator labels claims; reviewer records
review decisions, validates feedback and signs checklists; admin edits profiles, rules and users.
``system`` is the role of command-line and start-up jobs run by whoever operates the machine.

``authorize`` raises ``PermissionDenied`` and writes nothing but a "denied" audit event;
``require_other_person`` enforces four eyes (the author of a change cannot approve it). Both errors
are declared in ``register.errors``.
"""

from __future__ import annotations

from enum import StrEnum

from register.db.store import Change, account_problem
from register.errors import FourEyesViolation, PermissionDenied

ROLES = ("viewer", "annotator", "reviewer", "admin")
SYSTEM_ROLE = "system"


class Permission(StrEnum):
    READ = "read"
    IMPORT = "import"                      # bring data in, fix quarantined records
    LABEL = "label"                        # label claims
    FEEDBACK_SUBMIT = "feedback.submit"
    FEEDBACK_VALIDATE = "feedback.validate"
    REVIEW_DECIDE = "review.decide"
    REGISTER_EDIT = "register.edit"        # source register and claims register rows
    CHECKLIST_RUN = "checklist.run"
    CHECKLIST_SIGN = "checklist.sign"
    RULES_EDIT = "rules.edit"              # minimum evidence rules
    PROFILE_EDIT = "profile.edit"          # drafts, elicitation
    PROFILE_PUBLISH = "profile.publish"
    RESCORE = "scores.rescore"
    USERS_MANAGE = "users.manage"
    AUDIT_READ = "audit.read"              # the audit trail page and its export
    AUDIT_KEYS = "audit.keys"              # rotate the audit trail's signing key, declare a key lost
    # labelling (register.labels): batches, the rubric, adjudication of disagreements
    LABEL_ASSIGN = "label.assign"          # draw a labelling batch and assign its annotators
    ADJUDICATE = "label.adjudicate"        # resolve the annotators' disagreements
    RUBRIC_EDIT = "rubric.edit"            # publish a new labelling rubric version
    OWN_API_TOKENS = "api_tokens.own"      # create, list and revoke one's own API tokens (another's: USERS_MANAGE)
    MONITORS_EDIT = "monitors.edit"        # monitors (thresholds on the headline figures) and their webhooks


_MINIMUM_ROLE = {
    Permission.READ: "viewer",
    Permission.IMPORT: "annotator",
    Permission.LABEL: "annotator",
    Permission.FEEDBACK_SUBMIT: "viewer",     # anyone signed in reports; validation is a reviewer's
    Permission.FEEDBACK_VALIDATE: "reviewer",
    Permission.REVIEW_DECIDE: "reviewer",
    Permission.REGISTER_EDIT: "reviewer",
    Permission.CHECKLIST_RUN: "reviewer",
    Permission.CHECKLIST_SIGN: "reviewer",
    Permission.RULES_EDIT: "admin",
    Permission.PROFILE_EDIT: "admin",
    Permission.PROFILE_PUBLISH: "admin",
    Permission.RESCORE: "admin",
    Permission.USERS_MANAGE: "admin",
    Permission.AUDIT_READ: "reviewer",
    Permission.AUDIT_KEYS: "admin",
    # labelling (register.labels)
    Permission.LABEL_ASSIGN: "reviewer",
    Permission.ADJUDICATE: "reviewer",
    Permission.RUBRIC_EDIT: "admin",
    Permission.OWN_API_TOKENS: "viewer",      # a token acts with its account's role: it grants nothing more
    Permission.MONITORS_EDIT: "admin",
}


def allowed(role: str, permission: Permission) -> bool:
    """Whether a role holds a permission (roles are cumulative; ``system`` holds all)."""
    if role == SYSTEM_ROLE:
        return True
    if role not in ROLES:
        return False
    return ROLES.index(role) >= ROLES.index(_MINIMUM_ROLE[permission])


def deny(store, actor, permission: Permission, entity_type: str, entity_id, reason: str,
         error_type: type[PermissionDenied]):
    """Record the refused attempt (audit event ``denied`` with the reason), then raise ``error_type``."""
    store.write(actor, "denied", lambda tx: Change(
        entity_type, None if entity_id is None else str(entity_id), None,
        {"permission": permission.value, "reason": reason}), as_account=False)
    raise error_type(reason)


def authorize(store, actor, permission: Permission, *, entity_type: str, entity_id=None) -> None:
    """Raise ``PermissionDenied`` (after auditing the attempt) unless ``actor`` may do this now.

    The account is re-read (``register.db.store.account_problem``): a disabled account, a role changed
    since the Actor was made or an unknown name is refused whatever the Actor says. ``Store.write``
    re-reads it once more inside the write's own transaction."""
    if (problem := account_problem(store, actor)) is not None:
        deny(store, actor, permission, entity_type, entity_id, problem, PermissionDenied)
    if not allowed(actor.role, permission):
        deny(store, actor, permission, entity_type, entity_id,
             f"{actor.name} ({actor.role}) may not {permission.value}: ask an admin for a role that may",
             PermissionDenied)


def require_other_person(store, actor, author: str | None, permission: Permission, *, entity_type: str,
                         entity_id=None, what: str = "this change") -> None:
    """Four eyes: the author of ``what`` cannot be the one who approves it."""
    if author is not None and author == actor.name:
        deny(store, actor, permission, entity_type, entity_id,
             f"{actor.name} authored {what} and cannot also approve it: a second person must approve it "
             "(four eyes)",
             FourEyesViolation)
