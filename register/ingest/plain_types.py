"""The compiled types of a *plain* JSON Lines record, generated from the pydantic interchange models.

``register.ingest.bulk`` decodes each JSON Lines line with the msgspec ``Struct`` types built here: a compiled
parser that checks a field's type and bounds while it reads it. They are generated from ``hri_core.models``
(``models_for(limits)``: the text limits in force) so that the two cannot drift: the same fields with the same
names, required or not, and the same bounds (``max_length``, ``min_length``, ``ge``, ``le``, read from pydantic's
own field metadata). ``tests/register/ingest/test_plain_types.py`` compares them field by field and fails on any
difference, and on any pydantic validator it does not know.

They accept only a subset of what pydantic accepts, never more, and only the canonical spelling of what they
accept (what pydantic would store unchanged); anything else fails to decode and takes the per-record path, which
names its problems and decides as before:

- ``PER_RECORD_FIELDS``, the extensions whose JSON columns and cross-checks only the per-record path builds
  (``retrieved_context``, ``gt_claims``, ``contradicted_by``, ``entailment``), are not fields here: with
  ``forbid_unknown_fields`` a line that has one (or a key pydantic would ignore, or the quarantine export's
  ``_quarantine``) is left to that path;
- ``CANONICAL_SPELLING``, the fields whose pydantic validators read other spellings (any case, a blank meaning
  "not given", labels as "F,C" text, a time in another notation), take only the spelling those validators leave as
  it is: vocabulary tokens exactly, times as plain ISO 8601 text (``PLAIN_TIME``; turned into UTC by
  ``register.ingest.bulk``, which also holds the rules no type can say: ``VALIDATORS``);
- JSON types exactly: no number for text, no ``true`` for an integer, no ``2.0`` for one (pydantic reads all three).

A field left out of a record is told from one given as null, so that ``register.ingest.bulk`` can tell a line
that names a key twice (msgspec keeps the last value silently; the per-record path refuses it): a field with a
default defaults to ``ABSENT`` here -- NaN, which msgspec writes as ``null`` as pydantic writes None, and Arrow reads
as null; no field here can decode to a float -- and ``register.ingest.bulk`` puts pydantic's default other than
None (``PlainTypes.defaults``: a claim's ``criticality``, 1) in its place; an extension defaults to
``msgspec.UNSET``, left out when written, as pydantic leaves out an absent extension.
"""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import annotated_types
import msgspec
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from hri_core.models import CLAIM_EXTENSIONS, RESPONSE_EXTENSIONS, TextLimits, models_for
from hri_core.vocabulary import CATEGORIES, DIMENSIONS, LABELS, STAKES

__all__ = ["ABSENT", "CANONICAL_SPELLING", "PER_RECORD_FIELDS", "PLAIN_TIME", "VALIDATORS", "PlainTypes",
           "plain_types"]

# ISO 8601 as machines write it: date, 'T', time to the second (fraction up to microseconds), optional offset.
# Python's ``datetime.fromisoformat`` and pydantic read these alike (other notations are left to pydantic).
PLAIN_TIME = (r"^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?"
              r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$")
_TIME = Annotated[str, msgspec.Meta(pattern=PLAIN_TIME)]

# fields left to the per-record path: not fields of the compiled types (a line holding one is not plain)
PER_RECORD_FIELDS: dict[str, tuple[str, ...]] = {
    "Response": ("retrieved_context", "gt_claims"),
    "Claim": ("contradicted_by", "entailment"),
}

# fields taken in their canonical spelling only (the value type; the field's bounds are pydantic's)
CANONICAL_SPELLING: dict[str, Any] = {
    "stakes": Literal[STAKES],
    "category": Literal[CATEGORIES],
    "labels": list[Literal[tuple(label.value for label in LABELS)]],  # type: ignore[misc]
    "dimensions": list[Literal[tuple(dim.value for dim in DIMENSIONS)]],  # type: ignore[misc]
    "created_at": _TIME,
    "feedback_at": _TIME,
}

# Every validator of the pydantic models, and how the compiled pass keeps to it (the test fails on one not named
# here): by the compiled type ("type"), or by a check of register.ingest.bulk ("bulk: ...").
VALIDATORS: dict[str, dict[str, str]] = {
    "Response": {
        "_strip_id": "bulk: the id must be its own strip()",
        "_stakes": "type: a STAKES token exactly",
        "_context_cell": "type: retrieved_context is left to the per-record path",
        "_utc": "type: PLAIN_TIME; bulk: in UTC within the years 1..9999",
        "_claim_ids": "bulk: the same ids made, duplicates left to the per-record path",
        "_context_consistency": "type: retrieved_context, entailment and gt_claims are left to the per-record path",
        "_serialise": "bulk: absent extensions left out of the canonical JSON (UNSET)",
    },
    "Claim": {
        "_category": "type: a CATEGORIES token exactly",
        "_contradicted_by": "type: contradicted_by is left to the per-record path",
        "_tokens": "type: a list of tokens in upper case exactly",
        "_no_bools": "type: msgspec reads no boolean as an integer",
        "_distinct_labels": "bulk: distinct labels that LABEL_CONFLICTS allows together",
        "_distinct_dimensions": "bulk: at least one dimension, distinct",
        "_utc": "type: PLAIN_TIME; bulk: in UTC within the years 1..9999, not after the latest feedback time",
        "_contradiction_source": "type: contradicted_by is left to the per-record path",
        "_serialise": "bulk: absent extensions left out of the canonical JSON (UNSET)",
    },
}

ABSENT: Any = float("nan")  # a field left out (module docstring); one object, compared by identity

_BOUNDS = {annotated_types.MaxLen: "max_length", annotated_types.MinLen: "min_length", annotated_types.Ge: "ge",
           annotated_types.Le: "le"}


def _meta(field: FieldInfo) -> dict[str, Any]:
    """pydantic's bounds of a field as msgspec ``Meta`` keywords; any other kind of metadata is refused."""
    bounds: dict[str, Any] = {}
    for item in field.metadata:
        name = _BOUNDS.get(type(item))
        if name is None:
            raise TypeError(f"no compiled equivalent for the constraint {item!r}")
        bounds[name] = getattr(item, name)
    return bounds


def _value_type(name: str, field: FieldInfo, nested: dict[type, type]) -> tuple[Any, bool]:
    """The msgspec type of one pydantic field, and whether it may be null."""
    annotation = field.annotation
    nullable = False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        nullable = len(args) < len(typing.get_args(annotation))
        annotation = args[0] if len(args) == 1 else annotation
    if name in CANONICAL_SPELLING:
        return CANONICAL_SPELLING[name], nullable
    if typing.get_origin(annotation) is tuple:
        item, *rest = typing.get_args(annotation)
        if rest != [Ellipsis] or item not in nested:
            raise TypeError(f"{name}: no compiled equivalent for {field.annotation}")
        return list[nested[item]], nullable  # type: ignore[valid-type]
    if annotation in (str, int, bool):
        return annotation, nullable
    raise TypeError(f"{name}: no compiled equivalent for {field.annotation}")


def _struct(model: type[BaseModel], kind: str, nested: dict[type, type]) -> type[msgspec.Struct]:
    """The compiled type of one pydantic model (module docstring)."""
    extensions = CLAIM_EXTENSIONS if kind == "Claim" else RESPONSE_EXTENSIONS
    fields: list[tuple[str, Any, Any]] = []
    for name, field in model.model_fields.items():
        if name in PER_RECORD_FIELDS[kind]:
            continue
        value_type, nullable = _value_type(name, field, nested)
        bounds = _meta(field)
        if bounds and typing.get_origin(value_type) is not Literal:  # a token is within any bound pydantic sets
            value_type = Annotated[value_type, msgspec.Meta(**bounds)]
        if field.is_required():
            fields.append((name, value_type, msgspec.NODEFAULT))
        elif name in extensions:
            fields.append((name, value_type | None | msgspec.UnsetType, msgspec.UNSET))
        elif field.default is None or (type(field.default) is int and not nullable):  # None, or criticality's 1
            fields.append((name, value_type | None if nullable else value_type, ABSENT))
        else:
            raise TypeError(f"{name}: no compiled equivalent for the default {field.default!r}")
    return msgspec.defstruct(f"Plain{kind}", fields, kw_only=True, forbid_unknown_fields=True, gc=False,
                             module=__name__)


@dataclass(frozen=True)
class PlainTypes:
    """The compiled types for one set of text limits, with their decoder and the canonical JSON's encoder."""

    response: type[msgspec.Struct]
    claim: type[msgspec.Struct]
    decoder: msgspec.json.Decoder  # type: ignore[type-arg]
    # sorted keys, no spaces, null for None: ``hri_core.fingerprint.canonical_json``'s bytes but for non-ASCII text
    # and DEL, which it escapes (register.ingest.bulk escapes them after)
    encoder: msgspec.json.Encoder
    defaults: dict[str, Any]  # pydantic's defaults other than None, by field name (a claim's criticality: 1)


@functools.cache
def plain_types(limits: TextLimits) -> PlainTypes:
    """The compiled types of ``models_for(limits)`` (built once per limits)."""
    response_model = models_for(limits)
    (claim_model, _) = typing.get_args(response_model.model_fields["claims"].annotation)
    claim = _struct(claim_model, "Claim", {})
    response = _struct(response_model, "Response", {claim_model: claim})
    defaults = {name: field.default for kind, model in (("Claim", claim_model), ("Response", response_model))
                for name, field in model.model_fields.items()
                if name not in PER_RECORD_FIELDS[kind] and not field.is_required() and field.default is not None}
    return PlainTypes(response, claim, msgspec.json.Decoder(response), msgspec.json.Encoder(order="sorted"), defaults)

