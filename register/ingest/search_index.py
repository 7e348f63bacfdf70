"""The search index: which response revisions hold which words, so that a search reads postings, not text.

The console's search finds every current response whose question, answer or any claim's text contains the
search text, case-insensitively and literally (``contains(lower(text), lower(needle))``). At 10 million answers
and 60 million claims that scan took 7-21 s. This module keeps an inverted index of the three texts (migration
023) and answers the same question from it, with the same result:

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
  in slices of keys, one transaction each (import and the synthetic copies call it when they finish; ``python -m
  register search-index`` catches up a database upgraded from before the index). A revision that stops being
  current keeps its postings: the search's callers keep current responses only.
* A search text with no letter or digit at all (``%``, ``--``) has no word to look up: it is scanned.

``check`` compares the index with the words recomputed from the texts (tests; ``search-index --check``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from register.access.permissions import Permission, authorize
from register.db.sql import Params
from register.db.store import Actor, Change, Store, Transaction
from register.errors import RegisterError

__all__ = ["SLICE_KEYS", "WORD_SEPARATORS", "IndexState", "catch_up", "check", "search_select", "state"]

WORD_SEPARATORS = r"[^\p{L}\p{N}]+"  # RE2: a run of characters that are neither letters nor digits
SLICE_KEYS = 250_000  # response keys per catch-up transaction (about 14M word rows at 54 words per response)

ProgressFn = Callable[[int, "int | None", str], None]


def _words_expr(text: str) -> str:
    """The list of words of the SQL expression ``text`` (with empty pieces at a leading or trailing separator)."""
    return f"regexp_split_to_array(lower({text}), '{WORD_SEPARATORS}')"


# the (response_key, word) pairs of the revisions with keys in ($lo, $hi]: question and answer, then the claims
_SLICE_WORDS = f"""
    SELECT DISTINCT response_key, word FROM (
        SELECT response_key, unnest({_words_expr("concat_ws(' ', question, answer)")}) AS word
        FROM responses WHERE response_key > $lo AND response_key <= $hi
        UNION ALL
        SELECT response_key, unnest({_words_expr("text")}) AS word
        FROM claims WHERE response_key > $lo AND response_key <= $hi)
    WHERE word <> ''"""


@dataclass(frozen=True)
class IndexState:
    """``indexed_through``: every response revision with a key up to it is indexed; ``pending``: the revisions
    above it; ``words`` and ``postings``: the index's size."""

    indexed_through: int
    pending: int
    words: int
    postings: int


def state(store: Store) -> IndexState:
    """How far the index is: see ``IndexState``."""
    row = store.one("SELECT (SELECT indexed_through FROM search_index) AS upto, "
                    "(SELECT count(*) FROM search_words) AS words, (SELECT count(*) FROM search_postings) AS postings")
    upto = int(row["upto"])
    pending = store.scalar("SELECT count(*) FROM responses WHERE response_key > ?", [upto])
    return IndexState(upto, int(pending or 0), int(row["words"]), int(row["postings"]))


def _index_slice(high: int) -> Callable[[Transaction], Change]:
    """Index the revisions with keys above the index's mark and up to ``high``, and move the mark to ``high``."""

    def write(tx: Transaction) -> Change:
        low = int(tx.scalar("SELECT indexed_through FROM search_index"))
        if high <= low:  # caught up meanwhile
            return Change("search_index", None, None, {"indexed_through": low}, result=0)
        tx.execute(f"CREATE OR REPLACE TEMP TABLE _slice_words AS {_SLICE_WORDS}", {"lo": low, "hi": high})
        new_words = tx.scalar("""
            INSERT INTO search_words
            SELECT (SELECT coalesce(max(word_id), 0) FROM search_words) + row_number() OVER (ORDER BY word), word
            FROM (SELECT DISTINCT word FROM _slice_words EXCEPT SELECT word FROM search_words)""")
        # sorted by word: each word's rows of the slice are contiguous, so a lookup skips the other row groups
        postings = tx.scalar("""
            INSERT INTO search_postings
            SELECT w.word_id, s.response_key FROM _slice_words s JOIN search_words w USING (word)
            ORDER BY w.word_id, s.response_key""")
        revisions = tx.scalar("SELECT count(*) FROM responses WHERE response_key > ? AND response_key <= ?",
                              [low, high])
        tx.execute("UPDATE search_index SET indexed_through = ?", [high])
        tx.execute("DROP TABLE _slice_words")
        return Change("search_index", None, {"indexed_through": low},
                      {"indexed_through": high, "revisions": revisions, "new_words": new_words,
                       "postings": postings}, result=int(revisions or 0))

    return write


def catch_up(store: Store, actor: Actor, *, progress: ProgressFn | None = None,
             slice_keys: int = SLICE_KEYS) -> int:
    """Index every response revision above the index's mark, ``slice_keys`` keys per transaction (audited as
    ``search.indexed``); returns how many revisions were indexed. Safe to stop at any point: the mark moves
    with each committed slice, and what is above it is searched by a scan. Needs the import permission (the
    index is the import's last step)."""
    authorize(store, actor, Permission.IMPORT, entity_type="search_index")
    if slice_keys < 1:
        raise ValueError(f"slice_keys must be >= 1, got {slice_keys}")
    low = int(store.scalar("SELECT indexed_through FROM search_index"))
    high = int(store.scalar("SELECT coalesce(max(response_key), 0) FROM responses"))
    total = int(store.scalar("SELECT count(*) FROM responses WHERE response_key > ?", [low]) or 0)
    done = 0
    while low < high:
        upto = min(high, low + slice_keys)
        done += store.write(actor, "search.indexed", _index_slice(upto))
        low = upto
        if progress:
            progress(done, total, f"search index: {done:,} of {total:,} revisions indexed")
    return done


def _mark_and_words(store: Store, text: str) -> tuple[int, list[str]]:
    """The index's mark and ``text`` split into words as the index splits texts (empty pieces where it starts or
    ends with a separator), in one query."""
    row = store.one(f"SELECT indexed_through, {_words_expr('$text')} AS words FROM search_index", {"text": text})
    if row is None:
        raise RegisterError("search_index: its one row is missing (migration 023 writes it)")
    return int(row["indexed_through"]), list(row["words"] or [])


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


def search_select(store: Store, search: str | None, p: Params) -> str | None:
    """SELECT of response keys holding every current response revision whose question, answer or any claim's text
    contains ``search`` (stripped; case-insensitive, literal), its values bound in ``p``; None when there is nothing
    to search. The revisions the index holds are looked up in it, the ones above its mark scanned (module doc).
    It may also hold revisions that are no longer current, and a key twice (a catch-up that commits between reading
    the mark and the query): callers read it as ``response_key IN (...)`` against current rows.

    ``contains(lower(x), lower(needle))`` rather than ``ILIKE '%..%' ESCAPE '\\'``: a plain substring test has no
    wildcards to escape (``%``, ``_`` and ``\\`` are literal by construction) and DuckDB runs it fastest (``ILIKE
    ... ESCAPE`` goes through a generic matcher that cannot work on dictionary-compressed text).
    """
    if search is None or not search.strip():
        return None
    text = search.strip()
    needle = f"lower({p(text)})"
    upto, words = _mark_and_words(store, text)
    if not any(words):
        return _scan(needle, "true")
    tail = _scan(needle, f"response_key > {p(upto)}")
    candidates = " INTERSECT ".join(
        f"SELECT response_key FROM search_postings WHERE word_id IN "
        f"(SELECT word_id FROM search_words WHERE {_word_condition(words, i, p)})"
        for i, word in enumerate(words) if word)
    if len(words) == 1:  # one word and nothing else: a revision holds it iff one of its words contains it
        indexed = f"SELECT DISTINCT response_key FROM ({candidates})"
    else:  # the candidates hold every search word; the scan's test on their texts decides
        # the test is an aggregate's condition (HAVING) so that it runs after the join with the candidates: as a
        # WHERE, DuckDB pushes it below the join into the scan of every text and the index saves nothing (0.83 s
        # for no candidate at 1M; a MATERIALIZED CTE of one consumer did not stop it). The claims first: the
        # candidates found there need no look at their question and answer, the longest texts.
        indexed = (f"WITH cand AS MATERIALIZED ({candidates}), "
                   f"in_claims AS MATERIALIZED (SELECT c.response_key FROM claims c JOIN cand USING (response_key) "
                   f"GROUP BY c.response_key HAVING bool_or(contains(lower(c.text), {needle}))), "
                   f"rest AS MATERIALIZED (SELECT response_key FROM cand EXCEPT SELECT response_key FROM in_claims) "
                   f"SELECT response_key FROM in_claims "
                   f"UNION ALL SELECT r.response_key FROM responses r JOIN rest USING (response_key) "
                   f"GROUP BY r.response_key "
                   f"HAVING bool_or(contains(lower(r.question), {needle}) OR contains(lower(r.answer), {needle}))")
        indexed = f"SELECT response_key FROM ({indexed})"
    return f"{indexed} UNION ALL ({tail})"


def check(store: Store) -> list[str]:
    """Differences between the index and the words of the texts it covers (empty when it is exact): postings
    missing or extra, words numbered twice or a word under two numbers."""
    upto = int(store.scalar("SELECT indexed_through FROM search_index"))
    problems = []
    twice = store.scalar("SELECT count(*) FROM (SELECT word FROM search_words GROUP BY word HAVING count(*) > 1)")
    if twice:
        problems.append(f"{twice} word(s) numbered more than once")
    ids = store.scalar("SELECT count(*) - count(DISTINCT word_id) FROM search_words")
    if ids:
        problems.append(f"{ids} word number(s) used more than once")
    expected = f"SELECT response_key, word FROM ({_SLICE_WORDS})"
    stored = ("SELECT p.response_key, w.word FROM search_postings p JOIN search_words w USING (word_id)")
    params = {"lo": 0, "hi": upto}
    missing = store.scalar(f"SELECT count(*) FROM ({expected} EXCEPT ALL {stored})", params)
    extra = store.scalar(f"SELECT count(*) FROM ({stored} EXCEPT ALL {expected})", params)
    if missing:
        problems.append(f"{missing} (revision, word) pair(s) of the texts up to key {upto} not in the index")
    if extra:
        problems.append(f"{extra} (revision, word) pair(s) in the index not in the texts up to key {upto}")
    return problems
