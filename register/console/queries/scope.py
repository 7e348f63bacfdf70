"""The overview's answers by scope status (``scope_overview``): the filtered set's current answers against the
approved-use-case register (``register.scoring.scope``), counted per status.

Called by ``ui.features.overview`` (cached).
"""

from __future__ import annotations

import pandas as pd

from register.console.queries.filters import Filters, filtered_scores, same_set_unversioned
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.scoring.scope import NO_REGISTER, SCOPE_STATUSES, answer_scope_select

__all__ = ["scope_overview"]


def scope_overview(store: Store, f: Filters) -> pd.DataFrame:
    """The answers of the filtered set per scope status: DataFrame ``scope_status`` (``SCOPE_STATUSES``, in that
    order, each listed, 0 when none) and ``answers``; empty while the use-case register lists no use case (nothing
    to show: a team that keeps none sees no change). One pass over the filtered answers joined to the register's
    few rows."""
    if not store.scalar("SELECT count(*) FROM use_case_register WHERE NOT deleted"):
        return pd.DataFrame({"scope_status": pd.Series(dtype=object), "answers": pd.Series(dtype="int64")})
    f = same_set_unversioned(store, f)
    p = Params()
    answers = f"(SELECT response_key, use_case FROM ({filtered_scores(store, f, p)}))"
    statuses = answer_scope_select(p, utc_now().date(), answers)
    counts = dict(store.query(f"SELECT scope_status, count(*) FROM ({statuses}) GROUP BY scope_status", p.values))
    counts.pop(NO_REGISTER, None)
    return pd.DataFrame({"scope_status": list(SCOPE_STATUSES),
                         "answers": [int(counts.get(s, 0)) for s in SCOPE_STATUSES]})
