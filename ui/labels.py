"""UI helpers of the labelling pages (workbench, adjudication, agreement, rubric): cached reads and writes that
clear the read caches. No business rules: those live in ``register.labels`` (blindness, four eyes and roles are
enforced there; these helpers only pass the acting user through)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import streamlit as st

from register import Actor
from register.access.identity import list_users
from register.access.permissions import Permission, allowed
from register.labels import adjudication, agreement, batches, rubrics, workbench
from ui import data

# the pickers' choice for a claim without a category (stored as NULL)
NO_CATEGORY = "(no category)"

# --- the rubric ---------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def rubric(version: int | None = None):
    store = data.get_store()  # it publishes the shipped rubric into an empty database
    return rubrics.get_rubric(store, version if version is not None else rubrics.current_rubric_version(store))


@st.cache_data(show_spinner=False)
def rubric_versions() -> pd.DataFrame:
    return rubrics.rubric_versions(data.get_store())


@st.cache_data(show_spinner=False)
def criticality_flags() -> pd.DataFrame:
    return rubrics.criticality_flags(data.get_store())


def publish_rubric(actor: Actor, body: dict, reason: str) -> int:
    version = rubrics.publish_rubric(data.get_store(), actor, body, reason)
    data.after_write()
    return version


# --- batches ------------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def batch_list() -> pd.DataFrame:
    return batches.list_batches(data.get_store())


@st.cache_data(show_spinner=False)
def batch_progress(batch_id: int) -> pd.DataFrame:
    return workbench.batch_progress(data.get_store(), batch_id)


@data.account_read
def possible_annotators() -> list[str]:
    """Accounts that may label (enabled, annotator or above)."""
    return [u.username for u in list_users(data.get_store())
            if not u.disabled and allowed(u.role, Permission.LABEL)]


def preview(selection: batches.Selection) -> pd.DataFrame:
    return batches.preview_selection(data.get_store(), selection)


def create_batch(actor: Actor, title: str, selection: batches.Selection, annotators: list[str]) -> int:
    batch_id = batches.create_batch(data.get_store(), actor, title, selection, annotators)
    data.after_write()
    return batch_id


# --- the workbench (never cached across users: every read names the acting annotator) ------------------------


@st.cache_data(show_spinner=False)
def my_batches(actor: Actor) -> pd.DataFrame:
    return workbench.my_batches(data.get_store(), actor)


@st.cache_data(show_spinner=False)
def batch_responses(actor: Actor, batch_id: int) -> pd.DataFrame:
    return workbench.batch_responses(data.get_store(), actor, batch_id)


@st.cache_data(show_spinner=False)
def work_item(actor: Actor, batch_id: int, response_id: str) -> dict:
    return workbench.work_item(data.get_store(), actor, batch_id, response_id)


def save_annotation(actor: Actor, batch_id: int, response_id: str, unit_id: str, **reading: Any) -> None:
    workbench.save_annotation(data.get_store(), actor, batch_id, response_id, unit_id, **reading)
    data.after_write()


def save_annotations(actor: Actor, batch_id: int, response_id: str, readings: list[dict]) -> dict[str, str]:
    """The grid's changed rows (``register.labels.workbench.save_annotations``); ``{unit_id: why}`` refused."""
    try:
        return workbench.save_annotations(data.get_store(), actor, batch_id, response_id, readings)
    finally:
        data.after_write()  # some rows may be saved even when others are refused


def _cell(value: Any) -> Any:
    """A grid cell as the register reads it: blanks (None, NaN, empty text or list) as None, lists as lists
    of text, whole floats as integers (a number column arrives as float)."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value if str(v).strip()]
        return items or None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def grid_changes(original: pd.DataFrame, edited: pd.DataFrame) -> list[dict]:
    """The readings of the rows of the workbench grid whose fields were changed, in grid order.

    Both frames have a ``unit_id`` column and the fields of ``register.labels.workbench.READING_FIELDS``;
    a cell emptied counts as changed (the register then names what is missing). Lists compare as lists.
    """
    before = {row["unit_id"]: row for row in original.to_dict("records")}
    changed = []
    for row in edited.to_dict("records"):
        old = before.get(row["unit_id"], {})
        reading = {name: _cell(row.get(name)) for name in workbench.READING_FIELDS}
        if any(reading[name] != _cell(old.get(name)) for name in workbench.READING_FIELDS):
            changed.append({"unit_id": row["unit_id"], **reading})
    return changed


def split_claim(actor: Actor, batch_id: int, response_id: str, claim_id: str, texts: list[str]) -> list[str]:
    parts = workbench.split_claim(data.get_store(), actor, batch_id, response_id, claim_id, texts)
    data.after_write()
    return parts


def merge_claims(actor: Actor, batch_id: int, response_id: str, claim_ids: list[str], text: str) -> str:
    merged = workbench.merge_claims(data.get_store(), actor, batch_id, response_id, claim_ids, text)
    data.after_write()
    return merged


def add_claim(actor: Actor, batch_id: int, response_id: str, text: str) -> str:
    added = workbench.add_claim(data.get_store(), actor, batch_id, response_id, text)
    data.after_write()
    return added


# --- adjudication -------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def queue(actor: Actor) -> pd.DataFrame:
    return adjudication.queue(data.get_store(), actor)


@st.cache_data(show_spinner=False)
def unit_readings(actor: Actor, batch_id: int, response_id: str, unit_id: str) -> pd.DataFrame:
    return adjudication.unit_readings(data.get_store(), actor, batch_id, response_id, unit_id)


def adjudicate(actor: Actor, batch_id: int, response_id: str, unit_id: str, **decision: Any):
    report = adjudication.adjudicate(data.get_store(), actor, batch_id, response_id, unit_id, **decision)
    data.after_write()
    return report


def apply_resolved(actor: Actor, batch_id: int):
    report = adjudication.apply_resolved(data.get_store(), actor, batch_id)
    data.after_write()
    return report


@st.cache_data(show_spinner=False)
def current_score(response_id: str) -> dict | None:
    return adjudication.current_score(data.get_store(), response_id)


@st.cache_data(show_spinner=False)
def label_provenance(response_id: str) -> pd.DataFrame:
    return adjudication.label_provenance(data.get_store(), response_id)


# --- agreement ----------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def agreement_report(actor: Actor, batch_id: int | None, rubric_version: int | None) -> agreement.AgreementReport:
    return agreement.agreement_report(data.get_store(), actor, batch_id=batch_id, rubric_version=rubric_version)
