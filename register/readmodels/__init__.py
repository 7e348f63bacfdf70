"""The read models: tables the register keeps beside its own so that the console reads them, not the whole register.

* ``current_scores`` -- one row per current response with its current score (and ``score_summary``, its counts
  by the overview's groups);
* ``version_views`` -- the same, kept for older profile versions;
* ``claim_counts`` -- the current sourced claims counted for the Authority figures;
* ``search_index`` -- the words (pairs, runs of separators, letters and digits) of every revision's texts, with
  ``search_check`` holding its check and ``search_catchup`` its catch-up in the background (the console's);
* ``response_ids`` -- a response's revisions found by its id.

Writers of responses and scores keep them in step through one module, ``hub``: each describes what it changed as
an event (``RevisionsWritten``, ``ScoresWritten``) and makes one call, and every path that writes revisions ends in
``hub.revisions_committed`` (the search index catches up, now or in the background); ``hub.check`` and
``hub.rebuild`` cover all of them.

The layer sits between ``register.scoring`` (and everything above it, which may import it) and ``register.access``:
a read model needs nothing of a writer's.
"""
