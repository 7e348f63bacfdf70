"""Checks every per-use-case table shares: the requesters of the Authority rules (``authority_rules``) and the
use-case lenses (``lens_versions``) each hold one row per use case, named as the answers' ``use_case`` field
says it, with a short note. Each check returns the row's problems, named by row number and field."""

from __future__ import annotations

from register.errors import Problem

__all__ = ["MAX_NAME", "MAX_NOTE", "name_problems", "note_problems"]

MAX_NAME = 200  # a use case name or a role: a short label, never a document
MAX_NOTE = 2000


def name_problems(n: int, name: str | None, seen: set[str]) -> list[Problem]:
    """Row ``n``'s use case name: present, short, and not a name an earlier row used (``seen``, updated)."""
    if name is None:
        return [Problem(n, "use_case", "name the use case (as the answers' use_case field says it)")]
    if len(name) > MAX_NAME:
        return [Problem(n, "use_case", f"at most {MAX_NAME} characters")]
    if name in seen:
        return [Problem(n, "use_case", f"{name[:60]!r} is listed twice")]
    seen.add(name)
    return []


def note_problems(n: int, note: str | None) -> list[Problem]:
    """Row ``n``'s note: none, or at most ``MAX_NOTE`` characters."""
    return [Problem(n, "note", f"at most {MAX_NOTE} characters")] if note is not None and len(note) > MAX_NOTE else []
