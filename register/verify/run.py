"""The judge a register command runs: the profile's backend, with the LLM judge's cache and usage in the register."""

from __future__ import annotations

from hri_core.judging import Judge, JudgeProfile
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.verify.judge_cli import judge_for

__all__ = ["judge_in_register"]


def judge_in_register(profile: JudgeProfile, store: Store, actor: Actor) -> Judge:
    """``judge_for(profile)``; an LLM judge records its cached answers and token use in the register.

    The actor must be allowed to label (what a judge's run produces), checked before the profile is read:
    whoever may not run a judge learns nothing from the attempt but the refusal."""
    authorize(store, actor, Permission.LABEL, entity_type="judge_usage")
    if profile.backend == "llm":
        from register.verify.judge_store import StoreLedger
        from register.verify.llm_judge import llm_judge_from_settings

        return llm_judge_from_settings(profile, StoreLedger(store, actor))
    return judge_for(profile)
