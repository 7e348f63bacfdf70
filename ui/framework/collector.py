"""The Python garbage collector in the console's server: what it walks after every page run.

Streamlit runs ``gc.collect(2)`` after each run of a page (``runner.postScriptGC``), in the one process every
visitor shares. A full collection walks every container object the interpreter tracks -- with pandas, pyarrow,
Plotly, DuckDB and Streamlit loaded, a great many after the imports alone, more in the server -- although the
modules, classes and functions loaded at startup live as long as the process and are never garbage. Profiled in
the server (``benchmarks/bench_console_browser.py``), that walk was most of a warm view's server time, during which
no other visitor's page could run Python.

``freeze_startup_objects`` moves the objects alive when the first page run of the process starts into the
collector's permanent generation (``gc.freeze``), once per process: later collections walk only what was made
since. Objects made by page runs are collected after each run as before; turning the post-run collection off
(``runner.postScriptGC = false``) would save the same time but leave the runs' cyclic garbage to the interpreter's
own thresholds. What the freeze costs: a reference cycle that is alive at the first run and dropped later (the
first session's, say) is never collected -- once per process, and small next to the libraries.
The warm views' server CPU before and after: docs/performance.md, "Figures behind the code".
"""

from __future__ import annotations

import gc

import streamlit as st

__all__ = ["freeze_startup_objects"]


@st.cache_resource(show_spinner=False)
def freeze_startup_objects() -> int:
    """Freeze the objects alive now (see the module), the first time in the process; returns how many the collector
    leaves alone from now on. Later calls return the first call's count without freezing again (a Streamlit
    resource: computed once per process, unless the resource caches are cleared)."""
    gc.freeze()
    return gc.get_freeze_count()
