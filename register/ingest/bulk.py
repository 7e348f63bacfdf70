"""Bulk validation of JSON Lines records in DuckDB: the importer's fast path for plain records.

Called by ``register.ingest.batches`` for each chunk of a JSON Lines file before anything is decoded in
Python. Most lines a machine writes are *plain*: ASCII text, the interchange format's own fields only,
every value already in its canonical form (labels in upper case, stakes in lower case, ISO 8601 times,
integers where integers belong). For those, validating them one by one with pydantic, staging them and
hashing a ``model_dump`` per record was most of an import's CPU (profiled: docs/performance.md, "Figures behind
the code").
Here the whole chunk is parsed once by DuckDB's JSON functions and checked in a few set-based statements,
and each plain record comes out staged exactly as ``register.ingest.records.stage`` would stage its
validated ``Response``: the same columns, the same claim ids, the same content hash (the canonical JSON
``records.canonical_json`` hashes, built in SQL).

The SQL only ever *accepts*. A line it does not recognise as plain -- anything unusual, whether valid or
not: non-ASCII text, a ``\\u`` escape, a key it does not know, a number where text belongs, a label in
lower case, a time in another notation, an extension such as ``retrieved_context``, a trailing comma,
a duplicate key -- goes through the per-record path (``hri_core.parse_response``), which decides and
names the line and field of every problem exactly as before (a label set the vocabulary refuses,
``hri_core.vocabulary.LABEL_CONFLICTS``, included: the SQL accepts only sets no conflict refuses). So the
fast path can change how fast a record is stored, never whether it is accepted or what is stored;
``tests/register/ingest/test_bulk.py`` imports random and hostile files both ways and compares every stored
column.

What the SQL cannot see is settled before it runs, on the raw lines (Arrow's compute kernels,
``candidates``): the line is ASCII and holds no ``\\u``, ``\\b`` or ``\\f`` escape and no DEL (so every string
decodes to text ``json.dumps`` writes back the same way; Python refuses lone surrogates), and nothing that
looks like a trailing comma (``,]`` or ``,}``), which DuckDB's parser accepts and Python's does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc

from hri_core.models import MAX_CRITICALITY, MAX_FEEDBACK_COUNT, TextLimits
from hri_core.vocabulary import CATEGORIES, DIMENSION_BIT, LABEL_BIT, LABEL_CONFLICTS, STAKES
from register.db.store import Cursor

__all__ = ["BulkChunk", "stage_plain"]

# Keys a plain record may have; any other key (an extension this path does not build, a typo, the
# quarantine export's ``_quarantine``) sends its line to the per-record path.
_RESPONSE_KEYS = ("response_id", "use_case", "model", "created_at", "question", "answer", "stakes", "claims",
                  "gt_answer", "query_ambiguous")
_CLAIM_KEYS = ("claim_id", "text", "labels", "dimensions", "criticality", "source_id", "span", "feedback_at",
               "feedback_count", "feedback_resolved", "category", "is_core")

# On the raw line: an escape other than \" \\ \/ \n \r \t (so every string decodes to printable ASCII and the
# three whitespace characters json.dumps writes as \n, \r, \t), DEL, or something like a trailing comma.
# An escaped backslash before b, f or u ("\\\\b") matches too: such a line only takes the per-record path.
_UNPLAIN_LINE = r"\\[bfu]|\x7f|,\s*[\]}]"
# ISO 8601 as machines write it: date, 'T', time to the second (fraction up to microseconds), optional offset
_PLAIN_TIME = (r"^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?"
               r"(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$")


@dataclass(frozen=True)
class BulkChunk:
    """What the fast path took from a chunk: the positions (in the chunk) of the plain records, their
    response ids, and their staged responses and claims (the columns of ``records.stage``)."""

    positions: list[int]
    response_ids: list[str]
    responses: pa.Table
    claims: pa.Table


def candidates(texts: list[str]) -> list[int]:
    """Indexes of the lines the SQL may look at (``_UNPLAIN_LINE``: ASCII, only the escapes json.dumps writes
    back the same way, nothing like a trailing comma)."""
    return _candidate_lines(texts)[0]


def _candidate_lines(texts: list[str]) -> tuple[list[int], pa.Array]:
    """``candidates`` and those lines as one Arrow array (the text is converted to Arrow once)."""
    lines = pa.array(texts, pa.string())
    if not texts:
        return [], lines
    ok = pc.and_(pc.string_is_ascii(lines), pc.invert(pc.match_substring_regex(lines, _UNPLAIN_LINE)))
    return pc.indices_nonzero(ok).to_pylist(), lines.filter(ok)


# Each field is read twice from one parse of the line (``json_transform``, see ``_PARSED``): ``l.<name>`` is its
# JSON text (NULL when absent or null; its first character says its type) and ``v.<name>`` its value (text
# unescaped). The helpers below take the field's name and write SQL over both.
def _is_text(name: str) -> str:
    return f"left(l.{name}, 1) = '\"'"


def _text_ok(name: str, limit: int) -> str:
    """SQL: absent, null, or text of at most ``limit`` characters (the line is ASCII: bytes are characters)."""
    return f"(l.{name} IS NULL OR ({_is_text(name)} AND strlen(v.{name}) <= {limit}))"


def _text(name: str) -> str:
    return f"(CASE WHEN {_is_text(name)} THEN v.{name} END)"


def _time_ok(name: str) -> str:
    """SQL: absent, null, or a plain ISO 8601 time that falls within the years 1000..9998 in UTC."""
    return (f"(l.{name} IS NULL OR ({_is_text(name)} AND regexp_full_match(v.{name}, '{_PLAIN_TIME}') "
            f"AND year({_time(name)}) BETWEEN 1000 AND 9998))")


def _time(name: str) -> str:
    """SQL: the time in UTC as TIMESTAMP (a time without an offset is UTC, as ``hri_core.models.ensure_utc``).

    The offset is taken off by arithmetic rather than a TIMESTAMPTZ cast: the pattern fixed its shape."""
    value = f"v.{name}"
    offset = f"substr({value}, -6, 1) IN ('+', '-')"
    minutes = (f"(CASE substr({value}, -6, 1) WHEN '-' THEN -1 ELSE 1 END) * "
               f"(TRY_CAST(substr({value}, -5, 2) AS INTEGER) * 60 + TRY_CAST(substr({value}, -2, 2) AS INTEGER))")
    local = (f"TRY_CAST(CASE WHEN {offset} THEN left({value}, -6) WHEN suffix({value}, 'Z') THEN left({value}, -1) "
             f"ELSE {value} END AS TIMESTAMP)")
    return (f"(CASE WHEN {_is_text(name)} THEN {local} - to_minutes(CASE WHEN {offset} THEN {minutes} ELSE 0 END)"
            f" END)")


def _flag_ok(name: str) -> str:
    return f"(l.{name} IS NULL OR l.{name} IN ('true', 'false'))"


def _flag(name: str) -> str:
    return f"(CASE WHEN l.{name} IN ('true', 'false') THEN l.{name} = 'true' END)"


def _int_ok(name: str, low: int, high: int) -> str:
    """SQL: a JSON integer written as digits (no sign, fraction or exponent) within low..high."""
    return (f"(regexp_full_match(l.{name}, '[0-9]{{1,9}}') "
            f"AND TRY_CAST(l.{name} AS BIGINT) BETWEEN {low} AND {high})")


def _one_of(name: str, vocabulary: tuple[str, ...]) -> str:
    """SQL: absent, null, or text that is one of ``vocabulary`` exactly (stakes, category)."""
    allowed = ", ".join(f"'{token}'" for token in vocabulary)
    return f"(l.{name} IS NULL OR ({_is_text(name)} AND v.{name} IN ({allowed})))"


def _tokens_ok(name: str, vocabulary: tuple[str, ...]) -> str:
    """SQL: a JSON list of distinct vocabulary tokens written exactly (upper case for labels), at least one.

    A number, list or boolean in the list reads as text that is no token, a null as NULL (not counted)."""
    allowed = ", ".join(f"'{token}'" for token in vocabulary)
    values = f"v.{name}"
    return (f"(left(l.{name}, 1) = '[' AND len({values}) >= 1 AND list_has_all([{allowed}], {values}) "
            f"AND len(list_distinct({values})) = len({values}) AND list_aggregate({values}, 'count') = len({values}))")


def _label_set_ok(name: str) -> str:
    """SQL: the labels hold no combination ``hri_core.vocabulary.LABEL_CONFLICTS`` refuses (SUPPORTED beside another
    label, PARTIAL beside UNSUPPORTED). A refused set is left to the per-record path, which names the rule."""
    values = f"v.{name}"

    def tokens(labels) -> str:
        return "[" + ", ".join(f"'{label.value}'" for label in sorted(labels)) + "]"
    return " AND ".join(f"NOT (list_has_any({values}, {tokens([c.label])}) AND list_has_any({values}, "
                        f"{tokens(c.excludes)}))" for c in LABEL_CONFLICTS)


def _keys_ok(allowed: tuple[str, ...]) -> str:
    """SQL: the object's keys (``keys``, duplicates kept as ``json_keys`` lists them) are among ``allowed``, none
    twice: the allowed keys present, counted once each, are all of them. (``list_has_all`` with ``list_distinct``
    said the same and cost noticeably more.)"""
    present = " + ".join(f"list_contains(keys, {key!r})::INTEGER" for key in allowed)
    return f"({present}) = len(keys)"


def _mask(values: str, bits: dict) -> str:
    cases = " ".join(f"WHEN '{token}' THEN {bit}" for token, bit in bits.items())
    return f"list_sum(list_transform({values}, lambda v: CASE v {cases} END))::INTEGER"


def _json_time(value: str) -> str:
    """SQL: pydantic's JSON text of a UTC time: to the second, '.ffffff' only when there are microseconds, 'Z'."""
    return (f"(strftime({value}, '%Y-%m-%dT%H:%M:%S') || CASE WHEN strftime({value}, '%f') = '000000' THEN '' "
            f"ELSE '.' || strftime({value}, '%f') END || 'Z')")


def _shape(keys: tuple[str, ...], leaf: str, claims: str | None = None) -> str:
    """A ``json_transform`` structure: every key as ``leaf`` ("JSON" or "VARCHAR"), lists of tokens as lists."""
    fields = []
    for key in keys:
        if key == "claims":
            fields.append(f'"claims":[{claims}]')
        elif key in ("labels", "dimensions") and leaf == "VARCHAR":
            fields.append(f'"{key}":["VARCHAR"]')
        else:
            fields.append(f'"{key}":"{leaf}"')
    return "{" + ",".join(fields) + "}"


_LEAVES = _shape(_RESPONSE_KEYS, "JSON", _shape(_CLAIM_KEYS, "JSON"))
_VALUES = _shape(_RESPONSE_KEYS, "VARCHAR", _shape(_CLAIM_KEYS, "VARCHAR"))
# one parse of each line: its keys, each claim's keys, every field as JSON text and as a value
_PARSED = f"""
    SELECT pos, json_keys(line) AS keys, json_type(line, '$.claims') AS claims_type,
           json_keys(line, '$.claims[*]') AS claim_keys,
           json_transform(line, '{_LEAVES}') AS l, json_transform(line, '{_VALUES}') AS v
    FROM _bulk_lines WHERE json_valid(line) AND json_type(line) = 'OBJECT'
"""


def _top_sql(limits: TextLimits) -> str:
    ok = " AND ".join([
        _keys_ok(_RESPONSE_KEYS),
        # printable ASCII without surrounding spaces, so that pydantic's strip() leaves it as it is
        f"{_is_text('response_id')} AND regexp_full_match(v.response_id, '[!-~]([ -~]*[!-~])?') "
        f"AND strlen(v.response_id) <= {limits.identifier}",
        _text_ok("use_case", limits.identifier), _text_ok("model", limits.identifier), _time_ok("created_at"),
        _text_ok("question", limits.question), _text_ok("answer", limits.answer), _one_of("stakes", STAKES),
        "claims_type = 'ARRAY'", _text_ok("gt_answer", limits.answer), _flag_ok("query_ambiguous"),
    ])
    return f"""
        SELECT pos, v.response_id AS rid, coalesce({ok}, false) AS ok, len(v.claims)::INTEGER AS claim_count,
               {_text('use_case')} AS use_case, {_text('model')} AS model, {_time('created_at')} AS created_at,
               {_text('question')} AS question, {_text('answer')} AS answer, {_text('stakes')} AS stakes,
               {_text('gt_answer')} AS gt_answer, {_flag('query_ambiguous')} AS query_ambiguous
        FROM _bulk_parsed
    """


def _claims_sql(limits: TextLimits) -> str:
    """The claims of the parsed lines, each with ``ok`` (plain). ``$latest_feedback``: the latest feedback time a
    plain claim may carry (``hri_core.feedback.latest_feedback_time`` of the import time, as a UTC TIMESTAMP); a later
    one takes the per-record path, which quarantines it naming the field."""
    ok = " AND ".join([
        _keys_ok(_CLAIM_KEYS),
        _text_ok("claim_id", limits.identifier), _text_ok("text", limits.claim_text),
        _text_ok("source_id", limits.identifier), _text_ok("span", limits.span),
        _tokens_ok("labels", tuple(str(label) for label in LABEL_BIT)), _label_set_ok("labels"),
        f"(l.dimensions IS NULL OR {_tokens_ok('dimensions', tuple(str(dim) for dim in DIMENSION_BIT))})",
        # absent: the default 1; null: pydantic refuses it (left to the per-record path)
        f"(CASE WHEN l.criticality IS NULL THEN NOT list_contains(keys, 'criticality') "
        f"ELSE {_int_ok('criticality', 1, MAX_CRITICALITY)} END)",
        _time_ok("feedback_at"), f"(l.feedback_at IS NULL OR {_time('feedback_at')} <= $latest_feedback)",
        f"(l.feedback_count IS NULL OR {_int_ok('feedback_count', 0, MAX_FEEDBACK_COUNT)})",
        _flag_ok("feedback_resolved"), _flag_ok("is_core"), _one_of("category", CATEGORIES),
    ])
    return f"""
        SELECT pos, idx, rid, coalesce({ok}, false) AS ok,
               coalesce(nullif({_text('claim_id')}, ''), rid || '-' || (idx + 1)) AS claim_id,
               {_text('text')} AS text, v.labels AS labels, {_mask('v.labels', LABEL_BIT)} AS label_mask,
               CASE WHEN l.dimensions IS NOT NULL THEN v.dimensions END AS dimensions,
               CASE WHEN l.dimensions IS NOT NULL THEN {_mask('v.dimensions', DIMENSION_BIT)} END AS dim_mask,
               coalesce(TRY_CAST(l.criticality AS INTEGER), 1) AS criticality,
               {_text('source_id')} AS source_id, {_text('span')} AS span, {_time('feedback_at')} AS feedback_at,
               TRY_CAST(l.feedback_count AS INTEGER) AS feedback_count,
               {_flag('feedback_resolved')} AS feedback_resolved, {_text('category')} AS category,
               {_flag('is_core')} AS is_core
        FROM (SELECT pos, v.response_id AS rid, unnest(l.claims) AS l, unnest(v.claims) AS v,
                     unnest(claim_keys) AS keys, unnest(range(len(l.claims))) AS idx
              FROM _bulk_parsed WHERE claims_type = 'ARRAY')
    """


def _canonical_claim() -> str:
    """SQL: a staged claim's canonical JSON: keys sorted, extensions only when given (``records.canonical_json``).

    DuckDB's ``to_json`` writes a struct's fields in order, without spaces, and escapes plain text as
    ``json.dumps`` does (quote, backslash, \\n, \\r, \\t). An absent extension is written as null and then
    cut: ``"category":null,`` cannot occur inside a JSON string, whose quotes are escaped."""
    struct = ("{'category': category, 'claim_id': claim_id, 'criticality': criticality, 'dimensions': dimensions, "
              f"'feedback_at': {_json_time('feedback_at')}, 'feedback_count': feedback_count, "
              "'feedback_resolved': feedback_resolved, 'is_core': is_core, 'labels': labels, 'source_id': source_id, "
              "'span': span, 'text': text}")
    return f"""replace(replace(to_json({struct}), '{{"category":null,', '{{'), ',"is_core":null', '')"""


def _canonical_response() -> str:
    """SQL: a staged response's canonical JSON, its claims' canonical JSON inside (``claims_text``: their texts
    joined by commas in claim order, NULL for none).

    Written as text around the claims rather than as one struct with a ``JSON[]`` list: casting each claim's text
    to JSON parsed it again (a large share of this statement). "answer" and "claims" sort first; the rest is a struct's
    JSON without its opening brace."""
    rest = (f"{{'created_at': {_json_time('created_at')}, 'gt_answer': gt_answer, 'model': model, "
            "'query_ambiguous': query_ambiguous, 'question': question, 'response_id': response_id, "
            "'stakes': stakes, 'use_case': use_case}")
    tail = f"""replace(replace(substr(to_json({rest}), 2), ',"gt_answer":null', ''), ',"query_ambiguous":null', '')"""
    return f"""'{{"answer":' || coalesce(to_json(answer), 'null') || ',"claims":[' || coalesce(claims_text, '') || '],'
               || {tail}"""


def stage_plain(cursor: Cursor, texts: list[str], limits: TextLimits, *, latest_feedback: datetime) -> BulkChunk:
    """Check a chunk's raw lines in bulk; the plain records among them, staged (see the module docstring).

    ``texts``: the chunk's JSON Lines records as read (one per line, without the line break); ``latest_feedback``:
    the latest ``feedback_at`` a plain claim may carry (a later one is left to the per-record path). Nothing is
    written to the database: the lines are read from Arrow and the staged rows come back as Arrow (a
    temporary table of a chunk's text cost more than checking it).
    """
    picked, raw = _candidate_lines(texts)
    lines = pa.table({"pos": pa.array(picked, pa.int32()), "line": raw})
    with cursor.relation("_bulk_lines", lines):
        parsed = cursor.arrow(_PARSED)
    with cursor.relation("_bulk_parsed", parsed):
        top = cursor.arrow(_top_sql(limits))
        claims = cursor.arrow(_claims_sql(limits),
                              {"latest_feedback": latest_feedback.astimezone(UTC).replace(tzinfo=None)})
    with cursor.relation("_bulk_top", top), cursor.relation("_bulk_claims", claims):
        # plain: the response and every claim plain, and claim ids (given or made) distinct within it
        plain = cursor.arrow("""
            SELECT t.pos FROM _bulk_top t LEFT JOIN _bulk_claims c USING (pos)
            WHERE t.ok GROUP BY t.pos
            HAVING coalesce(bool_and(c.ok), true) AND count(c.claim_id) = count(DISTINCT c.claim_id)
        """)
        with cursor.relation("_bulk_plain", plain):
            staged_c = cursor.arrow(f"""
                SELECT pos, rid AS response_id, idx::INTEGER AS claim_idx, claim_id, text, labels, label_mask,
                       dimensions, dim_mask, criticality, source_id, span, feedback_at::TIMESTAMPTZ AS feedback_at,
                       feedback_count, feedback_resolved, category, is_core, NULL::VARCHAR AS contradicted_by,
                       NULL::VARCHAR AS entailment, {_canonical_claim()} AS canonical
                FROM _bulk_claims SEMI JOIN _bulk_plain USING (pos) ORDER BY pos, idx
            """)
            with cursor.relation("_bulk_staged_c", staged_c):
                staged_r = cursor.arrow(f"""
                    SELECT pos, response_id, sha256({_canonical_response()}) AS content_hash, use_case, model,
                           created_at::TIMESTAMPTZ AS created_at, question, answer, stakes, claim_count,
                           gt_answer, query_ambiguous
                    FROM (SELECT t.pos, t.rid AS response_id, t.use_case, t.model, t.created_at, t.question,
                                 t.answer, t.stakes, t.claim_count, t.gt_answer, t.query_ambiguous,
                                 c.claims_text
                          FROM _bulk_top t SEMI JOIN _bulk_plain USING (pos)
                          LEFT JOIN (SELECT pos, string_agg(canonical, ',' ORDER BY claim_idx) AS claims_text
                                     FROM _bulk_staged_c GROUP BY pos) c USING (pos))
                    ORDER BY pos
                """)
    positions = staged_r.column("pos").to_pylist()
    index = {pos: i for i, pos in enumerate(picked)}
    nulls = pa.nulls(staged_r.num_rows, pa.string())
    responses = pa.table({
        **{name: staged_r.column(name) for name in ("response_id", "content_hash", "use_case", "model", "created_at",
                                                    "question", "answer", "stakes", "claim_count")},
        "raw": raw.take(pa.array([index[pos] for pos in positions], pa.int64())),
        "retrieved_context": nulls, "gt_answer": staged_r.column("gt_answer"),
        "query_ambiguous": staged_r.column("query_ambiguous"), "gt_claims": nulls})
    return BulkChunk(positions, responses.column("response_id").to_pylist(), responses,
                     staged_c.drop_columns(["pos", "canonical"]))
