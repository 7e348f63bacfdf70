"""UI helpers: the cached store and queries, figure builders, small display components. No business rules."""
