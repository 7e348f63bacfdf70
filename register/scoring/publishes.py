"""A profile's publish as one step that either completes or is resumed (``profile_publishes``, migration 040).

Publishing a scoring profile is two transactions: the draft is made active (``register.scoring.profiles.activate``),
then every current response is rescored under it (``register.scoring.scorer.rescore``). The rescore of a large
register takes minutes; a process killed between the two left the new version active while every score stayed under
the old one, and nothing said so. So the activation records the publish here, pending, in its own transaction
(``record_pending``), and the full rescore under that version completes it in the rescore's transaction
(``complete``). Until then ``incomplete_publish`` names it: ``python -m register status`` and the Profiles page say
"publish of version N incomplete: scores are under version M", and either finishes it (``rescore``, or the same
publish again: ``register.scoring.profiles.publish`` / ``resume_publish``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from register.db.store import Actor, Store, Transaction, utc_now

__all__ = ["RESUME_COMMAND", "IncompletePublish", "complete", "incomplete_publish", "record_pending"]

RESUME_COMMAND = "python -m register rescore"  # a full rescore under the active profile completes its publish


@dataclass(frozen=True)
class IncompletePublish:
    """A publish whose activation committed and whose rescore never did."""

    version: int  # the version made active
    scores_version: int | None  # the version the current scores are under (None: there was none active)
    published_at: datetime
    published_by: str

    def message(self) -> str:
        """The one line that says so: "publish of version N incomplete: scores are under version M"."""
        under = f"version {self.scores_version}" if self.scores_version is not None else "no published version"
        return f"publish of version {self.version} incomplete: scores are under {under}"


def record_pending(tx: Transaction, version: int, actor: Actor, previous_active: list[int]) -> int | None:
    """In the activation's transaction: ``version``'s publish is pending until its rescore. Returns the version the
    current scores are under: an earlier publish's, when that one never completed (it is superseded: its rescore
    would no longer make the active profile's scores current), else the version active until now."""
    earlier = tx.query_one("SELECT scores_version FROM profile_publishes WHERE rescore_run IS NULL "
                           "AND superseded_by IS NULL ORDER BY profile_version DESC LIMIT 1")
    scores_version = earlier[0] if earlier is not None else (max(previous_active) if previous_active else None)
    tx.execute("UPDATE profile_publishes SET superseded_by = ? WHERE rescore_run IS NULL AND superseded_by IS NULL",
               [version])
    tx.execute("INSERT INTO profile_publishes (profile_version, scores_version, published_at, published_by) "
               "VALUES (?, ?, ?, ?)", [version, scores_version, utc_now(), actor.name])
    return scores_version


def complete(tx: Transaction, version: int, fingerprint: str, run_id: int) -> bool:
    """In a rescore of every current response under ``version`` (with its stored parameters: ``fingerprint``):
    that version's pending publish, if any, is complete with run ``run_id``. True when one was."""
    done = tx.execute(
        "UPDATE profile_publishes SET rescore_run = ?, completed_at = ? WHERE profile_version = ? "
        "AND rescore_run IS NULL AND superseded_by IS NULL AND EXISTS (SELECT 1 FROM scoring_profiles p "
        "WHERE p.profile_version = ? AND p.fingerprint = ? AND p.status = 'active')",
        [run_id, utc_now(), version, version, fingerprint])
    return bool(done)


def incomplete_publish(store: Store | Transaction) -> IncompletePublish | None:
    """The publish whose rescore has not completed it, or None when every publish completed."""
    row = store.query_one("SELECT profile_version, scores_version, published_at, published_by FROM profile_publishes "
                          "WHERE rescore_run IS NULL AND superseded_by IS NULL ORDER BY profile_version DESC LIMIT 1")
    return None if row is None else IncompletePublish(*row)
