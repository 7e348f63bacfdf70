"""Cursor paging and plain JSON values for the API's lists.

A cursor is opaque to clients: the position of the next page, bound to the query that made it (a cursor sent
with other filters is refused with 422 rather than answering a page of a different list). Pages are read by
position in the list's order (score, then id, as the console shows it), so an answer scored between two calls
can shift the pages after it; the total says how many match now.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import math
from typing import Any

import pandas as pd
from pydantic import BaseModel

from register.api.errors import ApiError

__all__ = ["next_cursor", "offset_of", "plain", "records"]


def _query_hash(query: BaseModel) -> str:
    kept = query.model_dump(mode="json", exclude={"cursor", "limit"})
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def offset_of(query: BaseModel) -> int:
    """The position a query's ``cursor`` points at (0 without one); 422 for a cursor not made by this query."""
    cursor = getattr(query, "cursor", None)
    if not cursor:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode() + b"=" * (-len(cursor) % 4)))
        offset, made_by = int(data["o"]), str(data["q"])
    except (ValueError, KeyError, TypeError):
        raise ApiError(422, "invalid", "the cursor is not one this API made: pass next_cursor as it came",
                       "cursor") from None
    if made_by != _query_hash(query) or offset < 0:
        raise ApiError(422, "invalid", "the cursor belongs to a list with other filters: start again without it",
                       "cursor")
    return offset


def next_cursor(query: BaseModel, offset: int, returned: int, total: int) -> str | None:
    """The cursor of the page after ``returned`` rows read at ``offset``; None on the last page."""
    position = offset + returned
    if returned == 0 or position >= total:
        return None
    data = json.dumps({"o": position, "q": _query_hash(query)}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def plain(value: Any) -> Any:
    """A frame cell as JSON: arrays as lists, NaN / NA as None, numpy scalars as Python's, times as ISO text."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if value is pd.NaT or (not isinstance(value, (list, dict)) and pd.isna(value)):
        return None
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def records(frame: pd.DataFrame, columns: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """A frame's rows as plain dicts (``columns``: these only, in this order)."""
    names = [c for c in (columns or tuple(frame.columns)) if c in frame.columns]
    return [{name: plain(row[name]) for name in names} for row in frame.to_dict("records")]
