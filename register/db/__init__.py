"""The database gateway: the DuckDB store, its numbered migrations, the keyed audit chain, SQL helpers."""
