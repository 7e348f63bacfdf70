"""The search index (migrations 023, 027, 029, 030, ``register.readmodels.search_index``): a search through it finds
exactly what the scan of the texts finds, however far the index has caught up, for any search text; import keeps it
caught up; the index equals the words, word pairs, runs of separators and letters and digits recomputed from the
texts."""

from __future__ import annotations

import json
import math
import random

import pytest

from register import SYSTEM, Store
from register.cli import main as cli_main
from register.console.queries.explorer import export_rows, responses_page
from register.console.queries.filters import Filters
from register.db.sql import Params
from register.db.store import Change, Transaction
from register.ingest.importer import import_path
from register.readmodels import search_check, search_index
from register.scoring.profiles import ensure_default_profile
from tests.helpers.migrations import migrations_before

# words that share pieces, so that a search text cut anywhere matches more than one word
_STEMS = ["notice", "period", "periods", "unnoticed", "iso", "27001", "sla", "24", "7", "liability", "cap",
          "Kündigung", "frist", "ΑΘΗΝΑ", "école", "naïve", "東京", "a_c", "10%off", "c:\\temp", "x"]
_SEPARATORS = [" ", " ", " ", ", ", "-", "/", ". ", "\n", "  ", "'", "\"", "%", "_", "😀"]


def _text(rng: random.Random, words: int) -> str:
    out = []
    for _ in range(words):
        word = rng.choice(_STEMS)
        out.append(word.upper() if rng.random() < 0.1 else word.capitalize() if rng.random() < 0.1 else word)
        out.append(rng.choice(_SEPARATORS))
    return "".join(out[:-1])


def _records(rng: random.Random, n: int, prefix: str, *, same_ids: list[str] | None = None) -> list[dict]:
    ids = same_ids or [f"{prefix}-{i}" for i in range(n)]
    return [{"response_id": rid, "use_case": "search", "model": "m", "question": _text(rng, rng.randint(1, 6)),
             "answer": _text(rng, rng.randint(0, 12)) or "-",
             "claims": [{"text": _text(rng, rng.randint(1, 5)), "labels": ["SUPPORTED"], "criticality": 1}
                        for _ in range(rng.randint(0, 3))]} for rid in ids]


def _import(store: Store, tmp_path, name: str, records: list[dict]) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    report = import_path(store, SYSTEM, path)
    assert report.quarantined == 0, report


def _needles(rng: random.Random, store: Store, k: int) -> list[str]:
    """Search texts cut from the stored texts at random places (through words and separators, case changed),
    whole words, and texts that are nowhere."""
    texts = [t for (t,) in store.query("SELECT question FROM responses UNION ALL SELECT answer FROM responses "
                                       "UNION ALL SELECT text FROM claims")]
    out = ["notice period", "NOTICE", "otic", "period.", " notice", "-", "%", "__", "😀", "ündig", "ΑΘ", "θηνα",
           "c:\\temp", "10%", "a_c", "27001 sla", "zzz", "notice  period", "東", "e", "7/24",
           ", ", ". ", "'\"", "/", "\\", "%😀", "--", "\n", " - ", "§"]
    for _ in range(k):
        text = rng.choice(texts)
        start = rng.randrange(len(text))
        cut = text[start:start + rng.randint(1, 25)]
        out.append(cut.swapcase() if rng.random() < 0.3 else cut)
    return out


def _found(store: Store, search: str) -> set[str]:
    p = Params()
    sql = search_index.search_select(store, search, p)
    assert sql is not None
    return {rid for (rid,) in store.query(f"SELECT response_id FROM responses WHERE is_current AND response_key IN "
                                          f"(SELECT response_key FROM ({sql}))", p.values)}


def _scanned(store: Store, search: str) -> set[str]:
    """What the scan finds (the search's meaning: ``contains(lower(text), lower(search))`` over the current texts)."""
    rows = store.query("""
        SELECT response_id FROM responses WHERE is_current AND (contains(lower(question), lower($s))
               OR contains(lower(answer), lower($s)) OR response_key IN
               (SELECT response_key FROM claims WHERE is_current AND contains(lower(text), lower($s))))""",
                       {"s": search.strip()})
    return {rid for (rid,) in rows}


_SEPARATOR_ROWS = ("SELECT v.sep, p.response_key FROM search_separator_postings p JOIN search_separators v "
                   "USING (sep_id)")
_MASK_ROWS = "SELECT response_key, characters FROM search_characters"
_PAIR_ROWS = ("SELECT f.word, g.word, p.response_key FROM search_pair_postings p JOIN search_pairs USING (pair_id) "
              "JOIN search_words f ON f.word_id = first_id JOIN search_words g ON g.word_id = second_id")


def _sql(store: Store, *statements: str) -> None:
    """Write to the index's tables directly (what no code of the register does), as an audited test event."""

    def fn(tx: Transaction) -> Change:
        for statement in statements:
            tx.execute(statement)
        return Change("search_index", None, None, {"test": list(statements)})

    store.write(SYSTEM, "test.tamper", fn)


def _behind(store: Store, upto: int) -> None:
    """The index as an interrupted catch-up leaves it: every revision up to ``upto`` indexed, none above."""
    _sql(store, f"DELETE FROM search_postings WHERE response_key > {int(upto)}",
         f"DELETE FROM search_pair_postings WHERE response_key > {int(upto)}",
         f"DELETE FROM search_separator_postings WHERE response_key > {int(upto)}",
         f"DELETE FROM search_characters WHERE response_key > {int(upto)}",
         f"UPDATE search_index SET indexed_through = {int(upto)}")


@pytest.fixture
def searchable(store, tmp_path):
    """Two imports of random texts, the second revising a third of the first's responses."""
    rng = random.Random(20261202)
    first = _records(rng, 120, "s")
    _import(store, tmp_path, "first", first)
    _import(store, tmp_path, "second",
            _records(rng, 40, "t") + _records(rng, 0, "", same_ids=[r["response_id"] for r in first[::3]]))
    return store, rng


def test_import_keeps_the_index_caught_up_and_equal_to_the_texts(searchable):
    store, _ = searchable
    state = search_index.state(store)
    assert state.pending == 0 and state.indexed_through == store.scalar("SELECT max(response_key) FROM responses")
    assert state.postings > 0 and state.words > len(_STEMS)  # upper/lower forms fold: stems split at separators
    assert search_check.check(store) == []


@pytest.mark.parametrize("behind", ["caught up", "half", "nothing indexed"])
def test_a_search_finds_what_the_scan_finds_however_far_the_index_is(searchable, behind):
    store, rng = searchable
    top = store.scalar("SELECT max(response_key) FROM responses")
    if behind != "caught up":
        _behind(store, top // 2 if behind == "half" else 0)
    needles = _needles(rng, store, 150)
    compared = 0
    for needle in needles:
        if not needle.strip():
            continue
        want = _scanned(store, needle)
        assert _found(store, needle) == want, f"search {needle!r}"
        compared += bool(want)
    assert compared > 100  # most search texts match something: the comparison is not of empty sets
    assert search_index.catch_up(store, SYSTEM, slice_keys=37) == (0 if behind == "caught up" else
                                                                   store.scalar("SELECT count(*) FROM responses "
                                                                                "WHERE response_key > ?",
                                                                                [top // 2 if behind == "half" else 0]))
    assert search_check.check(store) == []
    for needle in needles[:40]:
        if needle.strip():
            assert _found(store, needle) == _scanned(store, needle), f"search {needle!r} after catching up"


def test_a_one_word_search_is_answered_from_the_postings_alone(searchable):
    """One word and no separator: no text is read (the SELECT names neither table); two words: the candidates'
    texts decide, and a revision holding both words apart is not found."""
    store, _ = searchable
    p = Params()
    one = search_index.search_select(store, "otic", p)
    assert one is not None and "FROM claims" in one  # the tail's scan, limited to keys above the mark
    assert one.split(" UNION ALL ")[0].count("contains(lower(") == 0
    both_apart = store.scalar("""SELECT count(*) FROM responses WHERE is_current
        AND contains(lower(answer), 'period') AND contains(lower(answer), 'notice')
        AND NOT contains(lower(answer), 'notice period')""")
    assert both_apart > 0  # the texts hold the two words apart somewhere
    assert _found(store, "notice period") == _scanned(store, "notice period")


def test_two_words_one_space_apart_are_answered_from_the_pairs_alone(store, tmp_path):
    """``notice period``: no text is read; a revision holding the two words apart, one space apart across the end
    of its question and the start of its answer, or with two spaces between them is not found; cut words are
    (``prenotice periodic`` holds ``notice period``: a word's end, then a word's start)."""
    records = [
        {"response_id": "together", "question": "q", "answer": "The Notice Period is 30 days."},
        {"response_id": "in-a-claim", "question": "q", "answer": "-",
         "claims": [{"text": "a prenotice periodic review", "labels": ["SUPPORTED"], "criticality": 1}]},
        {"response_id": "apart", "question": "q", "answer": "Notice: the period is 30 days."},
        {"response_id": "across", "question": "Which notice", "answer": "period applies?"},
        {"response_id": "two-spaces", "question": "q", "answer": "notice  period"},
        {"response_id": "hyphen", "question": "q", "answer": "notice-period"},
    ]
    _import(store, tmp_path, "pairs", [{"use_case": "search", "model": "m", "claims": [], **r} for r in records])
    p = Params()
    sql = search_index.search_select(store, "notice period", p)
    assert sql is not None
    indexed = sql.split(" UNION ALL ")[0]
    assert "search_pair_postings" in indexed and "contains(lower(" not in indexed  # no text read
    assert _found(store, "notice period") == _scanned(store, "notice period") == {"together", "in-a-claim"}
    assert _found(store, "ce periodic") == _scanned(store, "ce periodic") == {"in-a-claim"}
    for needle in ("notice  period", "notice-period", "which notice period", "notice period is", "NOTICE PERIOD"):
        assert _found(store, needle) == _scanned(store, needle), needle
    assert search_check.check(store) == []


def test_a_search_with_no_letter_or_digit_is_answered_from_the_runs_of_separators_alone(store, tmp_path):
    """``%``, ``§``, ``--``: no text is read; a run is one text's (across the end of a question and the start of its
    answer is not a run); a run of one space is not indexed, longer ones are."""
    records = [
        {"response_id": "percent", "question": "q", "answer": "Up to 10% (net)."},
        {"response_id": "paragraph", "question": "Which § applies?", "answer": "-"},
        {"response_id": "in-a-claim", "question": "q", "answer": "x",
         "claims": [{"text": "clause -- see annex", "labels": ["SUPPORTED"], "criticality": 1}]},
        {"response_id": "across", "question": "Is it 5?", "answer": "(yes)"},
        {"response_id": "spaces", "question": "q", "answer": "two  spaces\tand a tab"},
    ]
    _import(store, tmp_path, "runs", [{"use_case": "search", "model": "m", "claims": [], **r} for r in records])
    runs = {sep for sep, _ in store.query(_SEPARATOR_ROWS)}
    assert {"% (", ").", " § ", "?", " -- ", "  ", "\t", "-"} <= runs and " " not in runs
    p = Params()
    sql = search_index.search_select(store, "%", p)
    assert sql is not None
    indexed = sql.split(" UNION ALL ")[0]
    assert "search_separator_postings" in indexed and "contains(lower(" not in indexed  # no text read
    expected = {"%": {"percent"}, "§": {"paragraph"}, "--": {"in-a-claim"}, "% (": {"percent"},
                "?": {"paragraph", "across"}, "?(": set(), "? (": set(), "-": {"in-a-claim", "paragraph"},
                "%)": set(), " § ": {"paragraph"}}  # stripped: "§"
    for needle, want in expected.items():
        assert _found(store, needle) == _scanned(store, needle) == want, needle
    assert search_check.check(store) == []


def test_one_letter_or_digit_is_answered_from_the_masks_alone(store, tmp_path):
    """``e``, ``7``: no word and no text is read; upper case folds (``Z`` finds ``zebra``), an accented letter is not
    its base letter (``café`` holds no ``e``), a digit in a claim counts, an answer with no letter or digit has no
    mask; every letter and digit finds what the scan finds, and so do a few that have no bit."""
    records = [
        {"response_id": "upper", "question": "q", "answer": "ZEBRA crossing"},
        {"response_id": "accent", "question": "Qu'", "answer": "Café"},
        {"response_id": "in-a-claim", "question": "q", "answer": "-",
         "claims": [{"text": "within 7 days", "labels": ["SUPPORTED"], "criticality": 1}]},
        {"response_id": "kelvin", "question": "q", "answer": "\u212a and \u0130"},  # Kelvin sign, dotted capital I
        {"response_id": "no-letter", "question": "?", "answer": "-- % --"},
    ]
    _import(store, tmp_path, "letters", [{"use_case": "search", "model": "m", "claims": [], **r} for r in records])
    masks = dict(store.query("SELECT r.response_id, c.characters FROM search_characters c JOIN responses r "
                             "USING (response_key)"))
    assert "no-letter" not in masks and masks["accent"] & (1 << search_index.CHARACTERS.index("e")) == 0
    p = Params()
    sql = search_index.search_select(store, "E", p)
    assert sql is not None
    indexed = sql.split(" UNION ALL ")[0]
    assert "search_characters" in indexed and "search_postings" not in indexed and "contains(" not in indexed
    assert _found(store, "e") == _found(store, " E ") == _scanned(store, "e") == {"upper"}
    assert _found(store, "7") == _scanned(store, "7") == {"in-a-claim"}
    for needle in [*search_index.CHARACTERS, *search_index.CHARACTERS.upper(), "é", "É", "\u212a", "i", "ı", "?"]:
        assert _found(store, needle) == _scanned(store, needle), needle
    assert search_check.check(store) == []


def test_an_answer_holding_the_text_in_several_runs_is_listed_and_counted_once(store, tmp_path):
    """The runs' lookup may name a revision once per run that holds the text (no DISTINCT: the callers read the keys
    with IN); the Responses page, its total and the export still hold each answer once."""
    claims = [{"text": "p -- q", "labels": ["SUPPORTED"], "criticality": 1},
              {"text": "r - s", "labels": ["SUPPORTED"], "criticality": 1}]
    records = [{"response_id": "many", "question": "a - b -- c", "answer": "x - y (- z)", "claims": claims},
               {"response_id": "one", "question": "q", "answer": "a - b", "claims": claims[:1]},
               {"response_id": "none", "question": "q", "answer": "no dash", "claims": []}]
    _import(store, tmp_path, "dashes", [{"use_case": "search", "model": "m", **r} for r in records])
    p = Params()
    sql = search_index.search_select(store, "-", p)
    assert sql is not None
    keys = [key for (key,) in store.query(sql, p.values)]
    assert len(keys) > len(set(keys)) == 2  # the same revision more than once, as the lookup may list it
    frame, total = responses_page(store, Filters(), search="-")
    assert total == 2 and sorted(frame["response_id"]) == ["many", "one"]
    assert sorted(export_rows(store, Filters(), search="-")["response_id"]) == ["many", "one"]


def test_catch_up_in_slices_equals_one_pass(store, tmp_path):
    rng = random.Random(7)
    _import(store, tmp_path, "a", _records(rng, 60, "a"))
    whole = sorted(store.query("SELECT w.word, p.response_key FROM search_postings p JOIN search_words w "
                               "USING (word_id)"))
    pairs = sorted(store.query(_PAIR_ROWS))
    separators = sorted(store.query(_SEPARATOR_ROWS))
    masks = sorted(store.query(_MASK_ROWS))
    assert len(pairs) > 60 and len(separators) > 60 and len(masks) == 60
    _behind(store, 0)
    _sql(store, "DELETE FROM search_words", "DELETE FROM search_pairs", "DELETE FROM search_separators")
    assert search_index.catch_up(store, SYSTEM, slice_keys=7) == 60
    assert sorted(store.query("SELECT w.word, p.response_key FROM search_postings p JOIN search_words w "
                              "USING (word_id)")) == whole
    assert sorted(store.query(_PAIR_ROWS)) == pairs
    assert sorted(store.query(_SEPARATOR_ROWS)) == separators
    assert sorted(store.query(_MASK_ROWS)) == masks
    assert search_check.check(store) == []
    events = store.scalar("SELECT count(*) FROM audit_events WHERE action = 'search.indexed'")
    assert search_index.catch_up(store, SYSTEM) == 0  # nothing left: no slice, no event
    assert store.scalar("SELECT count(*) FROM audit_events WHERE action = 'search.indexed'") == events
    top = store.scalar("SELECT max(response_key) FROM responses")
    assert events == 1 + math.ceil(top / 7)  # the import's one slice, then one event per slice of 7 keys


@pytest.mark.tampers
def test_check_names_a_missing_posting_an_extra_one_and_a_word_numbered_twice(searchable):
    store, _ = searchable
    assert search_check.check(store) == []
    _sql(store, "DELETE FROM search_postings WHERE rowid = (SELECT min(rowid) FROM search_postings)")
    assert any("not in the index" in problem for problem in search_check.check(store))
    _sql(store, "INSERT INTO search_postings SELECT word_id, response_key + 100000 FROM search_postings LIMIT 1")
    assert any("not in the texts" in problem for problem in search_check.check(store))
    _sql(store, "INSERT INTO search_words (word_id, word) SELECT max(word_id) + 1, 'notice' FROM search_words")
    assert any("numbered more than once" in problem for problem in search_check.check(store))


@pytest.mark.tampers
@pytest.mark.parametrize(("postings", "term_id", "what", "renumbered"), [
    ("search_pair_postings", "pair_id", "word pair",
     "INSERT INTO search_pairs SELECT max(pair_id) + 1, first_id, second_id FROM search_pairs GROUP BY ALL LIMIT 1"),
    ("search_separator_postings", "sep_id", "run of separators",
     "INSERT INTO search_separators SELECT max(sep_id) + 1, min(sep) FROM search_separators"),
])
def test_check_names_a_missing_posting_an_extra_one_and_a_term_numbered_twice(searchable, postings, term_id, what,
                                                                             renumbered):
    """The word pairs' and the runs' postings and numbering, as the words' above."""
    store, _ = searchable
    _sql(store, f"DELETE FROM {postings} WHERE rowid = (SELECT min(rowid) FROM {postings})")
    assert any(f"{what}) row(s) of the texts" in problem for problem in search_check.check(store))
    _sql(store, f"INSERT INTO {postings} SELECT {term_id}, response_key + 100000 FROM {postings} LIMIT 1")
    assert any(f"{what}) row(s) in the index" in problem for problem in search_check.check(store))
    _sql(store, renumbered)
    assert any(f"{what}(s) numbered more than once" in problem for problem in search_check.check(store))


@pytest.mark.tampers
def test_check_names_a_missing_mask_an_extra_one_and_a_word_whose_mask_is_not_its_own(searchable):
    """The masks of letters and digits: each revision's against its texts', each word's against its letters."""
    store, _ = searchable
    _sql(store, "DELETE FROM search_characters WHERE rowid = (SELECT min(rowid) FROM search_characters)")
    assert any("letters and digits) mask(s) of the texts" in problem for problem in search_check.check(store))
    _sql(store, "INSERT INTO search_characters SELECT response_key + 100000, characters FROM search_characters LIMIT 1")
    assert any("letters and digits) mask(s) in the index" in problem for problem in search_check.check(store))
    _sql(store, "UPDATE search_words SET characters = xor(characters, 1::UBIGINT) WHERE word = 'notice'")
    assert any("1 word(s) with a mask of letters and digits that is not theirs" in problem
               for problem in search_check.check(store))


def _older_database(tmp_path, monkeypatch, before: int, also: tuple[int, ...], *, seed: int, **replaced) -> None:
    """``older.duckdb`` in ``tmp_path``: migrated up to ``before`` (plus ``also``), 50 responses imported with
    ``search_index``'s functions named in ``replaced`` standing in for the code of that time."""
    migrations_before(tmp_path, monkeypatch, before, also=also)
    for name, function in replaced.items():
        monkeypatch.setattr(search_index, name, function)
    older = Store(tmp_path / "older.duckdb")
    ensure_default_profile(older, SYSTEM)
    _import(older, tmp_path, "o", _records(random.Random(seed), 50, "o"))
    older.close()
    monkeypatch.undo()


def test_a_database_indexed_before_the_pairs_searches_exactly_and_fills_them_in(tmp_path, monkeypatch):
    """Words indexed before migration 027: the search leaves pairs alone (still exact) until ``catch_up`` has
    filled them in, in slices from the top key down, each audited; then two-word searches use them."""
    _older_database(tmp_path, monkeypatch, 27, (28, 31, 32), seed=5,  # the index before its pairs (and runs, and masks)
                    _index_pairs=lambda tx: 0, _index_separators=lambda *args: 0, _index_characters=lambda *args: 0,
                    _backfill=lambda *args: None)
    upgraded = Store(tmp_path / "older.duckdb")
    state = search_index.state(upgraded)
    assert (state.indexed_through, state.pairs_missing_through, state.pair_postings) == (50, 50, 0)
    assert search_check.check(upgraded) == []  # the words are checked; no pair is expected yet
    p = Params()
    assert "search_pair_postings" not in search_index.search_select(upgraded, "notice period", p)
    for needle in ("notice period", "period notice", "27001 sla", "otic"):
        assert _found(upgraded, needle) == _scanned(upgraded, needle)
    assert search_index.catch_up(upgraded, SYSTEM, slice_keys=20) == 0  # no revision was pending: pairs only
    state = search_index.state(upgraded)
    assert state.pairs_missing_through == 0 and state.pair_postings > 50
    assert upgraded.scalar("SELECT count(*) FROM audit_events WHERE action = 'search.pairs_indexed'") == 3
    assert search_check.check(upgraded) == []
    assert "search_pair_postings" in search_index.search_select(upgraded, "notice period", Params())
    for needle in ("notice period", "period notice", "27001 sla", "otic"):
        assert _found(upgraded, needle) == _scanned(upgraded, needle)
    upgraded.close()


def _searches_exactly_and_fills_in(upgraded: Store, *, missing: str, rows: str, action: str, table: str, probe: str,
                                   needles: tuple[str, ...], later: tuple[str, ...] = ()) -> None:
    """A database indexed before a part of the index (the state's ``missing`` mark at its top key, no ``rows``):
    ``probe`` does not read ``table`` and every needle finds what the scan finds; ``catch_up`` fills the part in,
    from the top key down in three audited slices (``action``), and the ``later`` parts (added by later migrations)
    too, nothing else; then ``probe`` reads ``table``, the needles still find what the scan finds, and the index
    equals its texts."""
    state = search_index.state(upgraded)
    assert (state.indexed_through, getattr(state, missing), getattr(state, rows)) == (50, 50, 0)
    assert search_check.check(upgraded) == []  # the parts there are checked; none of this one is expected yet
    assert table not in search_index.search_select(upgraded, probe, Params())
    for needle in needles:
        assert _found(upgraded, needle) == _scanned(upgraded, needle), needle
    assert search_index.catch_up(upgraded, SYSTEM, slice_keys=20) == 0  # no revision was pending: this part only
    state = search_index.state(upgraded)
    assert getattr(state, missing) == 0 and getattr(state, rows) >= 50
    events = dict(upgraded.query("SELECT action, count(*) FROM audit_events WHERE action LIKE 'search.%_indexed' "
                                 "GROUP BY action"))
    assert events == dict.fromkeys((action, *later), 3)
    assert search_check.check(upgraded) == []
    assert table in search_index.search_select(upgraded, probe, Params())
    for needle in needles:
        assert _found(upgraded, needle) == _scanned(upgraded, needle), needle


def test_a_database_indexed_before_the_runs_searches_exactly_and_fills_them_in(tmp_path, monkeypatch):
    """Words and pairs indexed before migration 029: a search with no letter or digit scans (still exact) until
    ``catch_up`` has filled the runs in, in slices from the top key down, each audited; then it reads them."""
    _older_database(tmp_path, monkeypatch, 29, (31, 32), seed=9,  # the index before its runs of separators (and masks)
                    _index_separators=lambda *args: 0, _index_characters=lambda *args: 0,
                    _BACKFILLS=search_index._BACKFILLS[:1])
    upgraded = Store(tmp_path / "older.duckdb")
    state = search_index.state(upgraded)
    assert state.pairs_missing_through == 0 and state.pair_postings > 50  # the pairs were there already
    _searches_exactly_and_fills_in(upgraded, missing="separators_missing_through", rows="separator_postings",
                                   action="search.separators_indexed", table="search_separator_postings", probe="%",
                                   needles=("%", "-", ". ", "😀", "notice"), later=("search.characters_indexed",))
    upgraded.close()


def test_a_database_indexed_before_the_masks_searches_exactly_and_fills_them_in(tmp_path, monkeypatch):
    """Words, pairs and runs indexed before migration 030: a one-letter search reads the words' postings (still
    exact) until ``catch_up`` has filled the masks in from the postings, from the top key down, each slice audited;
    then it reads the masks."""
    _older_database(tmp_path, monkeypatch, 30, (31, 32), seed=11,  # the index before its masks of letters and digits
                    _index_characters=lambda *args: 0, _BACKFILLS=search_index._BACKFILLS[:2])
    upgraded = Store(tmp_path / "older.duckdb")
    assert upgraded.scalar("SELECT count(*) FROM search_words WHERE characters IS NOT NULL") == 0
    _searches_exactly_and_fills_in(upgraded, missing="characters_missing_through", rows="character_masks",
                                   action="search.characters_indexed", table="search_characters", probe="e",
                                   needles=("e", "7", "x", "notice", "É"))
    assert upgraded.scalar("SELECT count(*) FROM search_words WHERE characters IS NULL") == 0
    assert search_index.state(upgraded).character_masks == 50  # every revision holds a letter
    upgraded.close()


def test_a_database_from_before_the_index_searches_by_scan_until_caught_up(tmp_path, monkeypatch):
    _older_database(tmp_path, monkeypatch, 23, (24, 25, 26, 28, 31, 32), seed=3,  # the importer before the index
                    catch_up=lambda *args, **kwargs: 0)
    upgraded = Store(tmp_path / "older.duckdb")
    state = search_index.state(upgraded)
    assert (state.indexed_through, state.pending, state.postings) == (0, 50, 0)  # the migration starts it empty
    for needle in ("notice period", "otic", "ΑΘ", "%"):
        assert _found(upgraded, needle) == _scanned(upgraded, needle)
    upgraded.close()

    assert cli_main(["--db", str(tmp_path / "older.duckdb"), "search-index", "--check", "--quiet"]) == 0
    again = Store(tmp_path / "older.duckdb")
    assert search_index.state(again).pending == 0 and search_check.check(again) == []
    for needle in ("notice period", "otic", "ΑΘ"):
        assert _found(again, needle) == _scanned(again, needle)
    again.close()
