"""Canonical JSON and its SHA-256: the one definition every stored hash and fingerprint is computed with.

``canonical_json`` is ``json.dumps`` with sorted keys; ``fingerprint`` is the lowercase hex SHA-256 of its
UTF-8 bytes. The hashes computed with them are stored and compared later (a response's ``content_hash``,
a profile's, rubric's, authority table's or mitigation policy's ``fingerprint``, a checklist run's hash,
an audit event's hash, an answer cache key, a derived response id): their bytes must never change, or
stored hashes stop matching and the audit chain breaks. The options below exist because the stored hashes
were made with these variants, and each caller keeps its own:

* ``ensure_ascii`` (default True): non-ASCII text as ``\\uXXXX`` escapes; False writes it as UTF-8
  (the audit trail, the answer cache, verification response ids);
* ``other_types`` (default ``"refuse"``): a value JSON has no type for (a datetime, a date, a Decimal)
  is a ``TypeError``; ``"str"`` writes its ``str()`` (``2026-03-01 09:30:00+00:00``, ``1.10``) as a
  JSON string (the audit trail's before/after values, checklist runs);
* ``compact`` (default True): no spaces (``{"a":1,"b":[1,2]}``); False keeps ``json.dumps``'s default
  separators ``", "`` and ``": "`` (the answer cache, verification response ids).

Everything else is ``json.dumps``'s default: ``NaN``/``Infinity`` written as such, floats as ``repr``.
Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

__all__ = ["OtherTypes", "canonical_json", "fingerprint", "sha256_hex"]

OtherTypes = Literal["refuse", "str"]

_COMPACT = (",", ":")
_SPACED = (", ", ": ")


def canonical_json(value: Any, *, ensure_ascii: bool = True, other_types: OtherTypes = "refuse",
                   compact: bool = True) -> str:
    """``value`` as JSON text with sorted keys (the options: module docstring)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=ensure_ascii, separators=_COMPACT if compact else _SPACED,
                      default=str if other_types == "str" else None)


def fingerprint(value: Any, *, ensure_ascii: bool = True, other_types: OtherTypes = "refuse",
                compact: bool = True) -> str:
    """Hex SHA-256 of ``canonical_json(value)`` with the same options."""
    return sha256_hex(canonical_json(value, ensure_ascii=ensure_ascii, other_types=other_types, compact=compact))


def sha256_hex(text: str) -> str:
    """Hex SHA-256 of ``text``'s UTF-8 bytes (a lone surrogate is a ``UnicodeEncodeError``, as ``str.encode``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
