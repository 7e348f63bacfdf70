"""Verifying answers already in the register (the console's "Verify stored answers"): the same pipeline as
``python -m register verify INPUT.jsonl``, fed from the current revisions instead of a file.

Each stored answer is read back as the input line it would have been (question, answer, retrieved context,
target, use case, model, stakes) and checked by the same parser, so a stored answer the pipeline cannot take
(e.g. no answer text) is named with its field and the others go through. An answer without claims gets the
verified claims as its next revision, keeping its creation time; an answer that has claims keeps them: the
judge's verdicts on them wait as proposals until a person confirms them, and only a reviewer starts such a run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from hri_core.judging import Judge
from register.access.permissions import Permission, authorize
from register.db.store import Actor, Store
from register.errors import NotFound, RegisterError
from register.verify.pipeline import LINK_THRESHOLD, Progress, VerifyInput, VerifyReport, parse_input, verify

__all__ = ["MAX_SELECTION", "VerifyReport", "candidates", "stored_inputs", "verify_stored"]

MAX_SELECTION = 1_000  # answers per run from the console: a run's progress stays readable, its revision one batch

_INPUT_COLUMNS = ("question", "answer", "gt_answer", "use_case", "model", "stakes")


def candidates(store: Store, *, with_claims: bool = False, limit: int = MAX_SELECTION) -> pd.DataFrame:
    """Current answers that can be verified, newest first: those without claims, and with ``with_claims``
    also those that have claims (judged as they stand, into proposals; a reviewer's run). Columns: response_id,
    use_case, model, created_at, claim_count, context_chunks."""
    return store.frame("""
        SELECT response_id, use_case, model, created_at, claim_count,
               coalesce(json_array_length(retrieved_context), 0)::INTEGER AS context_chunks
        FROM responses
        WHERE is_current AND answer IS NOT NULL AND trim(answer) <> '' AND (? OR claim_count = 0)
        ORDER BY created_at DESC NULLS LAST, response_id LIMIT ?""", [with_claims, limit])


def stored_inputs(store: Store, response_ids: Sequence[str]) -> tuple[list[VerifyInput], list[str]]:
    """The current revisions of ``response_ids`` as pipeline inputs, and the problems of those that cannot be
    verified (each naming the response and the field). ``NotFound`` names ids with no current response."""
    ids = list(dict.fromkeys(str(i) for i in response_ids))
    rows = {row["response_id"]: row for row in store.dicts(
        f"SELECT response_id, {', '.join(_INPUT_COLUMNS)}, retrieved_context, created_at FROM responses "
        "WHERE is_current AND list_contains(?, response_id)", [ids])}
    missing = [i for i in ids if i not in rows]
    if missing:
        raise NotFound(f"no current response {', '.join(missing[:10])}" + (" ..." if len(missing) > 10 else ""))
    inputs, problems = [], []
    for position, response_id in enumerate(ids, start=1):
        row = rows[response_id]
        line = {"response_id": response_id, **{name: row[name] for name in _INPUT_COLUMNS},
                "retrieved_context": json.loads(row["retrieved_context"]) if row["retrieved_context"] else []}
        parsed = parse_input(position, json.dumps(line, ensure_ascii=False), where=f"response {response_id}")
        if isinstance(parsed, VerifyInput):
            inputs.append(replace(parsed, created_at=row["created_at"]))
        else:
            problems += parsed
    return inputs, problems


def verify_stored(store: Store, actor: Actor, response_ids: Sequence[str], judge: Judge, *,
                  link_threshold: float = LINK_THRESHOLD, progress: Progress | None = None) -> VerifyReport:
    """Verify the current revisions of ``response_ids`` (at most ``MAX_SELECTION``) with ``judge``, as the
    ``verify`` command verifies a file; the report's ``problems`` name the answers left out and why."""
    authorize(store, actor, Permission.LABEL, entity_type="verification_run")
    if not response_ids:
        raise RegisterError("choose at least one answer to verify")
    if len(set(response_ids)) > MAX_SELECTION:
        raise RegisterError(f"{len(set(response_ids)):,} answers chosen: verify at most {MAX_SELECTION:,} at a time")
    inputs, problems = stored_inputs(store, response_ids)
    if not inputs:
        raise RegisterError("none of the chosen answers can be verified: " + "; ".join(problems))
    report = verify(store, actor, inputs, judge, source_name=f"console selection of {len(inputs)} answer(s)",
                    link_threshold=link_threshold, progress=progress)
    report.problems.extend(problems)
    return report
