"""The check every store fixture runs at teardown: the read models still equal what they are derived from."""

from __future__ import annotations


def check_read_models(store, request) -> None:
    """Whatever the test wrote, every read model still equals what it is computed from (``register.readmodels.hub``;
    skipped for a test marked ``tampers``, and for a store the test closed itself)."""
    import duckdb

    from register.readmodels import hub

    try:
        problems = [] if request.node.get_closest_marker("tampers") else hub.check(store)
    except duckdb.ConnectionException:  # the test closed the store itself
        problems = []
    assert problems == [], f"a read model differs from what it is computed from: {problems}"
