"""The compiled one-pass check of plain JSON Lines records: the importer's fast path.

Called by ``register.ingest.batches`` for each chunk of a JSON Lines file before anything is decoded in
Python's ``json``. Most lines a machine writes are *plain*: the interchange format's own fields only, every
value already in its canonical form (labels in upper case, stakes in lower case, ISO 8601 times, integers
where integers belong). Validating them one by one with pydantic, staging them and hashing a ``model_dump``
per record was most of an import's CPU; checking them with DuckDB's JSON functions instead (until issue 36) still
cost 3.36x DuckDB's own ``read_json`` of the file (docs/performance.md, "Figures behind the code").

Here each line is parsed, checked, made canonical and hashed in one pass: msgspec decodes it into the compiled
types of ``register.ingest.plain_types`` (generated from the pydantic models: every field's type and bounds
checked while it is read, no unknown key), a few rules no type can say are checked on the decoded record
(``plain_types.VALIDATORS`` names each), msgspec writes it back with sorted keys -- the canonical JSON
``records.canonical_json`` hashes (``hri_core.fingerprint``), byte for byte once its non-ASCII text is escaped --
and ``hashlib.sha256`` hashes it. Each plain record comes
out staged exactly as ``register.ingest.records.stage`` would stage its validated ``Response``: the same
columns, the same claim ids, the same content hash.

The pass only ever *accepts*. A line it does not take -- anything unusual, whether valid or not: a key it does
not know or names twice, a number where text belongs, a label in lower case, a time in another notation, an
extension such as ``retrieved_context``, a trailing comma, a lone surrogate -- goes through the per-record path
(``hri_core.parse_response``), which decides and names the line and field of every problem exactly as before.
So the fast path can change how fast a record is stored, never whether it is accepted or what is stored;
``tests/register/ingest/test_bulk.py`` imports random and hostile files both ways and compares every stored
column, and ``test_compiled_check.py`` holds the two paths equal on generated records.
"""

from __future__ import annotations

import hashlib
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import repeat
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from hri_core.models import CLAIM_EXTENSIONS, RESPONSE_EXTENSIONS, TextLimits
from hri_core.vocabulary import ALLOWED_LABEL_MASKS, DIMENSION_BIT, LABEL_BIT
from register.collector import collector_paused
from register.ingest.plain_types import ABSENT, plain_types
from register.ingest.records import CLAIM_SCHEMA, RESPONSE_SCHEMA

__all__ = ["BulkChunk", "stage_plain", "utc_text"]

_UNSET = msgspec.UNSET
_astuple = msgspec.structs.astuple
_count = tuple.count
_sha256 = hashlib.sha256
_EXTENSIONS = frozenset(CLAIM_EXTENSIONS + RESPONSE_EXTENSIONS)  # fields whose absence is UNSET (``plain_types``)
_FIXABLE = ("claim_id", "criticality", "feedback_at", "category", "is_core")  # what ``_Pass._claims_fixed`` changes
# Lines staged at a time: Arrow buffers of a few MB, which the allocator reuses slice after slice; those of a whole
# 50,000-line chunk (100 MB of raw text alone) were fresh pages from the system every time, a third of the pass's
# CPU in page faults (docs/performance.md, issue 36)
_SLICE = 5_000
_POOL = pa.system_memory_pool()  # (``_array``)
# An escaped colon (or another character of U+0030..U+003F): the count of a line's colons that finds a key named
# twice (``_Pass.take``) reads its colons as written, so such a line is left to the per-record path.
_ESCAPED_COLON = "\\u003"
# ... as an escape: a backslash not itself escaped (after an even run of backslashes, none included) before u003; a
# text holding the characters "\u003" (written "\\u003") is plain
_COLON_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\u003")
# What msgspec writes as UTF-8 and ``json.dumps`` (the canonical JSON: ASCII) as a \\u escape: DEL and non-ASCII
_NOT_ASCII = re.compile(r"[^\x00-\x7e]")
# a set of tokens as (how many, the sum of their bits): distinct tokens and only they make popcount(sum) == how many
_LABEL_SETS = pa.array([(bin(mask).count("1") << 32) + mask for mask in sorted(ALLOWED_LABEL_MASKS)], pa.int64())
_DIMENSION_SETS = pa.array([(bin(mask).count("1") << 32) + mask for mask in range(1, 1 << len(DIMENSION_BIT))],
                           pa.int64())


@dataclass(frozen=True)
class BulkChunk:
    """What the fast path took from a chunk: the positions (in the chunk) of the plain records, their
    response ids, and their staged responses and claims (the columns of ``records.stage``)."""

    positions: list[int]
    response_ids: list[str]
    responses: pa.Table
    claims: pa.Table


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _ascii(canonical: bytes) -> bytes:
    """msgspec's JSON as ``json.dumps`` writes it: every character past ``~`` as a \\u escape (a surrogate pair past
    U+FFFF). msgspec escapes the control characters as ``json.dumps`` does; a key is never other than ASCII."""
    if canonical.isascii() and b"\x7f" not in canonical:
        return canonical
    return _NOT_ASCII.sub(_escape_char, canonical.decode("utf-8")).encode("ascii")


def utc_text(text: str) -> tuple[datetime, str] | None:
    """A ``PLAIN_TIME`` text as pydantic reads it (``hri_core.models`` ``_utc_time``) and writes it back: the moment
    in UTC and its JSON text (to the second, ``.ffffff`` only when there are microseconds, ``Z``); None when it is
    no date (February 30) or falls outside the years 1..9999 once in UTC (pydantic refuses both)."""
    try:
        moment = datetime.fromisoformat(text)
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
    if len(text) == 20 and text[19] == "Z":  # to the second in UTC already: as pydantic writes it
        return moment, text
    written = f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}"  # (strftime's %Y writes the year 999 as "999")
    return moment, f"{written}.{moment.microsecond:06d}Z" if moment.microsecond else f"{written}Z"


class _Pass:
    """One chunk's check. ``take`` keeps each line whose record decodes into the compiled types, names each key once
    and holds no claim id twice, with its hash; ``chunk`` then puts in what pydantic would for the few records that
    need it (``_claims_fixed``), checks the labels and dimensions of the whole chunk at once, in Arrow, as bit masks,
    and stages the records -- a few Python steps per record, none per claim, for most records."""

    def __init__(self, limits: TextLimits, latest_feedback: datetime) -> None:
        types = plain_types(limits)
        self.decode = types.decoder.decode
        self.encode = types.encoder.encode
        self.criticality = types.defaults["criticality"]
        self.claim_fields, self.response_fields = types.claim.__struct_fields__, types.response.__struct_fields__
        self.claim_id = operator.itemgetter(self.claim_fields.index("claim_id"))  # of a claim's ``astuple``
        self.latest_feedback = latest_feedback
        self.positions: list[int] = []
        self.raw: list[str] = []
        self.hashes: list[str] = []
        self.records: list[Any] = []
        self.responses: list[tuple[Any, ...]] = []
        self.claims: list[tuple[Any, ...]] = []
        self.claim_counts: list[int] = []

    def take(self, position: int, line: str) -> None:
        """Keep the line's record (its values, its claims' values and its hash) when it decodes into the compiled
        types and names each key once; leave it to the per-record path otherwise."""
        # (a backslash is found at memchr's speed; most lines have none, and nearly all others no "\u003")
        if "\\" in line and _ESCAPED_COLON in line and _COLON_ESCAPE.search(line):
            return
        try:
            record = self.decode(line)
        except msgspec.MsgspecError:
            return
        written = self.encode(record)  # before anything is changed: the line's keys, each once
        values = _astuple(record)
        claims = list(map(_astuple, record.claims))
        # A key named twice leaves one value and one colon fewer in what msgspec writes back; a field left out is
        # written (as null) with one colon more. Strings keep their colons (none is escaped: ``_ESCAPED_COLON``).
        absent = _count(values, ABSENT) + sum(map(_count, claims, repeat(ABSENT)))
        if line.count(":") + absent != written.count(b":"):
            return
        rid = record.response_id
        if rid != rid.strip():  # pydantic strips the id; only one it keeps as it is is plain
            return
        changed = False
        created = record.created_at
        if created is not ABSENT and created is not None:
            moment = utc_text(created)
            if moment is None:
                return
            if moment[1] != created:
                record.created_at, changed = moment[1], True
        if record.gt_answer is None:  # an extension given as null is left out, as pydantic leaves it out
            record.gt_answer, changed = _UNSET, True
        if record.query_ambiguous is None:
            record.query_ambiguous, changed = _UNSET, True
        ids = set(map(self.claim_id, claims))
        if len(ids) != len(claims) and ABSENT not in ids and None not in ids and "" not in ids:
            return  # the same claim id twice (with ids to make, ``_claims_fixed`` tells)
        if changed:
            written, values = self.encode(record), _astuple(record)
        self.positions.append(position)
        self.raw.append(line)
        self.hashes.append(_sha256(_ascii(written)).hexdigest())
        self.records.append(record)
        self.responses.append(values)
        self.claims.extend(claims)
        self.claim_counts.append(len(claims))

    def _claims_to_fix(self, columns: dict[str, Sequence[Any]], owner: pa.Array) -> list[int]:
        """The records (their indexes in ``records``) with a claim that needs more than its type: an id to make, a
        default to put in, a feedback time to check, an extension given as null."""
        claim_id = _array(columns["claim_id"], pa.string())
        need = pc.or_kleene(pc.or_kleene(pc.is_null(claim_id), pc.equal(claim_id, "")),
                            pc.or_kleene(pc.is_null(_array(columns["criticality"], pa.int64())),
                                         pc.is_valid(_array(columns["feedback_at"], pa.string()))))
        records = set(owner.filter(need).to_pylist())
        for name in ("category", "is_core"):
            values = columns[name]
            if values.count(_UNSET) != len(values) and None in values:  # (a scan in C; left out everywhere, mostly)
                records.update(owner.filter(pa.array([value is None for value in values])).to_pylist())
        return sorted(records)

    def _claims_fixed(self, index: int) -> bool:
        """Make a record's claims as pydantic makes them (ids made, defaults put in, feedback times in UTC, extensions
        given as null left out) and hash it again if that changed it; False when it is not plain after all (an id
        twice, a feedback time pydantic refuses or that is later than allowed: the per-record path names it)."""
        record = self.records[index]
        rid = record.response_id
        ids = set()
        changed = False
        for position, claim in enumerate(record.claims):
            if claim.claim_id is ABSENT or not claim.claim_id:  # pydantic's made id: ``<response_id>-<n>``
                claim.claim_id, changed = f"{rid}-{position + 1}", True
            if claim.claim_id in ids:
                return False
            ids.add(claim.claim_id)
            if claim.criticality is ABSENT:
                claim.criticality, changed = self.criticality, True
            feedback_at = claim.feedback_at
            if feedback_at is not ABSENT and feedback_at is not None:
                moment = utc_text(feedback_at)
                if moment is None or moment[0] > self.latest_feedback:
                    return False
                if moment[1] != feedback_at:
                    claim.feedback_at, changed = moment[1], True
            if claim.category is None:
                claim.category, changed = _UNSET, True
            if claim.is_core is None:
                claim.is_core, changed = _UNSET, True
        if changed:
            self.hashes[index] = _sha256(_ascii(self.encode(record))).hexdigest()
        return True

    def chunk(self) -> BulkChunk:
        """The plain records as ``records.stage``'s tables, less those pydantic would refuse for what their types
        cannot say: the same label, dimension or claim id twice, labels ``LABEL_CONFLICTS`` refuses together, an
        empty list of dimensions, a feedback time that is no date or later than allowed."""
        n, m = len(self.positions), len(self.claims)
        offsets = pc.cumulative_sum(pa.array([0, *self.claim_counts], pa.int32()))
        owner = pc.list_parent_indices(pa.ListArray.from_arrays(offsets, pa.nulls(m)))
        claim = _columns(self.claims, self.claim_fields)
        refused = []
        to_fix = self._claims_to_fix(claim, owner) if m else []
        if to_fix:  # the fields a fix may change, as lists, each fixed claim's values put in
            fixable = {name: (self.claim_fields.index(name), list(claim[name])) for name in _FIXABLE}
            starts = offsets.to_pylist()
            for index in to_fix:
                fixed = self._claims_fixed(index)
                if not fixed:
                    refused.append(index)
                for at, values in enumerate(map(_astuple, self.records[index].claims), start=starts[index]):
                    for field, column in fixable.values():
                        column[at] = values[field]
                    if not fixed:  # left out below; its feedback times may be no times
                        fixable["feedback_at"][1][at] = None
            claim = {**claim, **{name: column for name, (_, column) in fixable.items()}}
        response = _columns(self.responses, self.response_fields)
        label_lists = _array(claim["labels"], pa.list_(pa.string()))
        dimension_lists = _array(claim["dimensions"], pa.list_(pa.string()))
        label_mask, labels_ok = _token_sets(label_lists, LABEL_BIT, _LABEL_SETS)
        dim_mask, dims_ok = _token_sets(dimension_lists, DIMENSION_BIT, _DIMENSION_SETS)
        response_ids = _array(response["response_id"], pa.string())
        claims = pa.table({
            "response_id": response_ids.take(owner),
            "claim_idx": pc.subtract(pa.array(range(m), pa.int32()), offsets.take(owner)),
            "claim_id": _array(claim["claim_id"], pa.string()), "labels": label_lists, "label_mask": label_mask,
            "dimensions": dimension_lists, "dim_mask": dim_mask, "contradicted_by": pa.nulls(m, pa.string()),
            "entailment": pa.nulls(m, pa.string()),
            **_staged(claim, CLAIM_SCHEMA, ("text", "criticality", "source_id", "span", "feedback_at",
                                            "feedback_count", "feedback_resolved", "category", "is_core"))},
            schema=CLAIM_SCHEMA)
        responses = pa.table({
            "response_id": response_ids, "content_hash": _array(self.hashes, pa.string()),
            "claim_count": _array(self.claim_counts, pa.int32()), "raw": _array(self.raw, pa.string()),
            "retrieved_context": pa.nulls(n, pa.string()), "gt_claims": pa.nulls(n, pa.string()),
            **_staged(response, RESPONSE_SCHEMA, ("use_case", "model", "created_at", "question", "answer", "stakes",
                                                  "gt_answer", "query_ambiguous"))},
            schema=RESPONSE_SCHEMA)
        bad = pa.concat_arrays([owner.filter(pc.invert(pc.and_(labels_ok, dims_ok))), pa.array(refused, pa.int64())])
        if not len(bad):
            return BulkChunk(self.positions, list(response["response_id"]), responses, claims)
        keep = pc.invert(pc.is_in(pa.array(range(n), pa.int64()), value_set=bad))
        claims = claims.filter(pc.invert(pc.is_in(owner, value_set=bad)))
        responses = responses.filter(keep)
        positions = pa.array(self.positions, pa.int64()).filter(keep).to_pylist()
        return BulkChunk(positions, responses.column("response_id").to_pylist(), responses, claims)


def _token_sets(lists: pa.ListArray, bits: dict[Any, int], allowed: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Each list's bit mask (null for a null list) and whether the list is allowed (a null list is): its tokens
    distinct and their set among ``allowed`` (``_LABEL_SETS``: how many, the sum of their bits)."""
    tokens = pa.array([token.value for token in bits], pa.string())
    values = pa.array(list(bits.values()), pa.int64())
    flat_bits = values.take(pc.index_in(lists.flatten(), value_set=tokens))
    running = pc.cumulative_sum(pa.concat_arrays([pa.array([0], pa.int64()), flat_bits]))
    offsets = lists.offsets
    sums = pc.subtract(running.take(offsets[1:]), running.take(offsets[:-1]))
    counts = pc.list_value_length(lists).cast(pa.int64())
    key = pc.add(pc.shift_left(counts, 32), sums)
    allowed_here = pc.or_kleene(pc.is_null(lists), pc.is_in(key, value_set=allowed))
    mask = pc.if_else(pc.is_null(lists), pa.scalar(None, pa.int32()), sums.cast(pa.int32(), safe=False))
    return mask, allowed_here


def _columns(rows: list[tuple[Any, ...]], names: tuple[str, ...]) -> dict[str, Sequence[Any]]:
    """Rows of decoded values (``astuple``) as columns by field name (``zip`` transposes them in C)."""
    return dict(zip(names, zip(*rows, strict=True), strict=True)) if rows else {name: () for name in names}


def _staged(columns: dict[str, Sequence[Any]], schema: pa.Schema, names: tuple[str, ...]) -> dict[str, pa.Array]:
    """Columns of decoded values as the staged columns of the same names: times (UTC text) as timestamps, an
    extension left out (UNSET) as null."""
    staged = {}
    for name in names:
        kind = schema.field(name).type
        values = columns[name]
        if name in _EXTENSIONS:
            left_out = values.count(_UNSET)  # (by identity: quick when, as mostly, every record leaves it out)
            if left_out == len(values):
                staged[name] = pa.nulls(len(values), kind)
                continue
            if left_out:
                values = [None if value is _UNSET else value for value in values]
        staged[name] = (_array(values, pa.string()).cast(kind) if pa.types.is_timestamp(kind)
                        else _array(values, kind))
    return staged


def _array(values: Any, kind: pa.DataType) -> pa.Array:
    """Decoded values as an Arrow array. ``from_pandas``: NaN (``ABSENT``, a field left out) is null, as None is.

    In the system's allocator: the default one (mimalloc) gave each slice's few MB of text pages fresh from the system,
    on this machine at several times the cost of a page the C library reuses (in an import of 100,000 records 0.77
    CPU-s against 0.17 in the kernel; docs/performance.md, issue 36)."""
    return pa.array(values, kind, from_pandas=True, memory_pool=_POOL)


def stage_plain(texts: list[str], limits: TextLimits, *, latest_feedback: datetime) -> BulkChunk:
    """Check a chunk's raw lines in one compiled pass; the plain records among them, staged (module docstring).

    ``texts``: the chunk's JSON Lines records as read (one per line, without the line break); ``limits``: the text
    limits in force; ``latest_feedback``: the latest ``feedback_at`` a plain claim may carry (a later one is left to
    the per-record path, which quarantines it naming the field). Nothing is written to the database.
    """
    # Paused for the pass: every decoded record allocates lists and tuples (its claims, each claim's labels and
    # values) that the cyclic collector tracks, so it would run over and over during the pass, each time walking the
    # records made so far -- doubling the pass (docs/performance.md, issue 36) -- though the pass makes no reference
    # cycle for it to collect: what it allocates is freed by reference counting once staged in Arrow. (The compiled
    # types themselves are untracked: ``gc=False``.)
    with collector_paused():
        parts = []
        for start in range(0, len(texts), _SLICE):
            check = _Pass(limits, latest_feedback)
            for position, line in enumerate(texts[start:start + _SLICE], start):
                check.take(position, line)
            parts.append(check.chunk())
        if not parts:
            return _Pass(limits, latest_feedback).chunk()
        return BulkChunk([position for part in parts for position in part.positions],
                         [rid for part in parts for rid in part.response_ids],
                         pa.concat_tables([part.responses for part in parts]),
                         pa.concat_tables([part.claims for part in parts]))
