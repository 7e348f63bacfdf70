"""The database gateway: the DuckDB store (the only importer of duckdb), the SQL parameter builder,
the numbered migrations and the hash-chained audit trail."""
