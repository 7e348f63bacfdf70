"""How every page runs: ``run_page(main)`` at the bottom of each file in ``pages/``.

- A ``RegisterError`` or ``hri_core.HRIError`` is shown by the one error helper (``ui.framework.errors.show_error``).
- Any other exception is a defect: logged server-side with its full traceback under a short incident
  id; the user sees only "Something went wrong (incident ID)". With ``HRI_DEBUG=1`` it is logged and
  re-raised instead, so Streamlit shows the traceback (development only; the UI tests run this way).
- An error that escapes ``run_page`` (module code of a page, a widget callback) reaches Streamlit's own
  handler: ``show_error_details`` keeps Streamlit from showing its type, message or traceback
  (``client.showErrorDetails = "none"``, also pinned in ``.streamlit/config.toml``); Streamlit logs it.
- Streamlit's own control flow passes through untouched: ``st.stop``, ``st.rerun`` and ``st.switch_page``
  raise ``ScriptControlException`` subclasses (``StopException``, ``RerunException``) to end the run.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

from register.settings import InvalidSetting, settings
from ui.framework.errors import EXPECTED, log_incident, show_error


def run_page(main: Callable[[], None]) -> None:
    """Run a page's ``main``; show any error it raises through the one error helper."""
    show_error_details()  # what Streamlit shows of an error re-raised here (HRI_DEBUG) or raised elsewhere
    try:
        main()
    except ScriptControlException:
        raise  # a BaseException already, so ``except Exception`` would not catch it: kept explicit on purpose
    except Exception as error:  # every error of a page ends here, once
        if not isinstance(error, EXPECTED) and _debug():
            log_incident(error)
            raise
        show_error(error)


def show_error_details() -> None:
    """What Streamlit itself shows of an uncaught error: nothing but a generic sentence ("none"), or
    everything with ``HRI_DEBUG=1`` ("full"). Set on every run of the entry point and of each page, so the
    console is safe even started from a folder whose ``.streamlit/config.toml`` is not the repository's."""
    st.set_option("client.showErrorDetails", "full" if _debug() else "none")


def _debug() -> bool:
    try:
        return settings().debug
    except InvalidSetting:  # a bad HRI_* value is not a request for tracebacks
        return False
