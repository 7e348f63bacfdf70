"""Read queries for pages and reports. Values are always bound parameters; pages never hold SQL."""

from __future__ import annotations

from .store import Store

_SCORED = """
    SELECT r.response_id, r.revision, r.use_case, r.model, r.created_at, s.score, s.band, s.action,
           s.hri_add, s.hri, s.floors_fired, s.decisive_claim_id, s.no_claims, r.claim_count,
           s.profile_version, s.as_of
    FROM responses r JOIN scores s
      ON s.response_id = r.response_id AND s.revision = r.revision AND s.is_current
    WHERE r.is_current
"""


def scored_responses(store: Store, *, limit: int = 200, offset: int = 0):
    """Current responses with their current score, riskiest first (DataFrame)."""
    return store.query_df(_SCORED + " ORDER BY s.score DESC, r.response_id LIMIT ? OFFSET ?", [limit, offset])


def band_counts(store: Store) -> dict[str, int]:
    """Number of current responses per band of their current score."""
    rows = store.query("SELECT s.band, count(*) FROM scores s JOIN responses r ON r.response_id = s.response_id "
                       "AND r.revision = s.revision AND r.is_current WHERE s.is_current GROUP BY s.band")
    return dict(rows)


def totals(store: Store) -> dict[str, int]:
    """Headline counts: responses, claims, scored responses, open quarantine, no-claims responses."""
    row = store.query_one("""
        SELECT (SELECT count(*) FROM responses WHERE is_current),
               (SELECT count(*) FROM claims c JOIN responses r USING (response_id, revision) WHERE r.is_current),
               (SELECT count(*) FROM scores WHERE is_current),
               (SELECT count(*) FROM quarantine WHERE status = 'open'),
               (SELECT count(*) FROM scores WHERE is_current AND no_claims)
    """)
    keys = ("responses", "claims", "scored", "quarantined", "no_claims")
    return dict(zip(keys, row))
