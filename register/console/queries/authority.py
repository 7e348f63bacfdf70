"""The Authority figures of the filtered set (``authority_overview``).

The SUPPORTED claims citing a source, those resting on a forbidden, stale or insufficiently authoritative
source (the review queue takes them), the answers holding such a claim, and the claims per Authority problem:
counted by ``register.scoring.authority``'s checks over their distinct inputs. Shown on the overview page
beside its figures.

Called by ``ui.features.authority`` (cached; warmed before the first visit by ``ui.features.warmup``).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from register.console.queries.filters import Filters, as_current, filtered_scores, same_set_unversioned
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.readmodels import response_ids
from register.scoring.authority import PROBLEMS as AUTHORITY_PROBLEMS
from register.scoring.authority import claim_checks_select, dated_source_cited
from register.scoring.authority_rules import authority_rules, requester_roles

__all__ = ["authority_overview"]


def _every_current(store: Store, f: Filters) -> bool:
    """Whether the filtered set of ``f`` is every current response of its use cases and models (all of them when
    it names none): no other filter narrows it, and every current response has a current score (the read model
    holds one row per scored current response)."""
    if replace(as_current(store, f), use_cases=(), models=()) != Filters():
        return False
    return bool(store.scalar("SELECT (SELECT count(*) FROM responses WHERE is_current) = "
                             "(SELECT count(*) FROM current_scores)"))


def authority_overview(store: Store, f: Filters) -> dict:
    """Supported claims resting on stale or unauthoritative sources, in the filtered set.

    Keys: ``supported_sourced`` (SUPPORTED claims with a ``source_id``), ``flagged`` (those resting on a
    forbidden, stale or insufficiently authoritative source, with a proposed label: the review queue takes
    them), ``responses`` (answers with such a claim) and ``by_problem`` (DataFrame problem, claims: SUPPORTED
    claims per ``authority.PROBLEMS``, every problem listed, 0 when none).

    The claim counts come from the checks counted over their distinct inputs (``claim_checks_select``'s
    ``grouped_over``: the claims cite few sources, so counted they are few rows where listed they are all of
    them; see docs/performance.md, "Figures behind the code"); the answers are counted from the claims on sources
    that can fail a check only, as the review queue reads them, and only when a claim is flagged.
    """
    f = same_set_unversioned(store, f)  # an older version over every answer: the counts, not a join of its scores
    p = Params()
    rules, roles = authority_rules(store), requester_roles(store)
    now = utc_now()
    # the as-of time of each response's *current* score (the time of an answer without a creation time): the
    # selected score's under no version filter, else the read model's
    fg = ("SELECT response_key, use_case, created_at, as_of FROM fr" if f.profile_version is None else
          "SELECT fr.response_key, fr.use_case, fr.created_at, cs.as_of FROM fr "
          "LEFT JOIN current_scores cs ON cs.response_key = fr.response_key")
    every = _every_current(store, f)
    counted = claim_checks_select(p, rules, roles, now, supported_only=True, grouped_over="fg",
                                  over_every_current=every, use_cases=f.use_cases, models=f.models,
                                  any_dated=not every or dated_source_cited(store, untimed=True))
    answers = ("WITH fr AS {materialized} (SELECT response_key, use_case, created_at, as_of FROM ({filtered})), "
               f"fg AS ({fg})")
    row = store.row(f"""
        {answers.format(materialized="MATERIALIZED", filtered=filtered_scores(store, f, p))},
        ch AS ({counted})
        SELECT coalesce(sum(n), 0) AS supported_sourced, coalesce(sum(n) FILTER (WHERE to_review), 0) AS flagged,
               (SELECT map_from_entries(list((x, k))) FROM
                   (SELECT x, sum(n) AS k FROM (SELECT unnest(problems) AS x, n FROM ch) GROUP BY x)) AS by_problem
        FROM ch""", p.values, what="the count of checked claims")
    # the answers with a failed check, listed claim by claim: none to find (and no claim read) while no claim of the
    # filtered answers is flagged (with a much-cited dated source the listing takes seconds: docs/performance.md)
    responses = 0
    if row["flagged"]:
        q = Params()
        failing = claim_checks_select(q, rules, roles, now, failing_only=True, answers="fg")
        # counted as a bitmap of their keys (a hash table of millions of distinct keys was a large share of the
        # count: docs/performance.md); a key above the bound (imported since it was read) is counted apart
        top = q(response_ids.largest_key(store))
        responses = store.scalar(f"""{answers.format(materialized="", filtered=filtered_scores(store, f, q))}
            SELECT coalesce(bit_count(bitstring_agg(response_key::BIGINT, 0::BIGINT, {top}::BIGINT)
                                      FILTER (WHERE response_key <= {top})), 0)
                   + count(DISTINCT response_key) FILTER (WHERE response_key > {top})
            FROM ({failing}) WHERE to_review""", q.values)
    counts = row["by_problem"] or {}
    return {"supported_sourced": int(row["supported_sourced"]), "flagged": int(row["flagged"]),
            "responses": int(responses),
            "by_problem": pd.DataFrame({"problem": list(AUTHORITY_PROBLEMS),
                                        "claims": [int(counts.get(x, 0)) for x in AUTHORITY_PROBLEMS]})}
