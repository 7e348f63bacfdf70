"""Strict, bounded JSON: the one decoder of JSON text from users and files, and the limits it holds.

Every JSON text read from outside is decoded by ``decode_json``: a JSON Lines line, a query of a
RAGChecker file, a ``retrieved_context`` cell or string, a RAGAS context list, a quarantined record
fixed in place or exported. So one notion of "valid JSON" holds everywhere, and no text can crash
its reader or change meaning on its way in. Refused, each as a ``FieldProblem`` naming the field
where there is one:

- nesting deeper than ``MAX_JSON_DEPTH`` levels (measured before anything is decoded, so the answer
  never depends on how deep the caller's own stack is);
- a number written with more than ``MAX_NUMBER_DIGITS`` digits, or one too large to be a finite
  number (``1e400``); ``NaN``, ``Infinity`` and ``-Infinity``, which JSON does not have;
- a key repeated in one object (Python's ``json`` would keep the last value silently);
- a lone surrogate (``"\\ud800"``) in a string or key: not Unicode text, no database can store it;
- malformed JSON.

The size of a text is bounded where it is read (the import file limit, ``HRI_IMPORT_MAX_MB``; the
text limits of ``hri_core.models.TextLimits``); decoding is linear in it.

``json_list_items`` cuts a document's list into the texts of its items without decoding the
document, so that one bad item (a RAGChecker query) fails alone, exactly as one bad line does.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

from .errors import FieldProblem

__all__ = ["MAX_JSON_DEPTH", "MAX_NUMBER_DIGITS", "decode_json", "json_list_items", "nesting_depth"]

# A response needs about six levels (record, claims, claim, entailment, verdicts); a RAGChecker file two
# more. 512 leaves room for any extension and stays far below the interpreter's recursion limit (1,000)
# wherever the decoder, and whatever reads its value afterwards, is called from.
MAX_JSON_DEPTH = 512
# The interpreter's own default bound on converting digits to an integer (``sys.int_info``), held here
# for floats too: no field needs more than a few dozen digits, and this many still convert quickly.
MAX_NUMBER_DIGITS = 4_300


class _Refused(ValueError):
    """Raised by the strict decoder's hooks: something JSON or the register does not accept."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise _Refused
    return obj


def _number_problem(text: str) -> str | None:
    digits = sum(char.isdigit() for char in text) if len(text) > MAX_NUMBER_DIGITS else 0
    if digits > MAX_NUMBER_DIGITS:
        return (f"a number written with {digits:,} digits, over the limit of {MAX_NUMBER_DIGITS:,}; no field "
                "needs more than a few dozen")
    return None


def _strict_int(text: str) -> int:
    if _number_problem(text):
        raise _Refused
    return int(text)


def _strict_float(text: str) -> float:
    if _number_problem(text):
        raise _Refused
    value = float(text)
    if not math.isfinite(value):
        raise _Refused
    return value


def _no_constant(name: str) -> Any:
    raise _Refused


# One Python call per JSON object and per fraction (the hooks): the price of refusing each exactly. Integers are
# hooked only in a text long enough to hold one of more than MAX_NUMBER_DIGITS digits (most lines are shorter).
_STRICT = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_strict_float)
_STRICT_LONG = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_no_constant,
                                parse_float=_strict_float, parse_int=_strict_int)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")  # a cheap test before looking for lone surrogates
# A JSON string (its escapes included): what the nesting measure and the list cutter step over. One never closed
# runs to the end of the text, and nothing backtracks (possessive), so a text full of quotes is still read once.
_STRING_PATTERN = r'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)'
_STRING = re.compile(_STRING_PATTERN, re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")
_TOKENS = re.compile(_STRING_PATTERN + r"|[\[\]{}:,]", re.DOTALL)


class _Bad:
    """What a refused value decodes to when the decoder looks for where the problems are."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


class _Repeated(dict):  # type: ignore[type-arg]
    """An object that names a key more than once (the keys, in order), decoded to look for problems."""

    repeated: list[str]


def _path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _nodes(root: Any) -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every value under ``root``, iteratively (a deep value cannot recurse)."""
    stack: list[tuple[str, Any]] = [("", root)]
    while stack:
        path, value = stack.pop()
        yield path, value
        if isinstance(value, dict):
            stack.extend((_path(path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend((_path(path, i), v) for i, v in reversed(list(enumerate(value))))


def nesting_depth(text: str) -> int:
    """How many levels of arrays and objects the JSON text nests (brackets inside strings do not count).

    Linear, and cheap for the usual text: only one with more brackets than ``MAX_JSON_DEPTH`` is measured.
    """
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return text.count("[") + text.count("{")  # an upper bound, enough to say "within the limit"
    brackets = _BRACKETS.findall(_STRING.sub("", text))
    return max(accumulate(1 if b in "[{" else -1 for b in brackets), default=0)


def _key(token: str) -> str:
    """A string token's text (a key), or the token itself when it cannot be decoded."""
    try:
        value = json.loads(token)
    except ValueError:
        return token
    return value if isinstance(value, str) else token


def _deep_path(text: str) -> str:
    """The field whose value nests too deeply: the path down to the last key named within its first levels."""
    stack: list[list[Any]] = []  # [container, key or index]
    last_string = ""
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            stack.append([token, 0 if token == "[" else None])
            if len(stack) > MAX_JSON_DEPTH:
                break
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ",":
            if stack and stack[-1][0] == "[":
                stack[-1][1] += 1
        elif token == ":":
            if stack and stack[-1][0] == "{":
                stack[-1][1] = _key(last_string)
        else:
            last_string = token
    path, named = "", ""
    for _, key in stack[:4]:
        if key is None:
            break
        path = _path(path, key)
        if isinstance(key, str):
            named = path
    return named


def _located_problems(text: str) -> list[FieldProblem]:
    """Where the refused keys and numbers are: decode again with hooks that mark them instead of refusing."""
    def note(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) == len(pairs):
            return obj
        marked = _Repeated(obj)
        seen: set[str] = set()
        marked.repeated = []
        for key, _ in pairs:
            if key in seen and key not in marked.repeated:
                marked.repeated.append(key)
            seen.add(key)
        return marked

    def number(text: str, convert: Any) -> Any:
        problem = _number_problem(text)
        if problem:
            return _Bad(problem)
        value = convert(text)
        if isinstance(value, float) and not math.isfinite(value):
            return _Bad(f"{text} is too large to be a finite number; write a smaller number or null")
        return value

    try:
        root = json.loads(text, object_pairs_hook=note,
                          parse_constant=lambda name: _Bad(f"{name} is not a JSON value (JSON numbers are finite); "
                                                           "write a number or null"),
                          parse_int=lambda t: number(t, int), parse_float=lambda t: number(t, float))
    except json.JSONDecodeError as error:  # malformed after the refused value
        return [_malformed(error)]
    problems = []
    for path, value in _nodes(root):
        if isinstance(value, _Bad):
            problems.append(FieldProblem(path, value.message))
        elif isinstance(value, _Repeated):
            problems += [FieldProblem(_path(path, key), f"duplicate key {key!r}: the object names it more than "
                                                        "once, and only one value can be kept; remove the others")
                         for key in value.repeated]
    return problems or [FieldProblem("", "the JSON holds a value that cannot be read")]


def _malformed(error: json.JSONDecodeError) -> FieldProblem:
    where = f"line {error.lineno} column {error.colno}" if error.lineno > 1 else f"column {error.colno}"
    return FieldProblem("", f"malformed JSON at {where}: {error.msg}")


def _surrogate_problems(root: Any) -> list[FieldProblem]:
    problems = []
    for path, value in _nodes(root):
        texts = [value] if isinstance(value, str) else list(value) if isinstance(value, dict) else []
        for piece in texts:
            try:
                piece.encode("utf-8")
            except UnicodeEncodeError as error:
                char = piece[error.start]
                where = path if isinstance(value, str) else _path(path, piece.encode("utf-8", "backslashreplace")
                                                                   .decode())
                problems.append(FieldProblem(where, f"holds a lone surrogate \\u{ord(char):04x}, which is not "
                                                    "Unicode text (a pair such as \\ud83d\\ude00 is fine)"))
    return problems


def decode_json(text: str) -> tuple[Any, list[FieldProblem]]:
    """Decode one JSON document strictly and within the limits: ``(value, [])``, or ``(None, problems)``
    naming the field when there is one (see the module docstring for what is refused). Never raises for
    what the text holds."""
    depth = nesting_depth(text)
    if depth > MAX_JSON_DEPTH:
        return None, [FieldProblem(_deep_path(text), f"nested {depth:,} levels deep, over the limit of "
                                                     f"{MAX_JSON_DEPTH:,} (a response needs only a few levels)")]
    try:
        value = (_STRICT_LONG if len(text) > MAX_NUMBER_DIGITS else _STRICT).decode(text)
    except json.JSONDecodeError as error:
        return None, [_malformed(error)]
    except _Refused:
        return None, _located_problems(text)
    except RecursionError:  # cannot happen within MAX_JSON_DEPTH; kept so that no text can crash a reader
        return None, [FieldProblem("", f"nested too deeply to be read (over {MAX_JSON_DEPTH:,} levels)")]
    except ValueError as error:
        return None, [FieldProblem("", f"a value cannot be read: {error}")]
    if _may_hold_lone_surrogates(text):
        problems = _surrogate_problems(value)
        if problems:
            return None, problems
    return value, []


def _may_hold_lone_surrogates(text: str) -> bool:
    """An escape that may stand for a lone surrogate, or one in the text itself (a caller's string)."""
    if _SURROGATE_ESCAPE.search(text):
        return True
    if text.isascii():
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def json_list_items(text: str, key: str) -> tuple[list[str], list[str]] | None:
    """The items of a JSON document's list, each as its own text, without decoding the document.

    The list is the document itself when it is one, or the document's member ``key`` when it is an
    object whose ``key`` holds a list; returns ``(item texts, the object's keys)`` (no keys for a bare
    list), or None when the document is neither, or names ``key`` twice (then decode it whole). Blank
    items are not items; a list cut short (a truncated file) ends with what is left of it, so that the
    items before still count. Strings are stepped over whole: brackets and commas in them do not cut.
    """
    body = text.lstrip("\ufeff \t\r\n")
    if not body.startswith(("[", "{")):
        return None
    is_list = body.startswith("[")
    target = 1 if is_list else 0  # the depth inside the list whose items are cut (0: not found yet)
    depth, start, closed = 0, -1, False
    items: list[str] = []
    keys: list[str] = []
    last_string = ""  # the text of the last string token, decoded only when it turns out to be a key

    def cut(end: int) -> None:
        piece = text[start:end].strip()
        if piece:
            items.append(piece)

    for match in _TOKENS.finditer(text, len(text) - len(body)):
        token = match.group()
        if token in "[{":
            if not target and depth == 1 and token == "[" and keys and keys[-1] == key:
                target = 2
            if target and depth + 1 == target and not closed and start < 0:
                start = match.end()
            depth += 1
        elif token in "]}":
            depth -= 1
            if target and depth + 1 == target and start >= 0 and not closed:
                cut(match.start())
                closed = True
            if depth == 0:
                break
        elif token == ",":
            if target and depth == target and start >= 0 and not closed:
                cut(match.start())
                start = match.end()
        elif token == ":":
            if not is_list and depth == 1:
                name = _key(last_string)
                if name == key and key in keys:
                    return None
                keys.append(name)
        else:
            last_string = token
    if not target or start < 0:
        return None
    if not closed:  # cut short: what is left is the last item
        cut(len(text))
    return items, keys
