"""The source verification register, the claims register and the approved-use-case register: read, save an
edit, restore.

Paper sections XI-XIII (Table VII); DOMAIN.md section 7 fixes the vocabularies
(``register.governance.vocabulary``); the use cases are the paper's Scope check's (Fig. 1,
``register.governance.use_cases``). Called by the governance pages (through ``ui.features.governance``),
the file import (``register.governance.transfer``) and the checklist, which hashes
``canonical_rows``.

Every write is a service function taking the acting user: it authorizes first, validates the whole
batch (``register.governance.rows``: pandera, every failure collected with its row number) before
anything is written, checks each row's version inside the transaction (a stale row refuses the
whole save with ``StaleEdit``) and records one audit event per changed row with its before and
after. Deletes are soft (``deleted``) and can be restored. A person's edit of a use case never approves it
(``register.governance.use_cases.change_problems``: approving is a second person's act).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from register.access.permissions import Permission, authorize
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import NotFound, Problem, StaleEdit, ValidationFailed
from register.governance.rows import (
    CLAIM_COLUMNS,
    SOURCE_COLUMNS,
    USE_CASE_COLUMNS,
    normalise_claim,
    normalise_source,
    normalise_use_case,
    validate,
)
from register.governance.use_cases import change_problems
from register.scoring.redecide import any_approved_use_case, redecide_scope, redecide_sources

__all__ = ["RowChanges", "add_row", "canonical_rows", "list_claims", "list_sources", "readable_key", "restore",
           "save_claims", "save_rows", "save_sources", "save_use_cases", "source_row"]


@dataclass
class RowChanges:
    """An edit of a register table: updates carry the row version they were read at."""

    updates: list[dict] = field(default_factory=list)    # {"key", "row_version", "values": {...}, "row"}
    inserts: list[dict] = field(default_factory=list)    # {"values": {...}, "row"}
    deletes: list[dict] = field(default_factory=list)    # {"key", "row_version"}

    def __bool__(self) -> bool:
        return bool(self.updates or self.inserts or self.deletes)


@dataclass(frozen=True)
class _Table:
    """Where one kind of register row lives (identifiers from this module only) and how it is normalised."""

    name: str
    key: str
    columns: tuple[str, ...]
    entity: str
    normalise: Callable[[dict], dict]
    noun: str  # one row, in messages
    # what a save may not do beyond validation, given the actor, the row before (None: new) and after
    guard: Callable[[Actor, int, dict | None, dict], list[Problem]] | None = None


TABLES = {
    "sources": _Table("sources", "source_id", SOURCE_COLUMNS, "source", normalise_source, "source"),
    "claims": _Table("register_claims", "claim_key", CLAIM_COLUMNS, "register_claim", normalise_claim, "claim"),
    "usecases": _Table("use_case_register", "use_case_id", USE_CASE_COLUMNS, "use_case", normalise_use_case,
                       "use case", change_problems),
}
_STATE_COLUMNS = ("row_version", "updated_at", "updated_by", "deleted")


# --- reads --------------------------------------------------------------------------------------------


def list_sources(store: Store, *, role: str | None = None, include_deleted: bool = False) -> pd.DataFrame:
    """The source register (a role sees unrestricted sources and those restricted to it)."""
    where = ["(NOT deleted OR $all)"]
    params: dict[str, Any] = {"all": include_deleted}
    if role is not None and role not in ("admin", "system"):
        where.append("(restricted_to IS NULL OR len(restricted_to) = 0 OR list_contains(restricted_to, $role))")
        params["role"] = role
    return store.frame(
        f"SELECT {', '.join(SOURCE_COLUMNS)}, row_version, updated_at, updated_by, deleted FROM sources "
        f"WHERE {' AND '.join(where)} ORDER BY source_id", params)


def source_row(store: Store, source_id: str, *, role: str | None = None) -> dict | None:
    """One live source's row with its version (None when unknown, deleted or restricted away from ``role``)."""
    restricted = role is not None and role not in ("admin", "system")
    return store.one(
        f"SELECT {', '.join(SOURCE_COLUMNS)}, row_version, updated_at, updated_by FROM sources "
        "WHERE source_id = $id AND NOT deleted AND (NOT $restricted OR restricted_to IS NULL OR "
        "len(restricted_to) = 0 OR list_contains(restricted_to, $role))",
        {"id": source_id, "restricted": restricted, "role": role or ""})


def list_claims(store: Store, *, include_deleted: bool = False) -> pd.DataFrame:
    """The claims register in entry order."""
    return store.frame(
        f"SELECT {', '.join(CLAIM_COLUMNS)}, row_version, updated_at, updated_by, deleted FROM register_claims "
        "WHERE NOT deleted OR ? ORDER BY created_at, claim_key", [include_deleted])


def canonical_rows(store: Store) -> dict:
    """The full content of both registers (deleted rows included) in a canonical, hashable form."""
    return {"claims": store.dicts(f"SELECT {', '.join(CLAIM_COLUMNS)}, deleted, updated_by FROM register_claims "
                                  "ORDER BY claim_key"),
            "sources": store.dicts(f"SELECT {', '.join(SOURCE_COLUMNS)}, deleted, updated_by FROM sources "
                                   "ORDER BY source_id")}


# --- writes -------------------------------------------------------------------------------------------


def _row_state(tx: Store | Transaction, table: _Table, key: str) -> dict | None:
    return _row_states(tx, table, [key]).get(key)


def _row_states(tx: Store | Transaction, table: _Table, keys: list[str]) -> dict[str, dict]:
    """``_row_state`` of each of ``keys`` that has a row, in one query (an import inserts hundreds)."""
    if not keys:
        return {}
    columns = table.columns + _STATE_COLUMNS
    found = tx.query(f"SELECT {', '.join(columns)} FROM {table.name} WHERE list_contains(?, {table.key})", [keys])
    return {row[columns.index(table.key)]: dict(zip(columns, row, strict=True)) for row in found}


def _stale(noun: str, key: str, state: dict) -> StaleEdit:
    at = state["updated_at"]
    when = at.strftime("%Y-%m-%d %H:%M:%S UTC") if isinstance(at, datetime) else str(at)
    return StaleEdit(f"{noun} {key} was changed by {state['updated_by']} at {when} "
                     f"(now version {state['row_version']}), reload")


def _content(state: dict, columns: tuple[str, ...]) -> dict:
    return {c: (list(state[c]) if isinstance(state[c], (list, tuple)) else state[c]) for c in columns}


def _entity(kind: str) -> str:
    """The audit entity type of a register kind (a name the caller got wrong is still audited, as itself)."""
    return TABLES[kind].entity if kind in TABLES else str(kind)


def save_rows(store: Store, actor: Actor, kind: str, changes: RowChanges) -> dict:
    """Apply an edit of the ``kind`` register (sources, claims or usecases); returns counts (updated, inserted,
    deleted, unchanged). ``ValidationFailed`` / ``StaleEdit`` / ``NotFound`` write nothing."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=_entity(kind))
    table = TABLES[kind]
    rows: list[tuple[int, dict]] = []
    problems: list[Problem] = []
    for n, item in enumerate(changes.updates + changes.inserts, start=1):
        row_no = item.get("row", n)
        values = table.normalise(item["values"])
        if "key" in item and values[table.key] != item["key"]:
            problems.append(Problem(row_no, table.key, f"the key of an existing row cannot change (was "
                                                       f"{item['key']!r}); add a new row instead"))
            values[table.key] = item["key"]
        rows.append((row_no, values))
    problems += validate(kind, rows)
    # rows holds the updates, then the inserts
    updates = [(item, values) for item, (_, values) in zip(changes.updates, rows, strict=False)]
    inserts = [values for _, values in rows[len(changes.updates):]]
    if table.guard is not None:  # said beside the validation's problems; checked again inside the write
        problems = sorted(problems + _guard_problems(store, table, actor, updates, rows[len(changes.updates):]),
                          key=lambda p: (p.row or 0, p.column or ""))
    if problems:
        raise ValidationFailed(problems)
    now = utc_now()

    def fn(tx: Transaction) -> Change:
        events: list[tuple[str, str, str | None, Any, Any]] = []  # as Change.extra_events
        counts = {"updated": 0, "inserted": 0, "deleted": 0, "unchanged": 0}
        if kind == "claims":
            wanted = sorted({s for _, v in rows for s in v["source_ids"]})
            known = {sid for (sid,) in tx.query("SELECT source_id FROM sources WHERE list_contains(?, source_id)",
                                                [wanted])} if wanted else set()
            missing = [Problem(n, "source_ids", f"unknown source {s!r}; add it to the source register first")
                       for n, v in rows for s in v["source_ids"] if s not in known]
            if missing:
                raise ValidationFailed(missing)
        if table.guard is not None and (refused := _guard_problems(tx, table, actor, updates,
                                                                   rows[len(changes.updates):])):
            raise ValidationFailed(refused)
        for item, values in updates:
            state = _row_state(tx, table, item["key"])
            if state is None:
                raise NotFound(f"{table.noun} {item['key']} does not exist (deleted meanwhile?), reload")
            if state["row_version"] != item["row_version"]:
                raise _stale(table.noun, item["key"], state)
            before = _content(state, table.columns)
            if before == values:
                counts["unchanged"] += 1
                continue
            _update(tx, table, values, actor, now)
            counts["updated"] += 1
            events.append((f"{table.entity}.update", table.entity, item["key"], before, values))
        states = _row_states(tx, table, [values[table.key] for values in inserts])
        new_rows: list[list[Any]] = []
        for values in inserts:
            state = states.get(values[table.key])
            states[values[table.key]] = {"deleted": False}  # a second insert of the key in this edit is refused
            if state is not None and not state["deleted"]:
                raise ValidationFailed([Problem(None, table.key,
                                                f"{values[table.key]!r} already exists; edit that row")])
            if state is not None:  # a deleted row with this key comes back with the new values
                _update(tx, table, values, actor, now, undelete=True)
            else:
                new_rows.append([values[c] for c in table.columns] + [now, actor.name, now, actor.name])
            counts["inserted"] += 1
            events.append((f"{table.entity}.create", table.entity, values[table.key], None, values))
        _insert(tx, table, new_rows)
        for item in changes.deletes:
            state = _row_state(tx, table, item["key"])
            if state is None:
                raise NotFound(f"{table.noun} {item['key']} does not exist, reload")
            if state["row_version"] != item["row_version"]:
                raise _stale(table.noun, item["key"], state)
            tx.execute(f"UPDATE {table.name} SET deleted = true, row_version = row_version + 1, updated_at = ?, "
                       f"updated_by = ? WHERE {table.key} = ?", [now, actor.name, item["key"]])
            counts["deleted"] += 1
            events.append((f"{table.entity}.delete", table.entity, item["key"], _content(state, table.columns),
                           {"deleted": True}))
        touched.extend(key for _, _, key, _, _ in events if key is not None)
        return Change(table.name, None, None, counts, result=counts, extra_events=events)

    touched: list[str] = []
    approved_before = any_approved_use_case(store) if kind == "usecases" else False
    counts = store.write(actor, f"{table.entity}.save", fn)
    if kind == "sources":  # the answers citing a changed source are decided again at once
        redecide_sources(store, actor, touched)
    elif kind == "usecases":  # and those of a changed use case (the Scope check, the requesters)
        redecide_scope(store, actor, touched, approved_before=approved_before)
    return counts


def _guard_problems(reader: Store | Transaction, table: _Table, actor: Actor, updates: list[tuple[dict, dict]],
                    inserts: list[tuple[int, dict]]) -> list[Problem]:
    """``table.guard`` over every saved row against the row as it is now (a deleted one counts as new), each
    problem named by the row's number in the edit."""
    assert table.guard is not None
    problems: list[Problem] = []
    states = _row_states(reader, table, [item["key"] for item, _ in updates] + [v[table.key] for _, v in inserts])

    def before(key: str) -> dict | None:
        state = states.get(key)
        return None if state is None or state["deleted"] else _content(state, table.columns)

    for n, (item, values) in enumerate(updates, start=1):
        problems += table.guard(actor, item.get("row", n), before(item["key"]), values)
    for n, values in inserts:
        problems += table.guard(actor, n, before(values[table.key]), values)
    return problems


def _insert(tx: Transaction, table: _Table, rows: list[list[Any]]) -> None:
    """Insert new register rows (the table's columns, then created_at, created_by, updated_at, updated_by) as
    version 1, a chunk of them per statement."""
    placeholders = f"({', '.join('?' for _ in table.columns)}, 1, ?, ?, ?, ?, false)"
    tx.insert_values(f"INSERT INTO {table.name} ({', '.join(table.columns)}, row_version, created_at, created_by, "
                     f"updated_at, updated_by, deleted)", placeholders, rows)


def _update(tx: Transaction, table: _Table, values: dict, actor: Actor, now, undelete: bool = False) -> None:
    sets = ", ".join(f"{c} = ?" for c in table.columns if c != table.key)
    tx.execute(
        f"UPDATE {table.name} SET {sets}, row_version = row_version + 1, updated_at = ?, updated_by = ?"
        f"{', deleted = false' if undelete else ''} WHERE {table.key} = ?",
        [values[c] for c in table.columns if c != table.key] + [now, actor.name, values[table.key]])


def save_sources(store: Store, actor: Actor, changes: RowChanges) -> dict:
    """Apply an edit of the source register; returns counts. ``ValidationFailed`` / ``StaleEdit`` write nothing."""
    return save_rows(store, actor, "sources", changes)


def save_claims(store: Store, actor: Actor, changes: RowChanges) -> dict:
    """Apply an edit of the claims register; returns counts. ``ValidationFailed`` / ``StaleEdit`` write nothing."""
    return save_rows(store, actor, "claims", changes)


def save_use_cases(store: Store, actor: Actor, changes: RowChanges) -> dict:
    """Apply an edit of the use-case register; returns counts. ``ValidationFailed`` / ``StaleEdit`` write nothing;
    a person's edit never approves (``register.governance.use_cases.change_problems``)."""
    return save_rows(store, actor, "usecases", changes)


# a key made for a row added by hand: the prefix of its kind and the first words of its title or statement
KEY_PREFIX = {"sources": "src", "claims": "clm", "usecases": "uc"}
KEY_TEXT = {"sources": ("title", "ref"), "claims": ("statement",), "usecases": ("purpose",)}
MAX_SLUG = 40


def _slug(text: str) -> str:
    slug = ""
    for word in re.findall(r"[^\W_]+", text.casefold()):
        if slug and len(slug) + 1 + len(word) > MAX_SLUG:
            break
        slug = f"{slug}-{word}" if slug else word[:MAX_SLUG]
    return slug or "row"


def readable_key(store: Store, kind: str, text: str) -> str:
    """A new, readable key for a row added by hand: ``src-nist-ai-rmf-1-0`` from the title "NIST AI RMF 1.0",
    then ``-2``, ``-3``, ... when that key is taken (deleted rows included, since a restore brings them back).

    Rows imported from files keep their hash-derived keys (``register.governance.rows``): importing the same
    file again must find the same rows.
    """
    table = TABLES[kind]
    base = f"{KEY_PREFIX[kind]}-{_slug(text)}"
    taken = {k for (k,) in store.query(f"SELECT {table.key} FROM {table.name} WHERE starts_with({table.key}, ?)",
                                       [base])}
    if base not in taken:
        return base
    return next(f"{base}-{n}" for n in range(2, len(taken) + 3) if f"{base}-{n}" not in taken)


def add_row(store: Store, actor: Actor, kind: str, values: dict) -> str:
    """Add one source, claim or use case (the "add" forms); returns its key. A blank key gets a ``readable_key``
    from the title (sources), statement (claims) or purpose (use cases). Refused like any save
    (``ValidationFailed`` names the field as the column, with row 1)."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=_entity(kind))  # before readable_key's read
    table = TABLES[kind]
    values = dict(values)
    if not str(values.get(table.key) or "").strip():
        text = next((str(values[f]) for f in KEY_TEXT[kind] if str(values.get(f) or "").strip()), "")
        values[table.key] = readable_key(store, kind, text) if text else None
    save_rows(store, actor, kind, RowChanges(inserts=[{"values": values, "row": 1}]))
    return values[table.key]


def restore(store: Store, actor: Actor, kind: str, key: str) -> None:
    """Bring back a soft-deleted source, claim or use case."""
    authorize(store, actor, Permission.REGISTER_EDIT, entity_type=_entity(kind), entity_id=key)
    table = TABLES[kind]

    def fn(tx: Transaction) -> Change:
        state = _row_state(tx, table, key)
        if state is None or not state["deleted"]:
            raise NotFound(f"{table.noun} {key} is not deleted")
        tx.execute(f"UPDATE {table.name} SET deleted = false, row_version = row_version + 1, updated_at = ?, "
                   f"updated_by = ? WHERE {table.key} = ?", [utc_now(), actor.name, key])
        return Change(table.entity, key, {"deleted": True}, {"deleted": False})

    approved_before = any_approved_use_case(store) if kind == "usecases" else False
    store.write(actor, f"{table.entity}.restore", fn)
    if kind == "sources":
        redecide_sources(store, actor, [key])
    elif kind == "usecases":
        redecide_scope(store, actor, [key], approved_before=approved_before)
