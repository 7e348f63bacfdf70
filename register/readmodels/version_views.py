"""Kept views of older profile versions: the read model as it stood when its version stopped being current.

The console can show the scores under any profile version: each current response's latest score under it. For
the current scores that is the read model (``current_scores`` with its summary ``score_summary``); for an older
version it was a join of the version's score rows with the read model -- several times the current view's time
(docs/performance.md, "Figures behind the code"). This module keeps the older view as a table of its own, at no
cost:

* **Kept when it stops being current.** A run over everything (``register.scoring.scorer``) rebuilds the read
  model. When every current score is under one version ``u`` other than the run's, the read model *is* ``u``'s
  view (a response's current score is its latest of all, so under ``u`` it is its latest under ``u``; a response
  with no current score has no score at all). ``keep_before_rebuild`` then renames the two tables to
  ``version_scores_<u>`` and ``version_summary_<u>`` and creates empty ones for the rebuild: a rename, not a copy.
  ``kept_version_views`` (migration 026) lists the versions kept; at most ``keep()`` (``HRI_KEEP_VERSION_VIEWS``,
  by default ``KEEP``; the oldest goes first).
* **Kept exact.** Afterwards ``u``'s view changes in two ways only. An import that revises answers takes their
  old revisions out of every view (``remove_revised``, in the import's transaction; the new revision is scored
  under the active profile, never a kept one, until a run under ``u`` -- the next point). Any score run under ``u``
  (a rescore, a batch, scores imported from Spark) changes which of its rows are latest: the kept view of ``u`` is
  dropped (``forget``) and the console joins the version's rows again. New answers are never under ``u``'s view
  (they are scored under the active profile), and runs under other versions do not touch it. The writers do not
  call these three themselves: the hub does, in their transactions (``register.readmodels.hub.scores_written``
  and ``revisions_written``).
* **Kept on request.** A version not kept (older than those kept, or dropped by a run under it) is read by joining
  its score rows: seconds a page at scale. ``keep_view`` builds its view from those rows (each current
  response's latest score under it), as an admin asks from the Profiles page or ``python -m register keep-view``; from
  then on it is kept exactly as above, and counts against ``keep()`` like the others.
* ``check`` compares every kept view with the view computed from the score rows (the hub's check: every test's
  store at teardown). There is no rebuild: a kept view is exact, or ``forget`` drops it and the console joins its
  version's score rows.

The console reads a kept view exactly as it reads the current one (``register.console.queries.filters.read_model``).
"""

from __future__ import annotations

from collections.abc import Callable

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Cursor, Store, Transaction
from register.errors import NotFound, NothingToKeep
from register.readmodels import current_scores
from register.settings import default, settings

__all__ = ["KEEP", "beyond_limit", "check", "forget", "keep", "keep_before_rebuild", "keep_view", "kept",
           "remove_revised", "tables", "view_state", "view_states"]

KEEP = default("keep_version_views")  # the default of HRI_KEEP_VERSION_VIEWS: older versions kept as tables


def keep() -> int:
    """How many older versions are kept (``HRI_KEEP_VERSION_VIEWS``: each about the size of the read model; the
    rest are joined)."""
    return settings().keep_version_views


def tables(version: int) -> tuple[str, str]:
    """The read-model and summary tables of a kept ``version`` (an integer: safe to name a table with)."""
    v = int(version)
    return f"version_scores_{v}", f"version_summary_{v}"


def kept(cur: Cursor | Store) -> list[int]:
    """The versions kept, oldest first (by the run that kept them: run ids only grow)."""
    return [int(v) for (v,) in cur.query("SELECT profile_version FROM kept_version_views ORDER BY run_id")]


def _create_like(cur: Cursor, table: str, like: str) -> None:
    """CREATE TABLE ``table`` with the columns, types and NOT NULLs of ``like`` (DuckDB has no CREATE ... LIKE)."""
    columns = cur.query("SELECT column_name, data_type, is_nullable FROM duckdb_columns() "
                        "WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index", [like])
    body = ", ".join(f'"{name}" {kind}{"" if nullable else " NOT NULL"}' for name, kind, nullable in columns)
    cur.execute(f"CREATE TABLE {table} ({body})")


def keep_before_rebuild(cur: Cursor, run_version: int, run_id: int) -> int | None:
    """Before a run over everything under ``run_version`` rebuilds the read model: keep it as its version's view
    when every current score is under one other version (module doc). Returns the version kept, or None."""
    versions = cur.query("SELECT DISTINCT profile_version FROM current_scores LIMIT 2")
    if len(versions) != 1 or int(versions[0][0]) == int(run_version):
        return None
    version = int(versions[0][0])
    forget(cur, version)
    limit = keep()
    if not limit:  # none kept: the read model is rebuilt in place (views kept under a higher limit go)
        for older in kept(cur):
            forget(cur, older)
        return None
    scores_table, summary_table = tables(version)
    for live, kept_as in (("current_scores", scores_table), ("score_summary", summary_table)):
        # a table of that name that is no longer kept (migration 033 forgot the views older than its columns)
        cur.execute(f"DROP TABLE IF EXISTS {kept_as}")
        cur.execute(f"ALTER TABLE {live} RENAME TO {kept_as}")
        _create_like(cur, live, kept_as)
    cur.execute("INSERT INTO kept_version_views (profile_version, kept_at, run_id) VALUES (?, now(), ?)",
                [version, int(run_id)])
    for older in beyond_limit(kept(cur), limit):
        forget(cur, older)
    return version


def beyond_limit(held: list[int], limit: int) -> list[int]:
    """The versions of ``held`` (kept, oldest first) that go to keep at most ``limit``: the oldest."""
    return held[:max(0, len(held) - limit)]


def view_state(cur: Cursor | Store, version: int) -> str:
    """How the console reads profile ``version``'s view: ``"current"`` (every current score is under it: the read
    model), ``"kept"`` (a kept view) or ``"joined"`` (from its score rows)."""
    return view_states(cur, [version])[int(version)]


def view_states(cur: Cursor | Store, versions: list[int], held: list[int] | None = None) -> dict[int, str]:
    """``view_state`` of each of ``versions``, with one look at the kept views (``held``: ``kept``, when the caller
    has read it) and one at the read model."""
    held = kept(cur) if held is None else held
    current = [int(v) for (v,) in cur.query("SELECT DISTINCT profile_version FROM current_scores LIMIT 2")]
    return {int(v): "kept" if int(v) in held else "current" if current == [int(v)] else "joined" for v in versions}


def keep_view(store: Store, actor: Actor, version: int,
              progress: Callable[[int, int, str], None] | None = None) -> list[int]:
    """Keep the view of profile ``version`` as a read model of its own, built from its score rows: each current
    response's latest score under it (what the console joins for a version not kept). Needs
    ``Permission.RESCORE``. The oldest kept views beyond ``keep()`` go, and are returned; the build and what it
    dropped are one audited write. Built in slices of response keys (as ``current_scores.rebuild``: the join's
    hash table holds one slice's rows), ``progress(done, total, message)`` after each.

    Refused (``NothingToKeep``) when no view is kept (``HRI_KEEP_VERSION_VIEWS`` is 0), when the version is
    already kept, or when the read model is already its view (every current score is under it); ``NotFound``
    when the version does not exist or scored no current response."""
    authorize(store, actor, Permission.RESCORE, entity_type="profile_version", entity_id=str(version))
    version = int(version)
    if not store.scalar("SELECT count(*) FROM scoring_profiles WHERE profile_version = ?", [version]):
        raise NotFound(f"scoring profile version {version} does not exist")
    limit = keep()

    def build(tx: Transaction) -> Change:
        if not limit:
            raise NothingToKeep("no profile version's view is kept here (HRI_KEEP_VERSION_VIEWS is 0)")
        state = view_state(tx, version)
        if state == "kept":
            raise NothingToKeep(f"the view of profile version {version} is kept already")
        if state == "current":
            raise NothingToKeep(f"every current score is under profile version {version}: the console reads it "
                                "from the current scores")
        scores_table, summary_table = tables(version)
        _create_like(tx, scores_table, "current_scores")
        _create_like(tx, summary_table, "score_summary")
        names = ", ".join(name for name, _ in current_scores.COLUMNS)
        slices = current_scores.key_slices(tx)
        rows = _expected(version, "AND s.response_key >= $lo AND s.response_key < $hi "
                                  "AND r.response_key >= $lo AND r.response_key < $hi")
        for done, (low, high) in enumerate(slices, start=1):
            tx.execute(f"INSERT INTO {scores_table} ({names}) {rows}", {"lo": low, "hi": high})
            if progress:
                progress(done, len(slices), f"version {version}: {done} of {len(slices)} slices of the responses")
        responses = int(tx.scalar(f"SELECT count(*) FROM {scores_table}") or 0)
        if not responses:
            raise NotFound(f"profile version {version} has no score of a current response: nothing to keep")
        tx.execute(f"INSERT INTO {summary_table} "
                   + current_scores.SUMMARY_SELECT.format(sign=1, table=scores_table, where="true"))
        run_id = int(tx.scalar("SELECT coalesce(max(run_id), 0) FROM score_runs") or 0)
        tx.execute("INSERT INTO kept_version_views (profile_version, kept_at, run_id) VALUES (?, now(), ?)",
                   [version, run_id])
        dropped = beyond_limit(kept(tx), limit)
        for older in dropped:
            forget(tx, older)
        return Change("profile_version", str(version), None,
                      {"kept_view": True, "responses": responses, "dropped_views": dropped}, result=dropped)

    return store.write(actor, "profile.keep_view", build)


def forget(cur: Cursor, version: int) -> None:
    """Drop the kept view of ``version`` (nothing when it is not kept): a run under it changes the view."""
    if not cur.scalar("SELECT count(*) FROM kept_version_views WHERE profile_version = ?", [int(version)]):
        return
    for table in tables(version):
        cur.execute(f"DROP TABLE IF EXISTS {table}")
    cur.execute("DELETE FROM kept_version_views WHERE profile_version = ?", [int(version)])


def remove_revised(cur: Cursor, keys: str, params: dict | None = None) -> None:
    """Take the revisions ``keys`` (a SELECT of the response keys that just stopped being current) out of every
    kept view, their summary groups moved by what they took away."""
    for version in kept(cur):
        scores_table, summary_table = tables(version)
        current_scores.refresh(cur, keys, None, params, table=scores_table, summary=summary_table)


def _expected(version: int, narrower: str = "") -> str:
    """The view of ``version`` from the score rows: each current response's latest score row under it, with the
    read model's columns (``narrower``: more conditions, ``AND ...``, on ``r`` and ``s``)."""
    return (f"{current_scores.join_select(f's.profile_version = {int(version)} {narrower}')} "
            "QUALIFY row_number() OVER (PARTITION BY s.response_key ORDER BY s.run_id DESC) = 1")


def check(cur: Cursor | Store, limit: int = 5) -> list[str]:
    """Differences between each kept view (and its summary) and the view computed from the score rows, as
    sentences (at most ``limit`` per version); [] when they agree."""
    problems = []
    for version in kept(cur):
        scores_table, summary_table = tables(version)
        problems += [f"kept view of version {version}: {problem}" for problem in current_scores.check(
            cur, limit, table=scores_table, summary=summary_table, join=_expected(version))]
    return problems
