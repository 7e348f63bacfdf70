"""The check every store fixture runs at teardown: the read models still equal what they are derived from."""

from __future__ import annotations


def check_read_models(store, request) -> None:
    """Whatever the test wrote, every read model still equals what it is derived from (skipped for a test marked
    ``tampers``, and for a store the test closed itself)."""
    import duckdb

    from register.db import response_ids
    from register.ingest import claim_counts, search_index
    from register.scoring import current_scores, version_views

    s = store
    try:
        tampered = request.node.get_closest_marker("tampers")
        differences = [] if tampered else current_scores.check(s) + version_views.check(s)
        index_problems = [] if tampered else search_index.check(s)
        count_problems = [] if tampered else claim_counts.check(s)
        id_problems = [] if tampered else response_ids.check(s)
    except duckdb.ConnectionException:  # the test closed the store itself
        differences = index_problems = count_problems = id_problems = []
    assert differences == [], f"a read model differs from the join of current responses and scores: {differences}"
    assert index_problems == [], f"the search index differs from the words of the texts: {index_problems}"
    assert count_problems == [], f"claim_source_counts differs from the current claims: {count_problems}"
    assert id_problems == [], f"response_ids differs from the responses: {id_problems}"
