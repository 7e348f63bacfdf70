"""Source access policies: who may read what a restricted source says.

A source whose ``sources.restricted_to`` lists roles is readable only by those roles (and by the
``system`` role of command-line jobs); an empty or NULL list means unrestricted, and so does a
``source_id`` the source register does not know. A user who may not read a source still sees that
a claim rests on it (the ACCESS_GAP idea: the evidence exists but is out of this reader's reach),
never its content: the claim's quoted span is withheld. Called by the response detail page
(``pages/response_detail.py``).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from register.access.permissions import SYSTEM_ROLE

RESTRICTED_NOTE = "restricted source (ACCESS_GAP: your role may not read it)"


def readable_sources(store, source_ids: Iterable[str], role: str) -> dict[str, bool]:
    """``{source_id: may this role read it}`` for the given ids (unknown ids are readable)."""
    ids = sorted({str(s) for s in source_ids if s is not None and not (isinstance(s, float) and pd.isna(s))})
    if not ids:
        return {}
    rows = store.query(
        "SELECT source_id, restricted_to FROM sources WHERE list_contains(?, source_id) AND NOT deleted", [ids])
    restricted = {sid: list(roles or []) for sid, roles in rows}
    return {sid: role == SYSTEM_ROLE or not restricted.get(sid) or role in restricted[sid] for sid in ids}


def mask_restricted_claims(store, claims: pd.DataFrame, role: str) -> pd.DataFrame:
    """Copy of a claims frame (with ``source_id`` and ``span``) whose restricted spans are withheld.

    Adds ``source_access``: "readable", "no source" or ``RESTRICTED_NOTE``.
    """
    out = claims.copy()
    readable = readable_sources(store, out["source_id"].tolist(), role)
    access, spans = [], []
    for sid, span in zip(out["source_id"], out["span"], strict=True):
        if sid is None or (isinstance(sid, float) and pd.isna(sid)):
            access.append("no source")
            spans.append(span)
        elif readable.get(str(sid), True):
            access.append("readable")
            spans.append(span)
        else:
            access.append(RESTRICTED_NOTE)
            spans.append(None)
    out["span"] = pd.Series(spans, index=out.index, dtype=object)
    out["source_access"] = access
    return out
