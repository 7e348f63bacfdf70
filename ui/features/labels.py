"""UI helpers of the labelling pages (workbench, adjudication, agreement, rubric): cached reads, and the workbench
grid's changed rows. No business rules: those live in ``register.labels`` (blindness, four eyes and roles are
enforced there; the pages pass the acting user through, and write with ``ui.framework.data.write``)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from hri_core.vocabulary import LABEL_CONFLICTS
from register import Store
from register.access.identity import list_users
from register.access.permissions import Permission, allowed
from register.labels import adjudication, agreement, batches, rubrics, workbench
from ui.framework import data

# the pickers' choice for a claim without a category (stored as NULL)
NO_CATEGORY = "(no category)"
# the label pickers' help: how to pick by keyboard, and the combinations the register refuses (the vocabulary's)
LABEL_SET_HELP = ("Type a label and press Enter to pick it alone. Refused together: "
                  + "; ".join(conflict.reason for conflict in LABEL_CONFLICTS) + ".")

# --- the rubric ---------------------------------------------------------------------------------------------


@data.cached
def rubric(store: Store, version: int | None = None):
    """Rubric ``version``, the one in force when None (``get_store`` publishes the shipped rubric into an empty
    database, so there is one)."""
    return rubrics.get_rubric(store, version if version is not None else rubrics.current_rubric_version(store))


rubric_versions = data.cached(rubrics.rubric_versions)
criticality_flags = data.cached(rubrics.criticality_flags)

# --- batches ------------------------------------------------------------------------------------------------

batch_list = data.cached(batches.list_batches)
batch_progress = data.cached(workbench.batch_progress)


@data.cached(scope="account")
def possible_annotators(store: Store) -> list[str]:
    """Accounts that may label (enabled, annotator or above)."""
    return [u.username for u in list_users(store)
            if not u.disabled and allowed(u.role, Permission.LABEL)]


# --- the workbench (never cached across users: every read names the acting annotator) ------------------------

my_batches = data.cached(workbench.my_batches)
batch_responses = data.cached(workbench.batch_responses)
work_item = data.cached(workbench.work_item)


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


def source_choices(item: dict, units: list[dict]) -> list[str]:
    """The workbench's Source choices: "" (none), then the claims' current sources, every source of the answer's
    retrieved context (registered or not) and the register's sources they cite, then the annotator's own."""
    return list(dict.fromkeys(["", *(u.get("claim_source_id") for u in units if u.get("claim_source_id")),
                               *(c["source_id"] for c in item["context"] if c["source_id"]),
                               *(s["source_id"] for s in item["sources"]),
                               *(u["source_id"] for u in units if u["source_id"])]))


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


# --- adjudication -------------------------------------------------------------------------------------------

queue = data.cached(adjudication.queue)
unit_readings = data.cached(adjudication.unit_readings)
current_score = data.cached(adjudication.current_score)
label_provenance = data.cached(adjudication.label_provenance)

# --- agreement ----------------------------------------------------------------------------------------------

agreement_report = data.cached(agreement.agreement_report)
