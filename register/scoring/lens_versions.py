"""Saving and approving lens versions: a profile, a mitigation policy and CLAIM's steps per use case, four eyes.

A lens version (``register.scoring.lenses`` reads it) is the whole table of use-case rows, saved at once with a
reason (``save_lenses``; ``bind_profile`` and ``set_lens`` change one use case's row of the version in force and
save the result). It waits for a different person with ``Permission.PROFILE_PUBLISH`` to approve it
(``approve_lenses``, ``register.access.version_approvals``); the ``system`` role's saves take effect at once. A draft
profile a version binds is published *for those use cases* when the version takes effect: its status becomes
``bound`` (published, not the default), so its approver must be neither the lens's proposer nor the draft's author.
When a version takes effect, the current scored answers of the use cases whose row changed are scored again under
their new lens, in one audited score run (scope ``lens:v<n>:<use cases>``).
"""

from __future__ import annotations

from typing import Any

from hri_core.lens import CLAIM_STEPS, lens_problems
from register.access import version_approvals
from register.access.permissions import SYSTEM_ROLE, Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import Problem, RegisterError, ValidationFailed
from register.scoring.lenses import IN_FORCE, LENS_KIND, lens_rows, lens_version
from register.scoring.profiles import PROFILE_KIND, active_profile
from register.scoring.scorer import RescoreSummary, _write_scores
from register.scoring.use_case_rows import name_problems, note_problems

__all__ = ["approve_lenses", "bind_profile", "lens_history", "pending_lens_versions", "save_lenses", "set_lens"]

ROW_FIELDS = ("use_case", "profile_version", "policy_version", "steps", "human_review", "note")


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    return text or None


def _version(value: Any) -> int | None:
    text = _text(value)
    if text is None:
        return None
    try:
        return int(float(text))
    except ValueError:
        return -1  # named as a problem below


def _steps(value: Any) -> list[str]:
    if value is None or (isinstance(value, float) and value != value):
        return list(CLAIM_STEPS)
    items = value.tolist() if hasattr(value, "tolist") else value
    if isinstance(items, str):
        items = items.replace(";", ",").split(",")
    return [str(i).strip().lower() for i in items if str(i).strip()]


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    review = row.get("human_review")
    return {"use_case": _text(row.get("use_case")), "profile_version": _version(row.get("profile_version")),
            "policy_version": _version(row.get("policy_version")), "steps": _steps(row.get("steps")),
            "human_review": str(review).strip().lower() in ("true", "1", "yes") if review is not None else False,
            "note": _text(row.get("note"))}


def _problems(store: Store, rows: list[dict[str, Any]]) -> list[Problem]:
    profiles = dict(store.query("SELECT profile_version, status FROM scoring_profiles"))
    policies = dict(store.query("SELECT policy_version, status FROM mitigation_policies"))
    problems: list[Problem] = []
    seen: set[str] = set()
    for n, row in enumerate(rows, start=1):
        problems += name_problems(n, row["use_case"], seen)
        version = row["profile_version"]
        if version is not None and version not in profiles:
            problems.append(Problem(n, "profile_version", f"no scoring profile version {version}"))
        policy = row["policy_version"]
        if policy is not None and policies.get(policy) in (None, "draft"):
            problems.append(Problem(n, "policy_version", f"no published mitigation policy version {policy}"))
        problems += [Problem(n, "steps", text) for text in lens_problems(row["steps"], row["human_review"])]
        problems += note_problems(n, row["note"])
    return problems


def _changed(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    def key(row: dict[str, Any]) -> tuple:
        return (row["profile_version"], row["policy_version"], tuple(row["steps"]), bool(row["human_review"]))
    before, after = {r["use_case"]: key(r) for r in old}, {r["use_case"]: key(r) for r in new}
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


def _bind_drafts(tx: Transaction, version: int, actor: Actor, reason: str) -> list[int]:
    """The drafts ``version`` binds become ``bound`` (published for its use cases), in the caller's write."""
    drafts = [row[0] for row in tx.query(
        "SELECT DISTINCT p.profile_version FROM use_case_lenses l JOIN scoring_profiles p "
        "ON p.profile_version = l.profile_version WHERE l.version = ? AND p.status = 'draft' ORDER BY 1", [version])]
    for draft in drafts:
        tx.execute("UPDATE scoring_profiles SET status = 'bound', published_at = ?, published_by = ?, reason = ? "
                   "WHERE profile_version = ?", [utc_now(), actor.name, f"bound by lens version {version}: {reason}",
                                                 draft])
    return drafts


def save_lenses(store: Store, actor: Actor, rows: list[dict[str, Any]], reason: str) -> int:
    """Write ``rows`` (use_case, profile_version, policy_version: None for the default; steps: CLAIM steps, a list
    or ``a; b`` text, every step when empty; human_review; note) as a new lens version; its number. Pending until a
    different person approves it (``approve_lenses``); the ``system`` role's takes effect at once (its drafts bound,
    its use cases' answers scored again). Needs ``Permission.PROFILE_EDIT``; ``ValidationFailed`` names each bad row
    and field."""
    authorize(store, actor, Permission.PROFILE_EDIT, entity_type=LENS_KIND)
    clean = [_clean(r) for r in rows]
    problems = _problems(store, clean)
    if not _text(reason):
        problems.append(Problem(None, "reason", "say why the lenses change"))
    if problems:
        raise ValidationFailed(problems)
    at_once = actor.role == SYSTEM_ROLE
    changed: list[str] = []

    def fn(tx: Transaction) -> Change:
        before = lens_rows(tx)
        version = int(tx.scalar("SELECT coalesce(max(version), 0) + 1 FROM lens_versions"))
        tx.execute("INSERT INTO lens_versions (version, created_at, created_by, reason) VALUES (?, ?, ?, ?)",
                   [version, utc_now(), actor.name, reason.strip()])
        for row in clean:
            tx.execute("INSERT INTO use_case_lenses (version, use_case, profile_version, policy_version, steps, "
                       "human_review, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [version, row["use_case"], row["profile_version"], row["policy_version"],
                        [s for s in CLAIM_STEPS if s in row["steps"]], row["human_review"], row["note"]])
        after: dict[str, Any] = {"rows": clean, "reason": reason.strip()}
        if at_once:
            after["bound_drafts"] = _bind_drafts(tx, version, actor, reason.strip())
            changed.extend(_changed(before, lens_rows(tx, version)))
        else:
            version_approvals.record_proposal(tx, LENS_KIND, version, actor)
        return Change(LENS_KIND, str(version), {"rows": before}, after, result=version)

    version: int = store.write(actor, f"{LENS_KIND}.publish" if at_once else f"{LENS_KIND}.propose", fn)
    _rescore_use_cases(store, actor, version, changed)
    return version


def approve_lenses(store: Store, actor: Actor, version: int, reason: str) -> RescoreSummary | None:
    """A second person (``Permission.PROFILE_PUBLISH``; neither the version's proposer nor the author of a draft
    profile it binds) puts a pending lens version in force: the drafts it binds become ``bound`` and the answers of
    the use cases whose lens changed are scored again. Returns that score run's summary (None: nothing to score)."""
    authorize(store, actor, Permission.PROFILE_PUBLISH, entity_type=LENS_KIND, entity_id=version)
    for (draft, author) in store.query(
            "SELECT DISTINCT p.profile_version, p.created_by FROM use_case_lenses l JOIN scoring_profiles p "
            "ON p.profile_version = l.profile_version WHERE l.version = ? AND p.status = 'draft'", [version]):
        version_approvals.require_second_person(store, actor, PROFILE_KIND, draft, author, Permission.PROFILE_PUBLISH)
    before = lens_rows(store)

    def take_effect(tx: Transaction) -> None:
        _bind_drafts(tx, version, actor, (reason or "").strip())

    version_approvals.approve(store, actor, LENS_KIND, version, reason, Permission.PROFILE_PUBLISH,
                              in_force=lens_version, take_effect=take_effect)
    return _rescore_use_cases(store, actor, version, _changed(before, lens_rows(store, version)))


def _rescore_use_cases(store: Store, actor: Actor, version: int, use_cases: list[str]) -> RescoreSummary | None:
    """Score again the current scored answers of ``use_cases`` under the lens in force (one audited run)."""
    if not use_cases or lens_version(store) != version:
        return None
    keys = ("SELECT response_key FROM responses WHERE is_current AND list_contains($names, use_case) "
            "AND response_key IN (SELECT response_key FROM current_scores)")
    if not store.scalar(f"SELECT count(*) FROM ({keys})", {"names": use_cases}):
        return None
    shown = ",".join(use_cases[:10]) + (f",+{len(use_cases) - 10}" if len(use_cases) > 10 else "")
    return _write_scores(store, actor, active_profile(store), as_of=None, batch_id=None,
                         keys=(f"lens:v{version}:{shown}", keys, {"names": use_cases}))


def _with_row(store: Store, use_case: str, **changes: Any) -> list[dict[str, Any]]:
    rows = [dict(r) for r in lens_rows(store)]
    mine = next((r for r in rows if r["use_case"] == use_case), None)
    if mine is None:
        mine = {"use_case": use_case, "profile_version": None, "policy_version": None, "steps": list(CLAIM_STEPS),
                "human_review": False, "note": None}
        rows.append(mine)
    mine.update(changes)
    return rows


def bind_profile(store: Store, actor: Actor, use_case: str, profile_version: int | None, reason: str) -> int:
    """Bind ``profile_version`` to ``use_case`` (None: back to the default), keeping every other row and the use
    case's steps: a new lens version, pending unless the ``system`` role saves it (the demo's set-up). Its number."""
    if not _text(use_case):
        raise RegisterError("name the use case to bind a profile to")
    return save_lenses(store, actor, _with_row(store, str(use_case).strip(), profile_version=profile_version), reason)


def set_lens(store: Store, actor: Actor, use_case: str, *, steps: list[str] | str | None = None,
             human_review: bool = False, policy_version: int | None = None, reason: str) -> int:
    """Set ``use_case``'s CLAIM steps (every step when None), human review and mitigation policy (None: the
    active one), keeping its profile binding and every other row: a new lens version, as ``bind_profile``."""
    if not _text(use_case):
        raise RegisterError("name the use case to set a lens for")
    return save_lenses(store, actor, _with_row(store, str(use_case).strip(), steps=_steps(steps),
                                               human_review=human_review, policy_version=policy_version), reason)


def pending_lens_versions(store: Store) -> list[dict]:
    """Lens versions waiting for a second person: version, proposed_by, proposed_role, proposed_at."""
    return version_approvals.pending_versions(store, LENS_KIND)


def lens_history(store: Store) -> list[dict[str, Any]]:
    """Every lens version, newest first: version, created_at, created_by, reason, pending, approved_by, in_force."""
    return store.dicts(
        f"SELECT version, created_at, created_by, reason, {version_approvals.pending_clause(LENS_KIND, 'v.version')} "
        f"AS pending, (SELECT actor_name FROM approval_steps a WHERE a.kind = '{LENS_KIND}' AND a.version = v.version "
        f"AND a.step = 'approved') AS approved_by, v.version = ({IN_FORCE}) AS in_force "
        "FROM lens_versions v ORDER BY version DESC")
