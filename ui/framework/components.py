"""Small display components shared by the pages: empty states, emptying a form after it was saved,
messages and toasts kept across the rerun that follows a save, and the label picker.

Errors are shown by ``ui.framework.errors``, escaping is ``ui.framework.text``, the logged-in user and its
permissions are ``ui.framework.auth``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NoReturn

import streamlit as st

from register import RegisterError
from ui.framework.errors import show_error


def empty_state(what: str) -> None:
    """Explain what to do when there is nothing to show yet."""
    st.info(
        f"{what}\n\nImport claim-labelled answers with `python -m register import answers.jsonl` "
        "(JSON Lines, CSV or Parquet; see docs/import.md), or load the demo set with `python -m register demo`.",
        icon=":material/inbox:",
    )


def empty_form_on_next_run(form: str, values: dict) -> None:
    """After a successful save: give the form's widgets ``values`` (their empty values) on the next run.

    A form keeps what was typed while a save is refused (no ``clear_on_submit``), so it is emptied by hand
    once the record is saved. Widget state cannot change after the widget ran in this run, and removing
    the keys does not empty what the browser shows: the values are set before the widgets of the next
    run are created (``apply_form_values``), which Streamlit sends to the browser.
    """
    st.session_state[f"_form_values_{form}"] = dict(values)


def apply_form_values(form: str) -> None:
    """Call before the form's widgets: applies what ``empty_form_on_next_run`` left for ``form``."""
    for key, value in st.session_state.pop(f"_form_values_{form}", {}).items():
        st.session_state[key] = value


_KINDS = {"success": (st.success, ":material/check:"), "info": (st.info, ":material/info:"),
          "warning": (st.warning, ":material/warning:"), "error": (st.error, ":material/error:")}


def keep_message(place: str, kind: str, text: str) -> None:
    """Keep ``text`` (markdown, every data-controlled part already escaped) to show at ``place`` on the next run.

    For the result of a save followed by ``st.rerun()`` (so that the page shows what the save changed): a
    message shown before the rerun would be gone after it. ``kind`` is success, info, warning or error.
    """
    if kind not in _KINDS:
        raise ValueError(f"message kind {kind!r} is not one of {', '.join(_KINDS)}")
    st.session_state.setdefault(f"_kept_messages_{place}", []).append((kind, text))


def has_kept_messages(place: str) -> bool:
    """Whether messages wait to be shown at ``place`` (e.g. to open the expander that shows them)."""
    return bool(st.session_state.get(f"_kept_messages_{place}"))


def show_kept_messages(place: str) -> None:
    """Show, once, the messages ``keep_message`` kept for ``place``, in the order they were kept."""
    for kind, text in st.session_state.pop(f"_kept_messages_{place}", []):
        show, icon = _KINDS[kind]
        show(text, icon=icon)


def toast_then_rerun(text: str, icon: str = ":material/check:") -> NoReturn:
    """Confirm a save with a toast and rerun the page so that it shows what the save changed.

    A toast sent just before ``st.rerun()`` reached the browser only sometimes (a browser test waited for
    "Source src-... added" and, now and then, under load, never saw it): the toast is kept and shown by the
    next run instead (``show_kept_toasts``, which ``ui.framework.shell.page_frame`` calls first). ``text`` is markdown
    with every data-controlled part already escaped.
    """
    st.session_state.setdefault("_kept_toasts", []).append((text, icon))
    st.rerun()


def show_kept_toasts() -> None:
    """Show, once, the toasts ``toast_then_rerun`` kept, in the order they were kept."""
    for text, icon in st.session_state.pop("_kept_toasts", []):
        st.toast(text, icon=icon)


def label_picker(label: str, options: Sequence[str], *, key: str, default: Sequence[str] | None = None,
                 help: str | None = None) -> list[str]:
    """A multiselect that selects exactly what the person chose: every label picker of the console.

    Streamlit's multiselect filters fuzzily and offers "Select N matches" first while the typed text matches
    several options, so typing SUPPORTED and pressing Enter selected SUPPORTED and UNSUPPORTED (issue 33).
    Here options match by prefix (SUPPORTED is no prefix of UNSUPPORTED) and there is no bulk action, so
    Enter selects the first match alone: a label typed in full is that label. Options must not be prefixes
    of one another, or a label typed in full would not be the first match of its own text.
    """
    texts = [str(option).casefold() for option in options]
    clashes = [(a, b) for a in texts for b in texts if a != b and b.startswith(a)]
    if clashes:
        raise ValueError(f"label_picker: option {clashes[0][0]!r} is a prefix of {clashes[0][1]!r}")
    chosen = st.multiselect(label, list(options), default=list(default or []), key=key, help=help,
                            filter_mode="prefix", select_all=False)
    return [str(option) for option in chosen]


def approve_or_reject(form_key: str, note_label: str, approve: Callable[[str], str], reject: Callable[[str], str],
                      title: str) -> None:
    """The second person's form for a change that waits for one (a held label change, a risk acceptance): approve
    (with a note) or reject (with a reason). ``approve(note)`` / ``reject(note)`` make the register write and return
    what happened, shown as ``title`` + that in a toast; a refusal (the proposer deciding, a reject without a reason)
    is shown where the form is. The form's widgets are keyed ``<form_key>_choice`` and ``<form_key>_note``."""
    with st.form(form_key, enter_to_submit=False):
        choice = st.radio("Decision", ["approve", "reject"], horizontal=True, index=None, key=f"{form_key}_choice")
        note = st.text_input(note_label, key=f"{form_key}_note")
        submitted = st.form_submit_button("Record", type="primary")
    if not submitted or choice is None:
        return
    try:
        done = (approve if choice == "approve" else reject)(note)
    except RegisterError as error:
        show_error(error)
        return
    toast_then_rerun(f"{title} {done}")
