"""Read queries for the console pages (overview, response explorer, detail) and reports.

Called by ``ui`` helpers (cached) and by ``register.console.review``; pages never hold SQL. Every query is
built from one fragment, ``scored_set``: the current responses joined to the score selected by the
``Filters`` (the current score, or the latest score under one profile version), restricted by the
filters. Every filter value is a bound parameter; the only identifiers taken from callers (sort
column, group-by column) come from allow-lists. Aggregations run in DuckDB: a query returns the
aggregate, never the table.

The package defines no names of its own: each is imported from the module that holds it.

- ``filters``: ``Filters`` and ``NO_CLAIMS_STATE``; ``scored_set`` and the runs of a profile version
  (``VersionRuns``, ``version_runs``); where a view's scores are read (``as_current``,
  ``covers_every_current``, ``same_set_unversioned``, ``ReadModel``, ``CURRENT``, ``read_model``,
  ``filtered_scores``); the SQL pieces the other modules share (``state_expr``, ``group_conditions``,
  ``model_rows``, ``DIM_COLUMNS``, ``RESPONSE_COLUMNS``).
- ``search``: a search's matches, read as a set of response keys or as a bitmap (``search_matches``,
  ``searched``, ``BITMAP_SHARE``).
- ``queue``: the review queue's one definition (``QUEUE_ACTIONS``, ``flag_queued``, ``age_days_expr``,
  ``queue_stats``).
- ``overview``: the overview page's figures (``filter_options``, ``kpis``, ``band_mix_by_week``,
  ``score_histogram``, ``dimension_contributions``, ``high_share_by``, ``overview``, ``FIGURES``,
  ``GROUP_COLUMNS``).
- ``authority``: the Authority figures of the filtered set (``authority_overview``).
- ``explorer``: the response explorer's pages and export (``responses_page``, ``export_select``,
  ``export_rows``, ``PAGE_COLUMNS``, ``EXPORT_COLUMNS``, ``EXPORT_LIMIT``, ``SORT_COLUMNS``,
  ``AUTHORITY_FILTERS``, ``check_window``).
- ``detail``: everything about one response (``response_detail``).

``filters`` imports none of the others; ``search`` and ``queue`` import ``filters`` only; ``overview``,
``authority``, ``explorer`` and ``detail`` import those (``overview`` the queue, ``explorer`` the search) and not
each other. The import contract in ``pyproject.toml`` holds them to these layers.
"""
