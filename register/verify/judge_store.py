"""The LLM judge's ledger in the register: cached answers (``judge_cache``) and token use per batch (``judge_usage``).

``StoreLedger`` is what ``LLMJudge`` reads its cache from and records each batch to when it runs inside the
register (``python -m register verify``); ``record_judge_batch`` is the audited write behind it. Only
answers that parsed are cached; the API key is never part of anything stored here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.verify.llm_judge import BatchUsage

__all__ = ["StoreLedger", "record_judge_batch", "usage_summary"]


def record_judge_batch(store: Store, actor: Actor, usage: BatchUsage, profile: str,
                       answers: dict[str, tuple[str, str, str]], *, backend: str = "llm",
                       run_id: int | None = None) -> int:
    """Store one batch's usage row and its new cached answers (one transaction, audited); the usage id."""
    authorize(store, actor, Permission.LABEL, entity_type="judge_usage")

    def write(tx: Transaction) -> Change:
        usage_id = int(tx.scalar("SELECT nextval('seq_judge_usage')"))
        now = utc_now()
        tx.execute("INSERT INTO judge_usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [usage_id, now, run_id, backend, profile, usage.model, usage.task, usage.requests, usage.cached,
                    usage.failures, usage.prompt_tokens, usage.completion_tokens, usage.cost])
        if answers:
            tx.executemany("INSERT INTO judge_cache VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                           [[key, task, usage.model, version, content, now]
                            for key, (task, version, content) in answers.items()])
        summary = {"task": usage.task, "model": usage.model, "requests": usage.requests, "cached": usage.cached,
                   "failures": usage.failures, "prompt_tokens": usage.prompt_tokens,
                   "completion_tokens": usage.completion_tokens, "cost": usage.cost, "new_answers": len(answers)}
        return Change("judge_usage", str(usage_id), None, summary, result=usage_id)

    return int(store.write(actor, "judge.batch", write))


class StoreLedger:
    """``LLMJudge``'s ledger over the register's tables, acting as ``actor`` within verification run ``run_id``."""

    def __init__(self, store: Store, actor: Actor, run_id: int | None = None) -> None:
        self.store, self.actor, self.run_id = store, actor, run_id

    def lookup(self, keys: Sequence[str]) -> dict[str, str]:
        """Cached answers of the keys that have one."""
        if not keys:
            return {}
        rows = self.store.query("SELECT cache_key, answer FROM judge_cache WHERE cache_key IN "
                                "(SELECT unnest(?::VARCHAR[]))", [list(keys)])
        return {key: answer for key, answer in rows}

    def record(self, usage: BatchUsage, profile: str, answers: dict[str, tuple[str, str, str]]) -> None:
        """One audited write per batch."""
        record_judge_batch(self.store, self.actor, usage, profile, answers, run_id=self.run_id)


def usage_summary(store: Store, run_id: int | None = None) -> dict[str, Any]:
    """Requests, cached answers, failures, tokens and cost, over one run or all."""
    where, params = ("WHERE run_id = ?", [run_id]) if run_id is not None else ("", [])
    row = store.one("SELECT count(*) AS batches, coalesce(sum(requests), 0) AS requests, "
                    "coalesce(sum(cached), 0) AS cached, coalesce(sum(failures), 0) AS failures, "
                    "coalesce(sum(prompt_tokens), 0) AS prompt_tokens, "
                    "coalesce(sum(completion_tokens), 0) AS completion_tokens, coalesce(sum(cost), 0) AS cost "
                    f"FROM judge_usage {where}", params)
    return row or {}
