"""The browser's half of the warm-up: the login page loads the chart and table libraries while the password is
typed (the server's half, the Overview's reads, is ``ui.features.warmup``)."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

__all__ = ["PRELOAD_KEY", "preload_chart_library"]

PRELOAD_KEY = "hri_preload"  # the hidden container of the login page's chart and table (``preload_chart_library``)


def preload_chart_library() -> None:
    """Put a chart and a table on the login page, hidden (a container styled ``display: none``): the browser fetches
    and compiles their libraries -- Plotly's and the data grid's, megabytes of JavaScript it loads the first time a
    page shows one -- while the visitor types a password. Without it the first Overview after a login waited for
    Plotly: seconds of the browser's CPU between the page's title and its first figure
    (``benchmarks/bench_console_browser.py``; the figures: docs/performance.md, "Figures behind the code")."""
    hidden = {"visible": False, "fixedrange": True}
    figure = go.Figure(layout={"height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0}, "xaxis": hidden,
                               "yaxis": hidden, "paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)"})
    st.html(f"<style>.st-key-{PRELOAD_KEY} {{display: none}}</style>")
    with st.container(key=PRELOAD_KEY):
        st.plotly_chart(figure, config={"staticPlot": True, "displayModeBar": False}, key="chart_library_preload")
        st.dataframe(pd.DataFrame({"preload": [0]}), hide_index=True)
