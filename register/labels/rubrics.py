"""The labelling rubric as versioned data in the register (table ``rubric_versions``, migration 013).

Like the minimum evidence rules, a rubric is never edited: publishing writes a new version and the
newest version is the one in force. Version 1 of an empty database is the shipped
``data/rubrics/default.json`` (``ensure_default_rubric``). Every version is validated by
``hri_core.rubric.rubric_from_dict`` before it is stored, and must agree with the active scoring
profile's default dimensions (``hri_core.rubric.profile_mismatches``): a rubric that told annotators to
label for dimensions the scorer does not use would make checklist item 7 untrue.

``criticality_flags`` lists the current claims labelled below their category's minimum criticality
(rubric in force), in one SQL statement over the stored ``claims.category`` (migration 009).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from hri_core.rubric import DEFAULT_RUBRIC_FILE, Rubric, RubricError, profile_mismatches, rubric_from_dict
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import LabellingError, NotFound
from register.scoring.profiles import active_profile

__all__ = ["DEFAULT_RUBRIC_PATH", "criticality_flags", "current_rubric", "current_rubric_version",
           "ensure_default_rubric", "get_rubric", "publish_rubric", "rubric_versions"]

DEFAULT_RUBRIC_PATH = Path(__file__).resolve().parents[2] / DEFAULT_RUBRIC_FILE


def current_rubric_version(store: Store) -> int | None:
    """The version in force (the newest), or None before any rubric was published."""
    return store.scalar("SELECT max(rubric_version) FROM rubric_versions")


def get_rubric(store: Store, version: int) -> Rubric:
    """One stored rubric version, validated."""
    text = store.scalar("SELECT rubric FROM rubric_versions WHERE rubric_version = ?", [version])
    if text is None:
        raise NotFound(f"rubric version {version} does not exist")
    return rubric_from_dict(json.loads(text))


def current_rubric(store: Store) -> Rubric | None:
    """The rubric in force, or None before any was published."""
    version = current_rubric_version(store)
    return None if version is None else get_rubric(store, version)


def rubric_versions(store: Store) -> pd.DataFrame:
    """Every version, newest first: its name, agreement threshold, who published it, when and why."""
    return store.frame("SELECT rubric_version, name, min_agreement_alpha, fingerprint, created_at, created_by, "
                       "reason FROM rubric_versions ORDER BY rubric_version DESC")


def publish_rubric(store: Store, actor: Actor, data: dict[str, Any], reason: str) -> int:
    """Store ``data`` (a rubric's JSON form) as the next version, in force from now. Returns the version.

    The stored version number is the register's, whatever ``data["version"]`` says. Refused with every
    problem named when the rubric is invalid, disagrees with the active profile, or has no reason.
    """
    authorize(store, actor, Permission.RUBRIC_EDIT, entity_type="rubric")
    if not (reason or "").strip():
        raise LabellingError("rubric not published: say why it changes (reason)")
    try:
        rubric = rubric_from_dict(data)
    except RubricError as error:
        raise LabellingError(f"rubric not published: {error}") from error
    mismatches = profile_mismatches(rubric, active_profile(store))
    if mismatches:
        raise LabellingError("rubric not published: " + "; ".join(f"{p.loc}: {p.message}" for p in mismatches))

    def fn(tx: Transaction) -> Change:
        previous = tx.scalar("SELECT max(rubric_version) FROM rubric_versions")
        version = (previous or 0) + 1
        stored = rubric.model_copy(update={"version": version})
        body = stored.model_dump(mode="json")
        tx.execute("INSERT INTO rubric_versions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [version, stored.name, json.dumps(body), stored.fingerprint(), stored.min_agreement_alpha,
                    utc_now(), actor.name, reason.strip()])
        before = None if previous is None else {"rubric_version": previous}
        return Change("rubric", str(version), before,
                      {"name": stored.name, "fingerprint": stored.fingerprint(),
                       "min_agreement_alpha": stored.min_agreement_alpha, "reason": reason.strip()}, result=version)

    return store.write(actor, "rubric.publish", fn)


def ensure_default_rubric(store: Store, actor: Actor) -> int:
    """The shipped rubric (``data/rubrics/default.json``) as version 1 when no rubric exists yet."""
    version = current_rubric_version(store)
    if version is not None:
        return version
    data = json.loads(DEFAULT_RUBRIC_PATH.read_text(encoding="utf-8"))
    return publish_rubric(store, actor, data, f"shipped rubric {DEFAULT_RUBRIC_FILE}")


def criticality_flags(store: Store, rubric: Rubric | None = None) -> pd.DataFrame:
    """Current claims whose criticality is below their category's minimum in the rubric (in force by default).

    Columns: response_id, claim_id, category, criticality, min_criticality, rubric_version, message.
    """
    rubric = rubric if rubric is not None else current_rubric(store)
    columns = ["response_id", "claim_id", "category", "criticality", "min_criticality", "rubric_version", "message"]
    if rubric is None:
        return pd.DataFrame(columns=columns)
    minimums = [(g.category, g.min_criticality) for g in rubric.categories if g.min_criticality is not None]
    if not minimums:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(minimums, columns=["category", "min_criticality"])
    with store.cursor() as cur, cur.relation("_rubric_minimums", frame):
        flagged = cur.frame("""
            SELECT c.response_id, c.claim_id, m.category, c.criticality, m.min_criticality
            FROM claims c JOIN _rubric_minimums m ON m.category = c.category
            WHERE c.is_current AND c.criticality < m.min_criticality
            ORDER BY c.response_id, c.claim_id""")
    flagged["rubric_version"] = rubric.version
    flagged["message"] = [f"a {cat} claim has criticality {crit}; rubric v{rubric.version} requires at least {least}"
                          for cat, crit, least in zip(flagged["category"], flagged["criticality"],
                                                      flagged["min_criticality"], strict=True)]
    return flagged[columns]
