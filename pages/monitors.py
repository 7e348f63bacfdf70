"""Monitors: thresholds on the headline figures, their state and latest value, the webhooks their alerts go to and
the deliveries (``ui.features.monitors``). Reviewers and admins (``Permission.AUDIT_READ``) may open it; admins
(``Permission.MONITORS_EDIT``) add, change and remove monitors and webhooks, which the register checks again."""

from __future__ import annotations

import streamlit as st

from register.access.permissions import Permission
from ui.features import monitors
from ui.framework.auth import can, current_actor
from ui.framework.page import run_page
from ui.framework.shell import page_frame


def main() -> None:
    page_frame(filters=False)
    st.title("Monitors")
    if not can(Permission.AUDIT_READ):
        st.info(f"Your role ({current_actor().role}) cannot open the monitors: it needs the reviewer or admin role.",
                icon=":material/lock:")
        return
    monitors.section()


run_page(main)
