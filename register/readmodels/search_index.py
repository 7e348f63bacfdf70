"""The search index: which response revisions hold which words, so that a search reads postings, not text.

The console's search finds every current response whose question, answer or any claim's text contains the
search text, case-insensitively and literally (``contains(lower(text), lower(needle))``). At scale that scan
took many seconds (docs/performance.md, "Figures behind the code"). This module keeps an inverted index of the
three texts (migration 023) and answers the same question from it, with the same result:

* **Words.** A text is lower-cased and split at every character that is neither a letter nor a digit
  (``WORD_SEPARATORS``, DuckDB's RE2 Unicode classes); the pieces are its words. ``search_words`` numbers every
  word seen, ``search_postings`` holds one row per (word, response revision) that has it.
* **Why the index finds every match.** The search text is lower-cased and split the same way. If it occurs in a
  text, each of its words lies inside one word of the text: a word between two separators of the search text
  *is* a word of the text; the first one (nothing before it in the search text) is the end of a word, the last
  one the start of a word, and a search text of one word with no separator is anywhere inside a word. So the
  revisions holding, for every word of the search, a word of the vocabulary that matches it that way
  (``_word_condition``) include every match.
* **Exact without reading text** when the search text is one word and nothing else: then a revision matches if
  and only if one of its words contains it, which is what the postings say. Otherwise (two words, or a separator
  in the search text: ``notice period``, ``ISO-27001``, ``"quoted"``) the candidates are checked against their
  text with the scan's own test (``contains(lower(...))``): the result is the scan's, over fewer rows.
* **Never stale.** ``search_index.indexed_through`` is the highest response key indexed; keys come from one
  sequence and only grow, and writes are serialised, so every revision at or below it is indexed and those above
  it are searched by the scan, limited to them (``search_select``). ``catch_up`` indexes the revisions above it
  in slices of keys, one transaction each (``register.readmodels.hub.revisions_committed`` calls it when any write
  of revisions has committed: an import, the synthetic copies, a revision made in the register; ``python -m
  register search-index`` catches up a database upgraded from before the index). A revision that stops being
  current keeps its postings: the search's callers keep current responses only.
* **Pairs** (migration 027). ``search_pairs`` numbers every pair of adjacent words that stand exactly one space
  apart in one text (a question, an answer or a claim: never across two), ``search_pair_postings`` holds one row
  per (pair, response revision) that has it. **Exact without reading text** when the search text is two words
  with one space between them (``notice period``): a text contains ``a b`` if and only if it has adjacent words
  ``x``, ``y`` one space apart with ``x`` ending in ``a`` and ``y`` starting with ``b`` (the space ends ``x``; the
  letter after it starts ``y``, so the run of separators is that one space). Longer search texts add each of
  their one-space pairs to the candidates' conditions (fewer candidates; the texts still decide). The
  revisions indexed before migration 027 have their words but not their pairs (``pairs_missing_through``): the
  search leaves pairs alone until ``catch_up`` has filled them in.
* **Runs of separators** (migration 029). A search text with no letter or digit at all (``%``, ``§``, ``--``)
  has no word to look up. Each of its occurrences in a text lies inside one maximal run of separators of that text
  (every character of it is a separator), so ``search_separators`` numbers every run that stands in a text (a run
  of exactly one space, which no stripped search text can lie in, left out) and ``search_separator_postings``
  holds one row per (run, response revision) that has it: a revision matches if and only if one of its runs
  contains the search text, **exact without reading text**. The revisions indexed before migration 029 have no
  runs (``separators_missing_through``): such a search scans until ``catch_up`` has filled them in.
* **Letters and digits** (migration 030). A search for one letter or digit (``e``, ``7``) lies inside a word of
  nearly every answer: the words holding it are most of the vocabulary and their postings most of the index
  (seconds for ``e``). Each word of ``search_words`` carries which of ``CHARACTERS`` (a-z, 0-9) it holds, one bit
  each, and ``search_characters`` holds one row per revision with the bits of all its words together: a revision
  matches such a search if and only if the search's bit is set (the letter or digit, lower-cased, stands in a word
  of one of its texts), **exact without reading text**. A revision whose words hold none of them has no row. The
  revisions indexed before migration 030 have no masks (``characters_missing_through``): the search reads the
  words' postings until ``catch_up`` has filled the masks in (from the postings: no text is read).

``search_check.check`` compares the index with the words, pairs, runs and letters and digits recomputed from the
texts (the hub's check, at every test's teardown; ``search-index --check``). ``rebuild`` indexes everything again from
nothing (the hub's rebuild).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from register.access.permissions import Permission, authorize
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction
from register.errors import RegisterError
from register.readmodels import response_ids

__all__ = ["CHARACTERS", "SLICE_KEYS", "WORD_SEPARATORS", "IndexLag", "IndexState", "Lookup", "catch_up", "lag",
           "lookup", "rebuild", "search_select", "state"]

WORD_SEPARATORS = r"[^\p{L}\p{N}]+"  # RE2: a run of characters that are neither letters nor digits
SLICE_KEYS = 250_000  # response keys per catch-up transaction (bounds its word rows: docs/performance.md)
# the letters and digits a one-character search is answered for from the revisions' masks: bit i is CHARACTERS[i]
CHARACTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
_STATE_ROW = "the search index's one row (migration 023 writes it)"  # what NotFound names when it is missing

ProgressFn = Callable[[int, "int | None", str], None]


def _words_expr(text: str) -> str:
    """The list of words of the SQL expression ``text`` (with empty pieces at a leading or trailing separator)."""
    return f"regexp_split_to_array(lower({text}), '{WORD_SEPARATORS}')"


def _separators_expr(text: str) -> str:
    """The runs of separators of the SQL expression ``text``, in order: run ``i`` stands between word ``i`` and
    word ``i + 1`` of ``_words_expr`` (which has one piece more)."""
    return f"regexp_extract_all(lower({text}), '{WORD_SEPARATORS}')"


# What the index builds from, in one pass per text (cheaper than the definitions of the words and pairs that
# ``search_check`` keeps as the spec): each text cut at every run of separators other than exactly one space,
# leaving runs of words one space apart; each run split at its spaces. The words are the non-empty pieces (the same
# words: a piece between two separators of any kind); the pairs are adjacent non-empty pieces of a run (exactly one
# space between them).
_RUN_BREAKS = r"[^\p{L}\p{N}]{2,}|[^\p{L}\p{N} ]"  # two or more separators, or one that is not a space
# every text of the revisions with keys in ($lo, $hi] as (response_key, t): the question, the answer and each claim
_SLICE_TEXTS = """
    SELECT response_key, question AS t FROM responses WHERE response_key > $lo AND response_key <= $hi
    UNION ALL
    SELECT response_key, answer FROM responses WHERE response_key > $lo AND response_key <= $hi
    UNION ALL
    SELECT response_key, text FROM claims WHERE response_key > $lo AND response_key <= $hi"""
_SLICE_RUNS = f"""
    SELECT response_key, string_split(run, ' ') AS w FROM (
        SELECT response_key, unnest(regexp_split_to_array(lower(t), '{_RUN_BREAKS}')) AS run FROM ({_SLICE_TEXTS}))
    WHERE run <> ''"""
_RUN_WORDS = "SELECT DISTINCT response_key, word FROM (SELECT response_key, unnest(w) AS word FROM _slice_runs) " \
             "WHERE word <> ''"
_RUN_PAIRS = """
    SELECT response_key, pair[1] AS first, pair[2] AS second
    FROM (SELECT response_key, unnest(list_zip(w[1:len(w) - 1], w[2:])) AS pair FROM _slice_runs WHERE len(w) > 1)
    WHERE pair[1] <> '' AND pair[2] <> ''"""

# the runs of separators of each text of the revisions with keys in ($lo, $hi] other than a lone space: the breaks
# between the runs of words above (the regex takes a whole run of two or more, or one separator that is not a space)
_RUN_SEPARATORS = f"""
    SELECT DISTINCT response_key, sep FROM (
        SELECT response_key, unnest(regexp_extract_all(lower(t), '{_RUN_BREAKS}')) AS sep FROM ({_SLICE_TEXTS}))"""

# the mask of CHARACTERS a vocabulary word holds (words are lower case already)
_WORD_CHARACTERS = " | ".join(f"(contains(word, '{ch}')::UBIGINT << {i})" for i, ch in enumerate(CHARACTERS))


@dataclass(frozen=True)
class IndexState:
    """``indexed_through``: every response revision with a key up to it is indexed; ``pending``: the revisions
    above it; ``words`` and ``postings``: the index's size; ``pairs`` and ``pair_postings``: its word pairs';
    ``pairs_missing_through``: the revisions up to this key have no pairs yet (0: every indexed one has);
    ``separators``, ``separator_postings`` and ``separators_missing_through``: the same of the runs of separators;
    ``character_masks`` and ``characters_missing_through``: the revisions' masks of letters and digits."""

    indexed_through: int
    pending: int
    words: int
    postings: int
    pairs: int = 0
    pair_postings: int = 0
    pairs_missing_through: int = 0
    separators: int = 0
    separator_postings: int = 0
    separators_missing_through: int = 0
    character_masks: int = 0
    characters_missing_through: int = 0


def state(store: Store) -> IndexState:
    """How far the index is: see ``IndexState``."""
    row = store.row("SELECT i.indexed_through AS upto, i.pairs_missing_through AS missing, "
                    "(SELECT count(*) FROM search_words) AS words, (SELECT count(*) FROM search_postings) AS postings, "
                    "(SELECT count(*) FROM search_pairs) AS pairs, "
                    "(SELECT count(*) FROM search_pair_postings) AS pair_postings, "
                    "(SELECT count(*) FROM search_separators) AS separators, "
                    "(SELECT count(*) FROM search_separator_postings) AS separator_postings, "
                    "i.separators_missing_through AS separators_missing, "
                    "(SELECT count(*) FROM search_characters) AS character_masks, "
                    "i.characters_missing_through AS characters_missing FROM search_index i",
                    what=_STATE_ROW)
    upto = int(row["upto"])
    pending = store.scalar("SELECT count(*) FROM responses WHERE response_key > ?", [upto])
    return IndexState(upto, int(pending or 0), int(row["words"]), int(row["postings"]), int(row["pairs"]),
                      int(row["pair_postings"]), int(row["missing"]), int(row["separators"]),
                      int(row["separator_postings"]), int(row["separators_missing"]), int(row["character_masks"]),
                      int(row["characters_missing"]))


@dataclass(frozen=True)
class IndexLag:
    """The revisions the index has not caught up with: ``pending`` of them, the first stored at ``since`` -- every
    revision stored before it is indexed (the index is "as of" that time); ``indexed_through``: the mark."""

    pending: int
    since: datetime
    indexed_through: int


def lag(store: Store) -> IndexLag | None:
    """How far behind the index is (``IndexLag``), or None when it holds every revision. Reads only the revisions
    above the mark (the newest keys: the scan's zone maps skip the rest), so a page may ask on every run."""
    upto = int(store.scalar("SELECT indexed_through FROM search_index") or 0)
    row = store.query_one("SELECT count(*), min(imported_at) FROM responses WHERE response_key > ?", [upto])
    if row is None or not row[0]:
        return None
    return IndexLag(int(row[0]), row[1], upto)


def _add_terms(tx: Transaction, staged: str, vocabulary: str, term: str, term_id: str,
               postings: str) -> tuple[int, int]:
    """Number the terms of the temporary table ``staged`` (``response_key`` and the ``term`` columns) that
    ``vocabulary`` lacks, after its highest number, and write their postings to ``postings``; returns (terms added,
    postings written). The postings go in sorted by term number: each term's rows of a slice are contiguous, so a
    lookup skips the other row groups. (Table and column names are this module's constants.)"""
    added = tx.scalar(f"""
        INSERT INTO {vocabulary} ({term_id}, {term})
        SELECT (SELECT coalesce(max({term_id}), 0) FROM {vocabulary}) + row_number() OVER (ORDER BY {term}), {term}
        FROM (SELECT DISTINCT {term} FROM {staged} EXCEPT SELECT {term} FROM {vocabulary})""")
    written = tx.scalar(f"""
        INSERT INTO {postings}
        SELECT v.{term_id}, s.response_key FROM {staged} s JOIN {vocabulary} v USING ({term})
        ORDER BY v.{term_id}, s.response_key""")
    return int(added or 0), int(written or 0)


def _index_pairs(tx: Transaction) -> int:
    """Index the word pairs of the runs in ``_slice_runs``, whose words are indexed already; returns how many pair
    postings were written."""
    # distinct after the words' numbers replace them: fewer bytes to compare than the two words
    tx.execute(f"""CREATE OR REPLACE TEMP TABLE _slice_pairs AS
        SELECT DISTINCT s.response_key, f.word_id AS first_id, g.word_id AS second_id
        FROM ({_RUN_PAIRS}) s JOIN search_words f ON f.word = s.first JOIN search_words g ON g.word = s.second""")
    _, postings = _add_terms(tx, "_slice_pairs", "search_pairs", "first_id, second_id", "pair_id",
                             "search_pair_postings")
    tx.execute("DROP TABLE _slice_pairs")
    return postings


def _index_separators(tx: Transaction, low: int, high: int) -> int:
    """Index the runs of separators of the revisions with keys in (``low``, ``high``]; returns how many run postings
    were written."""
    tx.execute(f"CREATE OR REPLACE TEMP TABLE _slice_separators AS {_RUN_SEPARATORS}", {"lo": low, "hi": high})
    _, postings = _add_terms(tx, "_slice_separators", "search_separators", "sep", "sep_id",
                             "search_separator_postings")
    tx.execute("DROP TABLE _slice_separators")
    return postings


def _index_characters(tx: Transaction, low: int, high: int) -> int:
    """Write the masks of letters and digits of the revisions with keys in (``low``, ``high``], whose words are indexed
    already (from their postings: no text is read); returns how many masks were written. The vocabulary's words
    without a mask (new ones, or all of them the first time after migration 030) get theirs first."""
    tx.execute(f"UPDATE search_words SET characters = {_WORD_CHARACTERS} WHERE characters IS NULL")
    # the slice's postings are the rows with its keys: zone maps skip the other slices' row groups
    written = tx.scalar("""
        INSERT INTO search_characters
        SELECT p.response_key, bit_or(w.characters) FROM search_postings p JOIN search_words w USING (word_id)
        WHERE p.response_key > $lo AND p.response_key <= $hi
        GROUP BY p.response_key HAVING bit_or(w.characters) <> 0 ORDER BY p.response_key""", {"lo": low, "hi": high})
    return int(written or 0)


def _index_slice(high: int) -> Callable[[Transaction], Change]:
    """Index the revisions with keys above the index's mark and up to ``high``, and move the mark to ``high``."""

    def write(tx: Transaction) -> Change:
        low = int(tx.scalar("SELECT indexed_through FROM search_index"))
        if high <= low:  # caught up meanwhile
            return Change("search_index", None, None, {"indexed_through": low}, result=0)
        tx.execute(f"CREATE OR REPLACE TEMP TABLE _slice_runs AS {_SLICE_RUNS}", {"lo": low, "hi": high})
        tx.execute(f"CREATE OR REPLACE TEMP TABLE _slice_words AS {_RUN_WORDS}")
        new_words, postings = _add_terms(tx, "_slice_words", "search_words", "word", "word_id", "search_postings")
        pair_postings = _index_pairs(tx)
        separator_postings = _index_separators(tx, low, high)
        character_masks = _index_characters(tx, low, high)
        revisions = tx.scalar("SELECT count(*) FROM responses WHERE response_key > ? AND response_key <= ?",
                              [low, high])
        tx.execute("UPDATE search_index SET indexed_through = ?", [high])
        tx.execute("DROP TABLE _slice_words")
        tx.execute("DROP TABLE _slice_runs")
        return Change("search_index", None, {"indexed_through": low},
                      {"indexed_through": high, "revisions": revisions, "new_words": new_words,
                       "postings": postings, "pair_postings": pair_postings,
                       "separator_postings": separator_postings, "character_masks": character_masks},
                      result=int(revisions or 0))

    return write


def _pairs_of_slice(tx: Transaction, low: int, high: int) -> int:
    """Index the word pairs of the revisions with keys in (``low``, ``high``], whose words are indexed already."""
    tx.execute(f"CREATE OR REPLACE TEMP TABLE _slice_runs AS {_SLICE_RUNS}", {"lo": low, "hi": high})
    postings = _index_pairs(tx)
    tx.execute("DROP TABLE _slice_runs")
    return postings


@dataclass(frozen=True)
class _Backfill:
    """A part of the index added by a later migration: the revisions with keys up to ``column`` (a column of
    ``search_index``) were indexed without it; ``index`` writes it for a slice of keys; ``action`` audits each
    slice."""

    column: str
    index: Callable[[Transaction, int, int], int]
    action: str
    postings: str  # the audit record's name of the postings written
    what: str  # for progress messages


_BACKFILLS = (
    _Backfill("pairs_missing_through", _pairs_of_slice, "search.pairs_indexed", "pair_postings", "the word pairs"),
    _Backfill("separators_missing_through", _index_separators, "search.separators_indexed", "separator_postings",
              "the runs of separators"),
    _Backfill("characters_missing_through", _index_characters, "search.characters_indexed", "character_masks",
              "the letters and digits"),
)


def _backfill_slice(part: _Backfill, slice_keys: int) -> Callable[[Transaction], Change]:
    """Index ``part`` for the highest ``slice_keys`` keys of those indexed without it, and lower its mark past them."""

    def write(tx: Transaction) -> Change:
        high = int(tx.scalar(f"SELECT {part.column} FROM search_index"))
        low = max(0, high - slice_keys)
        postings = part.index(tx, low, high) if high > 0 else 0
        tx.execute(f"UPDATE search_index SET {part.column} = ?", [low])
        return Change("search_index", None, {part.column: high}, {part.column: low, part.postings: postings},
                      result=high - low)

    return write


def catch_up(store: Store, actor: Actor, *, progress: ProgressFn | None = None,
             slice_keys: int = SLICE_KEYS, stopping: Callable[[], bool] | None = None) -> int:
    """Index every response revision above the index's mark, ``slice_keys`` keys per transaction (audited as
    ``search.indexed``); returns how many revisions were indexed. Safe to stop at any point: the mark moves
    with each committed slice, and what is above it is searched by a scan. ``stopping()``, asked before each
    slice, ends the catch-up there when true (the console's background catch-up stopping with its process). Needs
    the import permission (the index is the import's last step)."""
    authorize(store, actor, Permission.IMPORT, entity_type="search_index")
    if slice_keys < 1:
        raise ValueError(f"slice_keys must be >= 1, got {slice_keys}")
    low = int(store.scalar("SELECT indexed_through FROM search_index"))
    high = response_ids.largest_key(store)
    total = int(store.scalar("SELECT count(*) FROM responses WHERE response_key > ?", [low]) or 0)
    done = 0
    while low < high:
        if stopping is not None and stopping():
            return done
        upto = min(high, low + slice_keys)
        done += store.write(actor, "search.indexed", _index_slice(upto))
        low = upto
        if progress:
            progress(done, total, f"search index: {done:,} of {total:,} revisions indexed")
    for part in _BACKFILLS:
        _backfill(store, actor, part, progress, slice_keys, stopping)
    return done


# every table of the index, emptied by ``rebuild``
_TABLES = ("search_words", "search_postings", "search_pairs", "search_pair_postings", "search_separators",
           "search_separator_postings", "search_characters")


def rebuild(store: Store, actor: Actor, *, progress: ProgressFn | None = None, slice_keys: int = SLICE_KEYS) -> int:
    """Index every response revision again from nothing: one transaction empties the index and moves its marks to
    0 (audited as ``search.emptied``), then ``catch_up``; returns how many revisions were indexed. A search
    between the two scans the texts (every key is above the mark): slower, never stale. Needs the import
    permission, as ``catch_up``."""
    authorize(store, actor, Permission.IMPORT, entity_type="search_index")

    def empty(tx: Transaction) -> Change:
        before = int(tx.scalar("SELECT indexed_through FROM search_index"))
        for table in _TABLES:  # this module's constants
            tx.execute(f"DELETE FROM {table}")
        tx.execute("UPDATE search_index SET indexed_through = 0, pairs_missing_through = 0, "
                   "separators_missing_through = 0, characters_missing_through = 0")
        return Change("search_index", None, {"indexed_through": before}, {"indexed_through": 0})

    store.write(actor, "search.emptied", empty)
    return catch_up(store, actor, progress=progress, slice_keys=slice_keys)


def _backfill(store: Store, actor: Actor, part: _Backfill, progress: ProgressFn | None, slice_keys: int,
              stopping: Callable[[], bool] | None = None) -> None:
    """Index ``part`` (word pairs, migration 027; runs of separators, 029) of the revisions indexed before its
    migration, from the top key down, ``slice_keys`` keys per transaction (audited as ``part.action``); nothing to
    do on a database indexed since. ``stopping``: as ``catch_up``'s."""
    missing = int(store.scalar(f"SELECT {part.column} FROM search_index"))
    while missing > 0 and not (stopping is not None and stopping()):
        missing -= store.write(actor, part.action, _backfill_slice(part, slice_keys))
        if progress:
            progress(missing, None, f"search index: {part.what} of the keys up to {missing:,} still to index")


@dataclass(frozen=True)
class _Split:
    """A search text as the index reads it: the index's mark, whether its pairs (runs, masks of letters and digits)
    are complete, the text's words (empty pieces where it starts or ends with a separator) and the runs of
    separators between them."""

    upto: int
    pairs_ready: bool
    words: list[str]
    separators: list[str]
    separators_ready: bool = False
    characters_ready: bool = False

    def pairs(self) -> list[int]:
        """Positions ``i`` where words ``i`` and ``i + 1`` are a pair the index holds (one space between them)."""
        if not self.pairs_ready:
            return []
        return [i for i, sep in enumerate(self.separators) if sep == " " and self.words[i] and self.words[i + 1]]


def _split(store: Store, text: str) -> _Split:
    """``text`` split as the index splits texts, with the index's mark, in one query."""
    row = store.one(f"SELECT indexed_through, pairs_missing_through = 0 AS pairs_ready, "
                    f"separators_missing_through = 0 AS separators_ready, "
                    f"characters_missing_through = 0 AS characters_ready, "
                    f"{_words_expr('$text')} AS words, {_separators_expr('$text')} AS separators FROM search_index",
                    {"text": text})
    if row is None:
        raise RegisterError("search_index: its one row is missing (migration 023 writes it)")
    return _Split(int(row["indexed_through"]), bool(row["pairs_ready"]), list(row["words"] or []),
                  list(row["separators"] or []), bool(row["separators_ready"]), bool(row["characters_ready"]))


def _word_condition(words: list[str], i: int, p: Params) -> str:
    """The condition on a vocabulary ``word`` that can hold search word ``i`` of ``words`` (see the module)."""
    value = p(words[i])
    first, last = i == 0, i == len(words) - 1
    if first and last:
        return f"contains(word, {value})"
    if first:  # nothing before it in the search text: the end of a word
        return f"suffix(word, {value})"
    if last:  # nothing after it: the start of a word
        return f"starts_with(word, {value})"
    return f"word = {value}"


def _scan(needle: str, keys: str) -> str:
    """The scan's SELECT of response keys whose texts contain ``needle`` (a bound, lower-cased placeholder), over
    the revisions ``keys`` (a condition on response_key)."""
    return (f"SELECT response_key FROM claims WHERE is_current AND {keys} AND contains(lower(text), {needle}) "
            f"UNION SELECT response_key FROM responses WHERE is_current AND {keys} "
            f"AND (contains(lower(question), {needle}) OR contains(lower(answer), {needle}))")


@dataclass(frozen=True)
class Lookup:
    """A search's matches as the index finds them: ``sql``, the SELECT of their response keys (see
    ``search_select``; with ``lookup`` a key may be listed more than once); ``exact``: whether the revisions the index
    holds are read from it alone (words, pairs, runs or masks: no text), not candidates whose texts decide; and
    ``indexed_through``, the index's mark when it was read (the revisions above it are scanned)."""

    sql: str
    exact: bool
    indexed_through: int = 0


def search_select(store: Store, search: str | None, p: Params) -> str | None:
    """SELECT of response keys holding every current response revision whose question, answer or any claim's text
    contains ``search`` (stripped; case-insensitive, literal), its values bound in ``p``; None when there is nothing
    to search. The revisions the index holds are looked up in it, the ones above its mark scanned (module doc).
    It may also hold revisions that are no longer current, and a key twice (a catch-up that commits between reading
    the mark and the query): callers read it as ``response_key IN (...)`` against current rows.
    """
    found = _lookup(store, search, p, distinct=True)
    return None if found is None else found.sql


def lookup(store: Store, search: str | None, p: Params) -> Lookup | None:
    """``search_select``'s keys without the ``DISTINCT`` that keeps DuckDB's plan for ``IN`` (a key may be listed once
    per word, pair or run that holds the search), and whether they come from the index alone (``Lookup``): for
    callers that read the matches otherwise than with ``IN`` (as a bitmap of keys,
    ``register.console.queries.search``), or count the lookup's rows first."""
    return _lookup(store, search, p, distinct=False)


def _lookup(store: Store, search: str | None, p: Params, *, distinct: bool) -> Lookup | None:
    """``search_select`` (``distinct``) or ``lookup``.

    ``contains(lower(x), lower(needle))`` rather than ``ILIKE '%..%' ESCAPE '\\'``: a plain substring test has no
    wildcards to escape (``%``, ``_`` and ``\\`` are literal by construction) and DuckDB runs it fastest (``ILIKE
    ... ESCAPE`` goes through a generic matcher that cannot work on dictionary-compressed text).
    """
    if search is None or not search.strip():
        return None
    text = search.strip()
    needle = f"lower({p(text)})"
    split = _split(store, text)
    words = split.words
    if not any(words) and not split.separators_ready:
        return Lookup(_scan(needle, "true"), False, split.upto)
    unique = "DISTINCT " if distinct else ""
    tail = _scan(needle, f"response_key > {p(split.upto)}")
    if not any(words):  # no letter or digit: inside one run of separators of the text (module doc)
        # without DISTINCT (a revision holding two runs that contain the text is listed twice; the callers read
        # the keys with IN): unlike the word and pair lookups below, DuckDB's plan stays the same and the hash
        # aggregate over millions of keys goes, a large share of the lookup; a text found in few answers costs the
        # same either way (docs/performance.md, "Figures behind the code")
        return Lookup(f"SELECT response_key FROM search_separator_postings WHERE sep_id IN "
                      f"(SELECT sep_id FROM search_separators WHERE contains(sep, {needle})) UNION ALL ({tail})", True,
                      split.upto)
    if split.characters_ready and len(words) == 1 and len(words[0]) == 1 and words[0] in CHARACTERS:
        # one letter or digit and nothing else: the revisions whose masks have its bit (one row each)
        bit = p(1 << CHARACTERS.index(words[0]))
        return Lookup(f"SELECT response_key FROM search_characters WHERE characters & {bit}::UBIGINT <> 0 "
                      f"UNION ALL ({tail})", True, split.upto)
    pairs = split.pairs()
    by_pair = [f"SELECT response_key FROM search_pair_postings WHERE pair_id IN (SELECT pair_id FROM search_pairs "
               f"WHERE first_id IN (SELECT word_id FROM search_words WHERE {_word_condition(words, i, p)}) "
               f"AND second_id IN (SELECT word_id FROM search_words WHERE {_word_condition(words, i + 1, p)}))"
               for i in pairs]
    if len(words) == 2 and pairs == [0]:  # two words one space apart: the pair's postings are the answer
        # DISTINCT, though the callers read the keys with IN: without it DuckDB chose a plan that made the responses
        # page with `notice period` many times slower (docs/performance.md)
        return Lookup(f"SELECT {unique}response_key FROM ({by_pair[0]}) UNION ALL ({tail})", True, split.upto)
    paired = set(pairs) | {i + 1 for i in pairs}  # a word of a pair needs no lookup of its own
    candidates = " INTERSECT ".join(
        [f"SELECT response_key FROM search_postings WHERE word_id IN "
         f"(SELECT word_id FROM search_words WHERE {_word_condition(words, i, p)})"
         for i, word in enumerate(words) if word and i not in paired] + by_pair)
    if len(words) == 1:  # one word and nothing else: a revision holds it iff one of its words contains it
        return Lookup(f"SELECT {unique}response_key FROM ({candidates}) UNION ALL ({tail})", True, split.upto)
    # the candidates hold every search word; the scan's test on their texts decides. The test is an aggregate's
    # condition (HAVING) so that it runs after the join with the candidates: as a WHERE, DuckDB pushes it below the
    # join into the scan of every text and the index saves nothing (even with no candidate; a MATERIALIZED CTE
    # of one consumer did not stop it). The claims first: the candidates found there need no look at their question
    # and answer, the longest texts.
    checked = (f"WITH cand AS MATERIALIZED ({candidates}), "
               f"in_claims AS MATERIALIZED (SELECT c.response_key FROM claims c JOIN cand USING (response_key) "
               f"GROUP BY c.response_key HAVING bool_or(contains(lower(c.text), {needle}))), "
               f"rest AS MATERIALIZED (SELECT response_key FROM cand EXCEPT SELECT response_key FROM in_claims) "
               f"SELECT response_key FROM in_claims "
               f"UNION ALL SELECT r.response_key FROM responses r JOIN rest USING (response_key) "
               f"GROUP BY r.response_key "
               f"HAVING bool_or(contains(lower(r.question), {needle}) OR contains(lower(r.answer), {needle}))")
    return Lookup(f"SELECT response_key FROM ({checked}) UNION ALL ({tail})", False, split.upto)
