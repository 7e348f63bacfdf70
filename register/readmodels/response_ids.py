"""A response's revisions found by its id through ``response_ids`` (migration 028), not a scan of every id.

``record`` is called in the transaction of every write of ``responses`` by the hub
(``register.readmodels.hub.revisions_written``); ``revisions`` is the lookup; ``check`` compares the table with
the responses (the hub's check: every test's store runs it at teardown). Nothing rebuilds it: its migration filled
it, and every writer of responses keeps it.
"""

from __future__ import annotations

from register.db.sql import multiset_differences
from register.db.store import Store, Transaction

__all__ = ["check", "largest_key", "record", "revisions", "revisions_select"]

# the revisions with the bound id $id: the keys whose hash matches, then those rows by key (zone maps narrow the
# read of responses to their row groups), the id itself compared too (two ids may share a hash)
_KEYS = "SELECT response_key FROM response_ids WHERE id_hash = md5_number_lower({id})"


def largest_key(store: Store | Transaction) -> int:
    """The highest response key given so far (0 for none): keys come from one sequence and only grow, so every
    revision written later has a key above it."""
    return int(store.scalar("SELECT coalesce(max(response_key), 0) FROM responses") or 0)


def revisions_select(id_param: str) -> str:
    """A WHERE condition on ``responses`` keeping the revisions of the response whose id is bound as ``id_param``
    (e.g. ``"?"`` or ``"$id"``: the id appears twice, so a positional ``?`` must be bound twice)."""
    return f"response_key IN ({_KEYS.format(id=id_param)}) AND response_id = {id_param}"


def revisions(store: Store | Transaction, response_id: str, columns: str = "revision, response_key, is_current"
              ) -> list[tuple]:
    """``columns`` of every revision of ``response_id``, oldest first (empty when there is none)."""
    return store.query(f"SELECT {columns} FROM responses WHERE {revisions_select('$id')} ORDER BY revision",
                       {"id": response_id})


def record(tx: Transaction, ids_and_keys: str, params: dict | None = None) -> None:
    """Record the new revisions that ``ids_and_keys`` selects (two columns: the response id, the revision's key)."""
    tx.execute(f"INSERT INTO response_ids SELECT md5_number_lower(i), k FROM ({ids_and_keys}) AS n(i, k) "
               f"ORDER BY 1, 2", params or {})


def check(store: Store) -> list[str]:
    """Differences between ``response_ids`` and the responses (empty when every revision is there once, hashed
    right, and nothing else is)."""
    expected = "SELECT md5_number_lower(response_id), response_key FROM responses"
    stored = "SELECT id_hash, response_key FROM response_ids"
    missing, extra = multiset_differences(store, expected, stored)
    problems = []
    if missing:
        problems.append(f"{missing} response revision(s) not in response_ids (or hashed wrongly)")
    if extra:
        problems.append(f"{extra} row(s) of response_ids match no response revision")
    return problems
