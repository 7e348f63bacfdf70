"""The compiled types of plain records (``register.ingest.plain_types``) cannot drift from the pydantic models.

``differences`` reads both sides on its own -- pydantic's field annotations, defaults and constraint metadata, and
msgspec's own description of the compiled types (``msgspec.inspect``) -- and names every field where they differ:
a field on one side only, a field required on one side only, a bound (``max_length``, ``min_length``, ``ge``,
``le``) or a vocabulary that differs, a null one side accepts and the other refuses, a default that is not the
marker the compiled pass needs. The tests run it for the default text limits and for other ones, check that it does
find a drifted type, and that every pydantic validator is one ``plain_types.VALIDATORS`` says how the compiled pass
keeps to: a new validator fails here until the compiled pass is taught it.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from typing import Annotated, Any, Literal

import annotated_types
import msgspec
import pytest
from pydantic import BaseModel

from hri_core.models import (
    CLAIM_EXTENSIONS,
    DEFAULT_LIMITS,
    RESPONSE_EXTENSIONS,
    Claim,
    Response,
    TextLimits,
    models_for,
)
from hri_core.vocabulary import CATEGORIES, STAKES, Dimension, Label
from register.ingest.plain_types import ABSENT, PER_RECORD_FIELDS, PLAIN_TIME, VALIDATORS, plain_types

OTHER_LIMITS = TextLimits(answer=10, question=20, claim_text=30, span=40, identifier=50)
_BOUNDS = {annotated_types.MaxLen: "max_length", annotated_types.MinLen: "min_length", annotated_types.Ge: "ge",
           annotated_types.Le: "le"}


def _pydantic_side(name: str, annotation: Any, metadata: list[Any], nested: dict[type, Any]) -> tuple[Any, bool]:
    """What the compiled type of a pydantic field must be (as ``msgspec.inspect`` describes it), and whether null is
    accepted: the same bounds, a vocabulary's tokens exactly, ISO 8601 text for a time."""
    args = typing.get_args(annotation) if typing.get_origin(annotation) in (typing.Union, types.UnionType) else ()
    nullable = type(None) in args
    core = next((a for a in args if a is not type(None)), annotation) if args else annotation
    bounds = {_BOUNDS[type(item)]: getattr(item, _BOUNDS[type(item)]) for item in metadata}
    inspect = msgspec.inspect
    if core is datetime:
        return inspect.StrType(pattern=PLAIN_TIME), nullable
    if name == "stakes":  # the validator reads any spelling: the compiled type takes the vocabulary's tokens
        return inspect.LiteralType(tuple(sorted(STAKES))), nullable
    if typing.get_origin(core) is Literal:
        return inspect.LiteralType(tuple(sorted(typing.get_args(core)))), nullable
    if typing.get_origin(core) is tuple:
        item = typing.get_args(core)[0]
        if item in (Label, Dimension):
            tokens = inspect.LiteralType(tuple(sorted(member.value for member in item)))
            return inspect.ListType(tokens, min_length=bounds.get("min_length")), nullable
        return inspect.ListType(nested[item]), nullable
    if core is str:
        return inspect.StrType(min_length=bounds.get("min_length"), max_length=bounds.get("max_length")), nullable
    if core is int:
        return inspect.IntType(ge=bounds.get("ge"), le=bounds.get("le")), nullable
    if core is bool:
        return inspect.BoolType(), nullable
    raise AssertionError(f"{name}: a type this test does not know ({annotation}); teach it and plain_types")


def differences(struct: type[msgspec.Struct], model: type[BaseModel], kind: str,
                nested: dict[type, Any] | None = None) -> list[str]:
    """Every difference between a compiled type and its pydantic model (module docstring)."""
    found = []
    info = msgspec.inspect.type_info(struct)
    compiled = {field.name: field for field in info.fields}
    defaults = {field.name: field.default for field in msgspec.structs.fields(struct)}
    expected = [name for name in model.model_fields if name not in PER_RECORD_FIELDS[kind]]
    if list(compiled) != expected:
        found.append(f"{kind}: fields {list(compiled)} against pydantic's {expected}")
    if not (info.forbid_unknown_fields and struct.__struct_config__.gc is False):
        found.append(f"{kind}: unknown keys must be refused and the type untracked by the collector")
    extensions = CLAIM_EXTENSIONS if kind == "Claim" else RESPONSE_EXTENSIONS
    for name in expected:
        field = model.model_fields[name]
        ours = compiled.get(name)
        if ours is None:
            continue
        value_type, nullable = _pydantic_side(name, field.annotation, field.metadata, nested or {})
        ours_types = ours.type.types if isinstance(ours.type, msgspec.inspect.UnionType) else (ours.type,)
        ours_nullable = any(isinstance(t, msgspec.inspect.NoneType) for t in ours_types)
        ours_value = [t for t in ours_types if not isinstance(t, msgspec.inspect.NoneType)]
        if ours_value != [value_type]:
            found.append(f"{kind}.{name}: {ours_value} against pydantic's {value_type}")
        if ours_nullable != nullable and not (name in extensions and ours_nullable):
            found.append(f"{kind}.{name}: null {'accepted' if ours_nullable else 'refused'}, pydantic's "
                         f"{'accepts' if nullable else 'refuses'} it")
        if field.is_required() != (defaults[name] is msgspec.NODEFAULT):
            found.append(f"{kind}.{name}: required here {defaults[name] is msgspec.NODEFAULT}, "
                         f"in pydantic {field.is_required()}")
        elif not field.is_required():
            marker = msgspec.UNSET if name in extensions else ABSENT
            if defaults[name] is not marker:
                found.append(f"{kind}.{name}: default {defaults[name]!r}, the compiled pass needs {marker!r}")
    return found


@pytest.mark.parametrize("limits", [DEFAULT_LIMITS, OTHER_LIMITS], ids=["default limits", "other limits"])
def test_the_compiled_types_are_the_pydantic_models_field_by_field(limits):
    compiled = plain_types(limits)
    response_model = models_for(limits)
    claim_model = typing.get_args(response_model.model_fields["claims"].annotation)[0]
    assert differences(compiled.claim, claim_model, "Claim") == []
    nested = {claim_model: msgspec.inspect.type_info(compiled.claim)}
    assert differences(compiled.response, response_model, "Response", nested) == []
    # the pydantic defaults other than None that the compiled pass puts in for a field left out
    assert compiled.defaults == {"criticality": Claim.model_fields["criticality"].default}


def test_the_comparison_finds_a_type_that_drifted():
    """A bound, a vocabulary, a field or a default changed on the compiled side is each named."""
    compiled = plain_types(DEFAULT_LIMITS)
    fields = {field.name: field for field in msgspec.structs.fields(compiled.claim)}

    def drifted(name: str, kind: Any, default: Any) -> type[msgspec.Struct]:
        return msgspec.defstruct("Drifted", [(f.name, kind if f.name == name else f.type,
                                              default if f.name == name else f.default)
                                             for f in fields.values() if name != "-" + f.name],
                                 kw_only=True, forbid_unknown_fields=True, gc=False)

    assert differences(drifted("text", Annotated[str, msgspec.Meta(max_length=19_999)] | None, ABSENT), Claim,
                       "Claim") == ["Claim.text: [StrType(min_length=None, max_length=19999, pattern=None)] against "
                                    "pydantic's StrType(min_length=None, max_length=20000, pattern=None)"]
    assert differences(drifted("category", Literal["legal"] | None | msgspec.UnsetType, msgspec.UNSET), Claim,
                       "Claim")[0].startswith("Claim.category: [LiteralType(values=('legal',))]")
    assert differences(drifted("criticality", Annotated[int, msgspec.Meta(ge=1, le=1000)], 1), Claim,
                       "Claim") == ["Claim.criticality: default 1, the compiled pass needs nan"]
    assert differences(drifted("span", str, ABSENT), Claim, "Claim") == [
        "Claim.span: [StrType(min_length=None, max_length=None, pattern=None)] against pydantic's "
        "StrType(min_length=None, max_length=20000, pattern=None)", "Claim.span: null refused, pydantic's accepts it"]
    assert differences(drifted("-span", str, ABSENT), Claim, "Claim")[0].startswith("Claim: fields")


def test_every_pydantic_validator_is_one_the_compiled_pass_keeps_to():
    for model in (Claim, Response):
        decorators = model.__pydantic_decorators__
        names = {*decorators.field_validators, *decorators.model_validators, *decorators.model_serializers}
        assert names == set(VALIDATORS[model.__name__]), model.__name__
    assert set(Response.model_fields["stakes"].annotation.__args__[0].__args__) == set(STAKES)
    assert set(Claim.model_fields["category"].annotation.__args__[0].__args__) == set(CATEGORIES)
