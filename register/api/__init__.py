"""The register's HTTP API, ``/api/v1``: Starlette routes served by the console's own process (``ui/server.py``
mounts them beside the Streamlit app with ``st.App``), so that pipelines reach the one process that holds the
database. ``routes(get_store)`` is the whole surface; the store comes from the caller (the console's one Store)."""
