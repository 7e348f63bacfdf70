"""The one place writers keep the read models in step: typed change events, and the check and rebuild of them all.

A writer of responses or scores does not call the read models one by one. It describes what it changes as an
event and makes one call here, in its own transaction; the hub keeps every read model the change touches in step,
in the order they need. Which read models a change touches follows from the event's fields, not from who wrote it.

* ``revisions_written(tx, RevisionsWritten(...))``: around a write that adds response revisions with their claims,
  some of which may take the place of current ones (an import's merge, ``register.ingest.records``; the synthetic
  copies, ``register.ingest.replicate``). Before the write, the source counts of the claims that stop being
  current (``claim_counts.counted``, read while they still are); after it, ``response_ids.record``,
  ``claim_counts.move`` and, when revisions stopped being current, ``current_scores.refresh`` (their rows go)
  and ``version_views.remove_revised``.
* ``scores_written(tx, ScoresWritten(...))``: around a write of one score run (``register.scoring.scorer``, a
  Spark job's run, ``register.scoring.spark_exchange``). Before it, the kept view of the run's profile version
  goes (``version_views.forget``) and a run over everything keeps the read model as its version's view when it
  holds one other version only (``version_views.keep_before_rebuild``); after it, ``current_scores.rebuild``
  (everything) or ``refresh`` (the responses the run scored).
* ``revisions_committed(store, actor)``: after any write of revisions has committed, the read models kept in
  transactions of their own catch up: the search index (``search_index.catch_up``). Every path that writes
  revisions ends in it: an import and a quarantine fix (``register.ingest.importer``), the synthetic copies and
  the revisions made in the register (``register.ingest.revise``: adjudication, annotation, feedback,
  verification). Now, or in the background: where a background indexer runs for the store (the console's,
  ``search_catchup``), every one of them hands the catch-up to it; an import may also leave it for later
  (``import --defer-index``).
* ``check(store)`` and ``rebuild(store, actor)``: every read model against what it is computed from, and every one
  made again.

A change event is a context manager: the writer's statements go inside it, so what must be read before the write
(the counts of the claims it supersedes, the read model it keeps) is read before, and the rest follows it. Nothing
is done after a statement of the write fails: the transaction rolls back whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction
from register.readmodels import (
    claim_counts,
    current_scores,
    response_ids,
    search_catchup,
    search_check,
    search_index,
    version_views,
)

__all__ = ["CHECKS", "RevisionsWritten", "ScoresWritten", "check", "rebuild", "revisions_committed",
           "revisions_written", "scores_written"]

ProgressFn = Callable[[int, "int | None", str], None]


@dataclass(frozen=True)
class RevisionsWritten:
    """Response revisions a write adds, with their claims, all current.

    ``added``: a SELECT of two columns, each new revision's response id and its key (a temporary table of the
    writer's, read after the write). ``superseded``: a SELECT of the keys of the revisions that stop being current
    because of them -- their claims stop being current too -- or None when none does (new responses only). The new
    revisions are never scored in the write that adds them: the score run that scores them brings them into the
    current scores (``ScoresWritten``)."""

    added: str
    superseded: str | None = None


@dataclass(frozen=True)
class ScoresWritten:
    """A score run a write stores: its rows become the current scores of the revisions it scored.

    ``profile_version`` and ``run_id``: the run's. ``scored``: a SELECT of the keys of the current revisions it
    scores (named ``$`` parameters in ``params``: a batch of responses, or the revisions a Spark job scored), or
    None when it scores every current response (a run over everything: the read model is made again, and first kept
    as its version's view when every current score is under one other version)."""

    profile_version: int
    run_id: int
    scored: str | None = None
    params: dict | None = None


@contextmanager
def revisions_written(tx: Transaction, change: RevisionsWritten) -> Iterator[None]:
    """Keep the read models in step with the write of revisions the ``with`` block makes in ``tx`` (module doc)."""
    superseded = change.superseded
    gone = claim_counts.counted(tx, f"response_key IN ({superseded})") if superseded is not None else None
    yield
    response_ids.record(tx, change.added)
    claim_counts.move(tx, gone, f"response_key IN (SELECT k FROM ({change.added}) AS n(i, k))", gone_keys=superseded)
    if superseded is not None:
        # a superseded revision's current score was its own: the read model drops it until the new revision is
        # scored (as the join of current responses and current scores does), and so does every kept view
        current_scores.refresh(tx, superseded, None)
        version_views.remove_revised(tx, superseded)


@contextmanager
def scores_written(tx: Transaction, change: ScoresWritten) -> Iterator[int | None]:
    """Keep the read models in step with the score run the ``with`` block writes in ``tx`` (module doc); yields
    the profile version whose view was kept before a run over everything, or None."""
    # a run under a version changes which of its rows are latest: its kept view (if any) goes; a run over
    # everything first keeps the read model as its version's view when it holds one version only
    version_views.forget(tx, change.profile_version)
    kept = (version_views.keep_before_rebuild(tx, change.profile_version, change.run_id)
            if change.scored is None else None)
    yield kept
    if change.scored is None:
        current_scores.rebuild(tx)
    else:
        current_scores.refresh(tx, change.scored, change.scored, change.params)


def revisions_committed(store: Store, actor: Actor, *, progress: ProgressFn | None = None,
                        defer: bool | None = None) -> int | None:
    """After a write of revisions has committed: the search index catches up with them, in slices of keys of its
    own transactions (``search_index.catch_up``, audited ``search.indexed``; until then a search scans them:
    never stale, only slower). ``progress(done, total, message)`` after each slice. Needs the import permission,
    which every writer of revisions holds.

    When: ``defer=False``, now (the command line's import: scripts read the index after it); ``defer=True``, later
    -- by the background indexer of this process when one runs for ``store`` (woken now), else by ``python -m
    register search-index`` or the next catch-up; ``None`` (every writer inside the register, and the console's
    imports), the background indexer's when one runs (``search_catchup``: the console's), else now. Returns how
    many revisions were indexed now, or None when the catch-up was left to the background or to later."""
    if defer is not False and search_catchup.hand_over(store):
        return None
    if defer:
        return None
    return search_index.catch_up(store, actor, progress=progress)


# every read model's check, by the name its problems are reported under
CHECKS: tuple[tuple[str, Callable[[Store], list[str]]], ...] = (
    ("current_scores", current_scores.check),
    ("version_views", version_views.check),
    ("search_index", search_check.check),
    ("claim_counts", claim_counts.check),
    ("response_ids", response_ids.check),
)


def check(store: Store) -> list[str]:
    """Every read model against what it is computed from, as sentences naming the read model; [] when all agree.
    Each check reads the whole of its read model and of its source (every test's store runs it at teardown)."""
    return [f"{name}: {problem}" for name, run in CHECKS for problem in run(store)]


def rebuild(store: Store, actor: Actor, *, progress: ProgressFn | None = None) -> None:
    """Make every read model that has a rebuild again from the register's tables. Needs ``Permission.RESCORE``.

    In one audited transaction (``readmodels.rebuilt``): ``current_scores`` with its summary (from the join of
    current responses and current scores, in slices of keys) and ``claim_counts`` (a recount). Then the search
    index from nothing (``search_index.rebuild``: emptied in one transaction, caught up in slices of their own).
    Two have no rebuild: ``version_views`` (a kept view is exact or dropped; ``version_views.forget`` drops one
    that ``check`` finds wrong, and the console then joins its version's score rows) and ``response_ids`` (written
    by every writer of responses and by its migration, 028; nothing rebuilds it)."""
    authorize(store, actor, Permission.RESCORE, entity_type="read_models")

    def write(tx: Transaction) -> Change:
        current_scores.rebuild(tx)
        claim_counts.rebuild(tx)
        return Change("read_models", None, None, {"rebuilt": ["current_scores", "score_summary", "claim_counts"]})

    store.write(actor, "readmodels.rebuilt", write)
    search_index.rebuild(store, actor, progress=progress)
