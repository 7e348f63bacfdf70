"""The search index's check: the index against the words, word pairs, runs of separators and letters and digits
recomputed from the texts it covers, by definitions of their own (not the builder's, ``search_index``).

Run by ``register.readmodels.hub.check`` (every test's store at teardown) and ``python -m register search-index
--check``.
"""

from __future__ import annotations

from register.db.sql import multiset_differences
from register.db.store import Store
from register.readmodels.search_index import (
    _SLICE_TEXTS,
    _STATE_ROW,
    _WORD_CHARACTERS,
    CHARACTERS,
    _separators_expr,
    _words_expr,
)

__all__ = ["check"]

# the (response_key, word) pairs of the revisions with keys in ($lo, $hi]: question and answer, then the claims
_SLICE_WORDS = f"""
    SELECT DISTINCT response_key, word FROM (
        SELECT response_key, unnest({_words_expr("concat_ws(' ', question, answer)")}) AS word
        FROM responses WHERE response_key > $lo AND response_key <= $hi
        UNION ALL
        SELECT response_key, unnest({_words_expr("text")}) AS word
        FROM claims WHERE response_key > $lo AND response_key <= $hi)
    WHERE word <> ''"""

# the definition of the masks: the letters and digits found in the lower-cased texts themselves, not in words
_SLICE_CHARACTERS = f"""
    SELECT response_key, bit_or(1::UBIGINT << (strpos('{CHARACTERS}', ch) - 1)) AS characters FROM (
        SELECT response_key, unnest(regexp_extract_all(lower(t), '[{CHARACTERS}]')) AS ch FROM ({_SLICE_TEXTS}))
    GROUP BY response_key"""

# the definition of the runs of separators: every maximal run of separators of each text, but a run of exactly
# one space
_SLICE_SEPARATORS = f"""
    SELECT DISTINCT response_key, sep FROM (
        SELECT response_key, unnest({_separators_expr("t")}) AS sep FROM ({_SLICE_TEXTS}))
    WHERE sep <> ' '"""

# the (response_key, first, second) word pairs one space apart in one text of the revisions with keys in ($lo, $hi]
# (the question and the answer apart: concatenated, their last and first words would make a pair no text has)
_SLICE_PAIRS = f"""
    SELECT DISTINCT response_key, pair[1] AS first, pair[2] AS second FROM (
        SELECT response_key, unnest(list_filter(list_zip(w[1:len(w) - 1], w[2:], s),
                                                lambda z: z[3] = ' ' AND z[1] <> '' AND z[2] <> '')) AS pair
        FROM (SELECT response_key, {_words_expr("t")} AS w, {_separators_expr("t")} AS s FROM ({_SLICE_TEXTS})))"""



def check(store: Store) -> list[str]:
    """Differences between the index and the words, word pairs, runs of separators and letters and digits of the
    texts it covers (empty when it is exact): postings or masks missing or extra, words, pairs or runs numbered twice
    or under two numbers, a word's mask that is not its letters and digits."""
    upto, missing_pairs, missing_separators, missing_characters = store.query_row(
        "SELECT indexed_through, pairs_missing_through, separators_missing_through, characters_missing_through "
        "FROM search_index", what=_STATE_ROW)
    words = _numbering_problems(store, "search_words", "word", "word_id", "word")
    words += _posting_problems(
        store, f"SELECT response_key, word FROM ({_SLICE_WORDS})",
        "SELECT p.response_key, w.word FROM search_postings p JOIN search_words w USING (word_id)",
        "(revision, word) pair", 0, int(upto))
    return (words + _check_pairs(store, int(missing_pairs), int(upto))
            + _check_separators(store, int(missing_separators), int(upto))
            + _check_characters(store, int(missing_characters), int(upto)))


def _check_characters(store: Store, low: int, high: int) -> list[str]:
    """``check`` of the masks of letters and digits: those of the revisions with keys in (``low``, ``high``] are
    the letters and digits of their lower-cased texts (``_SLICE_CHARACTERS``, not through the words), no other; each
    word's mask, where computed, is its own."""
    problems = []
    wrong = store.scalar(f"SELECT count(*) FROM search_words WHERE characters IS DISTINCT FROM ({_WORD_CHARACTERS}) "
                         "AND characters IS NOT NULL")
    if wrong:
        problems.append(f"{wrong} word(s) with a mask of letters and digits that is not theirs")
    return problems + _posting_problems(
        store, f"SELECT response_key, characters FROM ({_SLICE_CHARACTERS})",
        "SELECT response_key, characters FROM search_characters", "(revision, letters and digits) mask", low, high)


def _check_separators(store: Store, low: int, high: int) -> list[str]:
    """``check`` of the runs of separators: those of the revisions with keys in (``low``, ``high``] are indexed, no
    other (from ``_SLICE_SEPARATORS``, a definition apart from the builder's)."""
    numbering = _numbering_problems(store, "search_separators", "sep", "sep_id", "run of separators")
    return numbering + _posting_problems(
        store, f"SELECT response_key, sep FROM ({_SLICE_SEPARATORS})",
        "SELECT p.response_key, v.sep FROM search_separator_postings p JOIN search_separators v USING (sep_id)",
        "(revision, run of separators) row", low, high)


def _check_pairs(store: Store, low: int, high: int) -> list[str]:
    """``check`` of the word pairs: those of the revisions with keys in (``low``, ``high``] are indexed, no other."""
    numbering = _numbering_problems(store, "search_pairs", "first_id, second_id", "pair_id", "word pair")
    return numbering + _posting_problems(
        store, f"SELECT response_key, first, second FROM ({_SLICE_PAIRS})",
        "SELECT p.response_key, f.word, g.word FROM search_pair_postings p JOIN search_pairs USING (pair_id) "
        "JOIN search_words f ON f.word_id = first_id JOIN search_words g ON g.word_id = second_id",
        "(revision, word pair) row", low, high)


def _numbering_problems(store: Store, table: str, term: str, term_id: str, what: str) -> list[str]:
    """A dictionary table's faults: a term (``term``'s columns) numbered twice, or one number given twice."""
    problems = []
    twice = store.scalar(f"SELECT count(*) FROM (SELECT {term} FROM {table} GROUP BY ALL HAVING count(*) > 1)")
    if twice:
        problems.append(f"{twice} {what}(s) numbered more than once")
    ids = store.scalar(f"SELECT count(*) - count(DISTINCT {term_id}) FROM {table}")
    if ids:
        problems.append(f"{ids} {what} number(s) used more than once")
    return problems


def _posting_problems(store: Store, expected: str, stored: str, what: str, low: int, high: int) -> list[str]:
    """The postings ``stored`` against those ``expected`` from the texts with keys in (``low``, ``high``], as
    multisets: rows missing from the index, and rows in it that the texts do not hold."""
    missing, extra = multiset_differences(store, expected, stored, {"lo": low, "hi": high})
    problems = []
    if missing:
        problems.append(f"{missing} {what}(s) of the texts in keys ({low}, {high}] not in the index")
    if extra:
        problems.append(f"{extra} {what}(s) in the index not in the texts in keys ({low}, {high}]")
    return problems
