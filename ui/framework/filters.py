"""The console's shared filters: one sidebar, the same selection on every page, kept in the URL.

On the first run of a session the widgets start from the query string (so a shared link reopens the
same view). Streamlit forgets a widget's state when a page switch runs without it, so the selection
is also kept under separate, non-widget keys and restored into the widgets on every page. Every run
writes the selection back to the query string; other parameters (e.g. ``response_id``) are left alone.
"""

from __future__ import annotations

from datetime import date

import streamlit as st

from hri_core.decision import DECISIONS
from register.console.queries.filters import Filters

_KEYS = {"from": "flt_from", "to": "flt_to", "uc": "flt_use_cases", "model": "flt_models",
         "band": "flt_bands", "pv": "flt_profile_version", "decision": "flt_decisions"}
CURRENT = "current"


def _parse_date(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None  # a malformed link falls back to "all dates" rather than failing the page


def _dates_within(start: date | None, end: date | None, options: dict) -> tuple[date, ...]:
    """The linked date range, held inside the data's range (the date picker refuses a value outside it, which
    failed the whole page); a range that misses the data entirely, or runs backwards, is dropped."""
    low, high = options.get("date_min"), options.get("date_max")
    if start is None or (end is not None and end < start):
        return ()
    if low is not None and high is not None:
        if start > high or (end is not None and end < low):
            return ()
        start, end = max(start, low), None if end is None else min(end, high)
    return (start,) if end is None else (start, end)


def _seed_from_url(options: dict) -> None:
    qp = st.query_params
    st.session_state["flt_dates"] = _dates_within(_parse_date(qp.get("from")), _parse_date(qp.get("to")), options)
    st.session_state[_KEYS["uc"]] = [v for v in qp.get_all("uc") if v in options["use_cases"]]
    st.session_state[_KEYS["model"]] = [v for v in qp.get_all("model") if v in options["models"]]
    pv = qp.get("pv")
    known = pv and pv.isdigit() and int(pv) in options["profile_versions"]
    st.session_state[_KEYS["pv"]] = int(pv) if known else CURRENT
    st.session_state[_KEYS["band"]] = [v for v in qp.get_all("band") if v in band_options(options, _version())]
    st.session_state[_KEYS["decision"]] = [v for v in qp.get_all("decision") if v in DECISIONS]
    st.session_state["flt_seeded"] = True


def _write_to_url(f: Filters) -> None:
    wanted = {
        "from": f.date_from.isoformat() if f.date_from else None,
        "to": f.date_to.isoformat() if f.date_to else None,
        "uc": list(f.use_cases) or None,
        "model": list(f.models) or None,
        "band": list(f.bands) or None,
        "pv": str(f.profile_version) if f.profile_version is not None else None,
        "decision": list(f.decisions) or None,
    }
    for key, value in wanted.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get_all(key) != (value if isinstance(value, list) else [value]):
            st.query_params[key] = value


_WIDGET_KEYS = ("flt_dates", "flt_use_cases", "flt_models", "flt_bands", "flt_profile_version", "flt_decisions")


def _restore() -> None:
    # Widget ids include the page, so the same key on another page starts as a new widget: re-assign
    # the kept value on every run (Streamlit's documented way to carry widget state across pages).
    for key in _WIDGET_KEYS:
        if f"_kept_{key}" in st.session_state:
            st.session_state[key] = st.session_state[f"_kept_{key}"]


def _version() -> int | str:
    """The chosen profile version (``CURRENT`` for the current scores), as the widget holds it."""
    return st.session_state.get(_KEYS["pv"], CURRENT)


def band_options(options: dict, version: int | str) -> list[str]:
    """The bands to filter by: those of the chosen profile version (an older version may name its bands
    otherwise), the active profile's for the current scores."""
    return list(options.get("version_bands", {}).get(version, options["bands"])) if version != CURRENT \
        else list(options["bands"])


def _keep_bands_of(choices: list[str]) -> None:
    """Drop chosen bands the chosen version does not have (a multiselect refuses a value not among its options)."""
    for key in (_KEYS["band"], f"_kept_{_KEYS['band']}"):
        if st.session_state.get(key):
            st.session_state[key] = [b for b in st.session_state[key] if b in choices]


def _keep() -> None:
    for key in _WIDGET_KEYS:
        st.session_state[f"_kept_{key}"] = st.session_state.get(key)


def _kept(key: str) -> dict:
    """Widget arguments that copy a change into the kept value before the rerun restores it."""
    return {"key": key, "on_change": lambda: st.session_state.__setitem__(f"_kept_{key}", st.session_state[key])}


def sidebar_filters(options: dict) -> Filters:
    """Render the shared filters in the sidebar and return the selection."""
    if not st.session_state.get("flt_seeded"):
        _seed_from_url(options)
    _restore()
    with st.sidebar:
        st.subheader("Filters")
        dates = st.date_input("Created between", **_kept("flt_dates"), min_value=options.get("date_min"),
                              max_value=options.get("date_max"), format="YYYY-MM-DD",
                              help="Leave empty for all dates; pick a start and an end day (inclusive).")
        use_cases = st.multiselect("Use case", options["use_cases"], **_kept(_KEYS["uc"]), placeholder="All use cases")
        models = st.multiselect("Model", options["models"], **_kept(_KEYS["model"]), placeholder="All models")
        versions = [CURRENT] + list(options["profile_versions"])
        if _version() not in versions:
            st.session_state[_KEYS["pv"]] = CURRENT  # a version whose scores are gone
        version = st.selectbox("Profile version", versions, **_kept(_KEYS["pv"]),
                               format_func=lambda v: "Current scores" if v == CURRENT else f"Version {v}",
                               help="The current scores, or every current answer's latest score under one "
                                    "profile version (its bands below)")
        if version != CURRENT and options.get("version_reads", {}).get(int(version)) == "joined":
            st.caption(f"Version {version} is read from its score rows: slow on a large register (half a minute a "
                       "page at ten million answers). An admin can keep a view of it on the Profiles page.")
        choices = band_options(options, version)
        _keep_bands_of(choices)
        bands = st.multiselect("Band", choices, **_kept(_KEYS["band"]), placeholder="All bands")
        decisions = st.multiselect("Decision", DECISIONS, **_kept(_KEYS["decision"]), placeholder="All decisions",
                                   help="The one decision on each answer: the band's action, the floors, the "
                                        "Authority checks and the mitigation, the most severe of them")
    dates = tuple(dates) if isinstance(dates, (tuple, list)) else ((dates,) if dates else ())
    filters = Filters(
        date_from=dates[0] if len(dates) >= 1 else None,
        date_to=dates[1] if len(dates) == 2 else (dates[0] if len(dates) == 1 else None),
        use_cases=tuple(use_cases), models=tuple(models), bands=tuple(bands),
        profile_version=None if version == CURRENT else int(version), decisions=tuple(decisions),
    )
    _keep()
    _write_to_url(filters)
    return filters
