"""The cached reads of the pages that show responses: the Responses list, a response's detail and the Review
queue. Their writes (a review decision) go through ``ui.framework.data.write``."""

from __future__ import annotations

from register import Store
from register.console import review
from register.console.queries import detail, explorer
from register.scoring import reproduce
from ui.framework import data

responses_page = data.cached(explorer.responses_page)
response_detail = data.cached(detail.response_detail)
review_queue = data.cached(review.review_queue)
decisions_for = data.cached(review.decisions_for)


@data.cached(resource=True, max_entries=256)
def reproduction(store: Store, response_id: str,
                 keys: tuple[tuple[int, int], ...] | None = None) -> reproduce.Reproduction:
    """The response's current score recomputed from its stored labels and profile (``reproduce.reproduce``).

    ``keys``: its revisions' keys as (revision, key) pairs when the page has them (``response_detail``'s
    ``keys``; pairs, not the mapping the register takes, to be a cache key): the id is then not looked up again
    (a scan of every id's hash).
    A resource, not ``st.cache_data``: the reproduction holds the stored response, read back under
    ``NO_TEXT_LIMITS`` -- a model subclass ``st.cache_data`` cannot pickle; it is frozen and the page only reads
    it, so every session may share it. Cleared by ``after_write`` like every cached read; at most 256 kept.
    Uncached it was most of a warm detail page's server time, on every rerun (docs/performance.md, "Figures
    behind the code")."""
    return reproduce.reproduce(store, response_id, keys=None if keys is None else dict(keys))
