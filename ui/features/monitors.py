"""Monitors in the console: the background worker that checks and delivers, and the section listing the monitors,
their latest value, the webhooks and the deliveries, with the admins' forms (the Monitors page, pages/monitors.py).

The worker is one thread per process (``ensure_monitor_worker``, a Streamlit resource like the inbox watcher's,
stopped when the resource is released): it checks the monitors after new score runs and delivers the alerts due
(``register.monitors.worker``). The section reads fresh on every run -- the worker changes states and deliveries in
the background, which no cached read would see -- and writes through the register's service functions, which
check the permission (``Permission.MONITORS_EDIT``: admins) whatever this section shows.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from register.access.permissions import Permission
from register.db.store import database_path_from_env
from register.errors import RegisterError
from register.monitors import check as monitor_check
from register.monitors import definitions, outbox, worker
from register.monitors.figures import format_value
from register.monitors.vocabulary import FIGURES
from register.settings import settings
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.components import keep_message, show_kept_messages
from ui.framework.errors import show_error
from ui.framework.text import code_span

__all__ = ["deliveries_frame", "ensure_monitor_worker", "monitors_frame", "section", "webhooks_frame"]

DELIVERIES_SHOWN = 50
_PLACE = "monitors"  # the kept messages' place


# --- the worker -----------------------------------------------------------------------------------


def _release(running: worker.MonitorWorker | None) -> None:
    if running is not None:
        running.stop()


@st.cache_resource(show_spinner=False, on_release=_release)
def _worker(database: str, poll_seconds: float) -> worker.MonitorWorker:
    """The monitors' worker: a thread, not a read. One per process and (database, interval)."""
    return worker.start_worker(data.get_store(), poll_seconds=poll_seconds)


def ensure_monitor_worker() -> worker.MonitorWorker | None:
    """Start this process's monitors worker if it is not running (``HRI_MONITOR_POLL_SECONDS=0``: none)."""
    poll = settings().monitor_poll_seconds
    if poll <= 0:
        return None
    running = _worker(str(database_path_from_env().resolve()), poll)
    if not running.running:  # stopped (e.g. by a test): start again
        running.start()
    return running



def stop_monitor_worker() -> None:
    """Stop this process's monitors worker if it runs (the server's shutdown: before the database closes)."""
    poll = settings().monitor_poll_seconds
    if poll > 0:
        running = _worker(str(database_path_from_env().resolve()), poll)
        if running.running:
            running.stop()

# --- reads ----------------------------------------------------------------------------------------


def monitors_frame() -> pd.DataFrame:
    """One row per monitor in force: its definition, state (fired, cleared, or unchecked), latest value and since."""
    store = data.get_store()
    seen = monitor_check.states(store)
    rows = []
    for m in definitions.monitors(store):
        state = seen.get(m.name, {})
        rows.append({"monitor": m.name, "version": m.version, "figure": FIGURES[m.figure].title,
                     "use case": m.use_case or "(every answer)",
                     "fires above": format_value(m.figure, m.threshold),
                     "state": state.get("state", "unchecked"),
                     "latest value": format_value(m.figure, state.get("value")) if state else "",
                     "since": state.get("since"), "checked": state.get("checked_at"),
                     "webhooks": ", ".join(m.webhooks) or "(every webhook)"})
    columns = ["monitor", "version", "figure", "use case", "fires above", "state", "latest value", "since",
               "checked", "webhooks"]
    return pd.DataFrame(rows, columns=columns)


def webhooks_frame() -> pd.DataFrame:
    """The webhooks in force, their URLs shown without path or query (which may hold a token)."""
    hooks = definitions.webhooks(data.get_store())
    rows = [{"webhook": w.name, "version": w.version, "url": definitions.shown_url(w.url),
             "signed": f"with ${w.secret_env}" if w.secret_env else "no"} for w in hooks]
    return pd.DataFrame(rows, columns=["webhook", "version", "url", "signed"])


def deliveries_frame(limit: int = DELIVERIES_SHOWN) -> pd.DataFrame:
    """The latest deliveries, newest first."""
    rows = outbox.deliveries(data.get_store(), limit=limit)
    columns = ["delivery_id", "alert_id", "monitor", "alert_state", "webhook", "status", "attempts",
               "next_attempt_at", "finished_at", "last_error", "raised_at"]
    return pd.DataFrame(rows, columns=columns)


# --- the section ----------------------------------------------------------------------------------

_TIME = {"format": "YYYY-MM-DD HH:mm"}


def section() -> None:
    """The monitors, webhooks and deliveries; the forms that change them for those who may."""
    st.caption("Thresholds on the headline figures, checked after every score run (an import, a rescore, a "
               "revision); a monitor fires while its figure is above its threshold, and each change of state "
               "(fired, cleared) is sent as JSON to the webhooks. See docs/monitors.md.")
    show_kept_messages(_PLACE)
    st.dataframe(monitors_frame(), hide_index=True, key="monitors_table", column_config={
        "since": st.column_config.DatetimeColumn("Since (UTC)", **_TIME),
        "checked": st.column_config.DatetimeColumn("Checked (UTC)", **_TIME)})
    hooks = webhooks_frame()
    if not hooks.empty:
        st.dataframe(hooks, hide_index=True, key="monitors_webhooks")
    st.markdown("**Deliveries**")
    st.dataframe(deliveries_frame(), hide_index=True, key="monitors_deliveries", column_config={
        "next_attempt_at": st.column_config.DatetimeColumn("Next attempt (UTC)", **_TIME),
        "finished_at": st.column_config.DatetimeColumn("Finished (UTC)", **_TIME),
        "raised_at": st.column_config.DatetimeColumn("Raised (UTC)", **_TIME)})
    if not can(Permission.MONITORS_EDIT):
        st.caption("Admins add, change and remove monitors and webhooks.")
        return
    if st.button("Check now", key="monitors_check_now", help="Read every monitor's figure now and deliver the alerts "
                                                               "due (otherwise done after each score run)"):
        _apply(_check_now, "Checked.")
    with st.expander("Add or change a monitor"):
        _monitor_form(list(hooks["webhook"]))
    with st.expander("Add or change a webhook"):
        _webhook_form()
    with st.expander("Remove a monitor or a webhook"):
        _remove_form(list(monitors_frame()["monitor"]), list(hooks["webhook"]))


def _check_now(actor) -> None:
    data.write(monitor_check.check, actor, force=True)
    outbox.deliver_due(data.get_store(), actor, budget_seconds=settings().monitor_timeout)


def _apply(action, done: str) -> None:
    try:
        action(current_actor())
    except RegisterError as error:
        show_error(error)
        return
    keep_message(_PLACE, "success", done)
    st.rerun()


def _monitor_form(webhook_names: list[str]) -> None:
    with st.form("monitor_save", clear_on_submit=False):
        cols = st.columns(3)
        name = cols[0].text_input("Name", key="monitor_name", max_chars=64,
                                  help="An existing name saves a new version of that monitor")
        figure = cols[1].selectbox("Figure", list(FIGURES), key="monitor_figure",
                                   format_func=lambda f: FIGURES[f].title)
        threshold = cols[2].number_input("Fires above", min_value=0.0, value=0.25, step=0.01, format="%.4f",
                                         key="monitor_threshold",
                                         help="A share as a fraction (0.25 is 25%), a count, or s_H (0 to 1)")
        cols = st.columns(3)
        use_case = cols[0].text_input("Use case (empty: every answer)", key="monitor_use_case", max_chars=200)
        targets = cols[1].multiselect("Webhooks (none: every webhook)", webhook_names, key="monitor_webhooks")
        reason = cols[2].text_input("Why", key="monitor_reason", max_chars=1000)
        submitted = st.form_submit_button("Save the monitor", type="primary")
    if submitted:
        _apply(lambda actor: data.write(definitions.save_monitor, actor, name.strip(), figure, threshold,
                                        use_case=use_case.strip() or None, webhooks=targets, reason=reason),
               f"Monitor {code_span(name.strip())} saved.")


def _webhook_form() -> None:
    with st.form("webhook_save", clear_on_submit=True):
        cols = st.columns([1, 3, 1])
        name = cols[0].text_input("Name", key="webhook_name", max_chars=64)
        url = cols[1].text_input("URL (http:// or https://)", key="webhook_url", max_chars=definitions.MAX_URL_CHARS)
        secret_env = cols[2].text_input("Secret's variable (optional)", key="webhook_secret_env", max_chars=128,
                                        help="The NAME of the environment variable of the console's process that "
                                             "holds the HMAC secret; never the secret itself")
        submitted = st.form_submit_button("Save the webhook", type="primary")
    if submitted:
        _apply(lambda actor: data.write(definitions.save_webhook, actor, name.strip(), url.strip(),
                                        secret_env=secret_env.strip() or None),
               f"Webhook {code_span(name.strip())} saved.")


def _remove_form(monitor_names: list[str], webhook_names: list[str]) -> None:
    choices = [("monitor", n) for n in monitor_names] + [("webhook", n) for n in webhook_names]
    if not choices:
        st.caption("Nothing to remove.")
        return
    with st.form("monitor_remove"):
        chosen = st.selectbox("Remove", choices, key="monitor_remove_choice", index=None,
                              format_func=lambda c: f"{c[0]} {c[1]}", placeholder="Choose a monitor or webhook")
        submitted = st.form_submit_button("Remove")
    if submitted and chosen is not None:
        kind, name = chosen
        remove = definitions.remove_monitor if kind == "monitor" else definitions.remove_webhook
        _apply(lambda actor: data.write(remove, actor, name), f"{kind.capitalize()} {code_span(name)} removed.")
