"""Four eyes, looked at afterwards: approvals whose two accounts may be one person.

``require_other_person`` (``register.access.permissions``) compares account names, so one person with two
accounts passes it. Granting the admin role now needs two admins, but accounts of lower roles, accounts made
before that rule, and accounts made at the command line remain. ``linked_approvals`` lists every approval
whose author and approver are linked by who created their accounts: one created the other, or the same
person created both. The audit page shows them for a reviewer to judge; nothing is refused on this ground.

Approvals: publishing a draft scoring profile (its creator and its publisher), granting the admin role (the
requester and the approver) and signing a checklist run (each last editor of a checked row and the signer). An
admin named by the sole admin (``register.access.second_admin``) had no approver: it is listed on its own
(``second_admin.namings``), with who created the named account.
Only local accounts are compared: company-identity (oidc) and demo accounts are made by their login, not by
a person of this register.
"""

from __future__ import annotations

import pandas as pd

from register.db.store import Store

__all__ = ["LINKED_COLUMNS", "linked_approvals"]

LINKED_COLUMNS = ["approval", "subject", "author", "approver", "approved_at", "link"]


def linked_approvals(store: Store) -> pd.DataFrame:
    """Approvals whose author and approver accounts were created by the same person (or one by the other),
    newest first: approval, subject, author, approver, approved_at, link (in words)."""
    return store.frame("""
        WITH approvals AS (
            SELECT 'profile publish' AS approval, 'scoring profile v' || profile_version AS subject,
                   created_by AS author, published_by AS approver, published_at AS approved_at
            FROM scoring_profiles WHERE published_by IS NOT NULL AND published_by <> created_by
            UNION ALL
            SELECT 'admin role', 'account ' || username, requested_by, decided_by, decided_at
            FROM role_grants WHERE status = 'approved' AND NOT coalesce(named_while_sole_admin, false)
            UNION ALL
            SELECT 'checklist sign-off', 'checklist run ' || r.run_id, e.editor, s.signed_by, s.signed_at
            FROM checklist_signoffs s JOIN checklist_runs r USING (run_id), unnest(r.editors) AS e(editor)
            WHERE e.editor <> s.signed_by
        )
        SELECT a.approval, a.subject, a.author, a.approver, a.approved_at,
               CASE WHEN ap.created_by = a.author THEN a.approver || '''s account was created by ' || a.author
                    WHEN au.created_by = a.approver THEN a.author || '''s account was created by ' || a.approver
                    ELSE 'both accounts were created by ' || au.created_by END AS link
        FROM approvals a
        JOIN users au ON au.username = a.author AND au.kind = 'local'
        JOIN users ap ON ap.username = a.approver AND ap.kind = 'local'
        WHERE ap.created_by = a.author OR au.created_by = a.approver OR au.created_by = ap.created_by
        ORDER BY a.approved_at DESC, a.subject
    """)
