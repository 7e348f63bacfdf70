"""The check every store fixture runs at teardown: the read models still equal what they are derived from."""

from __future__ import annotations

# What the read models are computed from, and the read models' own tables (``register.readmodels``). When all are
# empty there is nothing to compare: ``hub.check`` of an empty register is [], and about 50 ms of CPU that a test
# leaving the register empty need not spend (tests/register/readmodels/test_fixture_check.py holds the list whole).
_SOURCES = ("responses", "claims", "scores")
_READ_MODELS = ("current_scores", "score_summary", "kept_version_views", "claim_source_counts", "claim_source_answers",
                "response_ids", "search_words", "search_postings", "search_pairs", "search_pair_postings",
                "search_separators", "search_separator_postings", "search_characters")
_ANY_ROW = " UNION ALL ".join(f"(SELECT 1 FROM {table} LIMIT 1)" for table in _SOURCES + _READ_MODELS)


def nothing_to_compare(store) -> bool:
    """Whether the register holds no response, claim or score and every read model is empty."""
    return store.scalar(f"SELECT count(*) FROM ({_ANY_ROW})") == 0


def check_read_models(store, request) -> None:
    """Whatever the test wrote, every read model still equals what it is computed from (``register.readmodels.hub``;
    skipped for a test marked ``tampers``, for a store the test closed itself, and when there is nothing to
    compare)."""
    import duckdb

    from register.readmodels import hub

    try:
        problems = [] if request.node.get_closest_marker("tampers") or nothing_to_compare(store) else hub.check(store)
    except duckdb.ConnectionException:  # the test closed the store itself
        problems = []
    assert problems == [], f"a read model differs from what it is computed from: {problems}"
