"""The console's read queries (register/console/queries/), checked against an independent recomputation.

Every test loads records through the real importer (JSON Lines in tmp_path), rescored at a fixed
as-of time, and computes what the page should show in plain Python from the records themselves,
scoring each with ``hri_core.score_response`` -- never by running the same SQL again.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta

import pandas as pd
import pytest

from hri_core.calibration import calibration_table, score_bins
from hri_core.synthetic import generate_responses
from register import SYSTEM, Store
from register.console.queries import search
from register.console.queries.detail import response_detail
from register.console.queries.explorer import EXPORT_COLUMNS, PAGE_COLUMNS, SORT_COLUMNS, export_rows, responses_page
from register.console.queries.filters import (
    NO_CLAIMS_STATE,
    Filters,
    as_current,
    covers_every_current,
    filtered_scores,
    scored_set,
    version_runs,
)
from register.console.queries.overview import (
    band_mix_by_week,
    dimension_contributions,
    filter_options,
    high_share_by,
    kpis,
    overview,
    score_histogram,
)
from register.db.sql import Params
from register.db.store import Change, Transaction
from register.ingest.importer import import_path
from register.readmodels import search_index, version_views
from register.scoring.profiles import activate, active_profile, create_draft, get_profile
from register.scoring.scorer import rescore
from register.scoring.spark_exchange import import_scores
from tests.helpers.console_records import (
    ALL_DIMS,
    AS_OF,
    Row,
    claim,
    dataset,
    expected_rows,
    handmade_records,
    load,
    select,
    write_jsonl,
)
from tests.helpers.spark_output import job_output
from tests.helpers.statements import recorded_statements
from tests.helpers.strategies import AS_OF as SPARK_AS_OF


def quantile_cont(values: list[float], q: float) -> float | None:
    if not values:
        return None
    xs = sorted(values)
    h = (len(xs) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


@pytest.fixture
def loaded(store, tmp_path):
    records = dataset()
    load(store, tmp_path, records)
    return store, expected_rows(records, active_profile(store), store)


BAND_NAMES = ("Low", "Medium", "High", "Critical")  # the default profile's; checked in test_filter_options
STATES = (*BAND_NAMES, NO_CLAIMS_STATE)  # what a response shows: its band, or "No claims"


def _filters(rows: list[Row]) -> list[Filters]:
    return [
        Filters(),
        Filters(date_from=date(2026, 7, 1), date_to=date(2026, 8, 31)),
        Filters(date_from=date(2026, 7, 1), date_to=date(2026, 7, 1)),  # one day, both bounds inclusive
        Filters(use_cases=("hr-policy",)),
        Filters(use_cases=("hr-policy", "supplier-contracts")),
        Filters(models=("handmade",)),
        Filters(bands=("High", "Critical")),
        Filters(date_to=date(2026, 9, 30), use_cases=("customer-support",), bands=("Low",)),
        # the one decision: not in the summary, so every figure reads the rows
        Filters(decisions=("block",)),
        Filters(decisions=("review", "block"), use_cases=("hr-policy", "supplier-contracts")),
        Filters(decisions=("release", "caution")),
    ]


# --- filter options and KPIs ------------------------------------------------------------------------------


def test_filter_options_list_what_the_records_hold(loaded):
    store, rows = loaded
    options = filter_options(store)
    assert options["use_cases"] == sorted({r.use_case for r in rows})
    assert options["models"] == sorted({r.model for r in rows})
    assert options["bands"] == [b.name for b in active_profile(store).bands] + [NO_CLAIMS_STATE] == list(STATES)
    assert options["profile_versions"] == [1]
    dated = [r.created_at.astimezone(UTC).date() for r in rows if r.created_at]
    assert (options["date_min"], options["date_max"]) == (min(dated), max(dated))


def test_filter_options_of_an_empty_register(store):
    options = filter_options(store)
    assert options["use_cases"] == [] and options["models"] == [] and options["profile_versions"] == []
    assert options["date_min"] is None and options["date_max"] is None
    assert options["bands"] == list(STATES)


def test_kpis_match_a_python_recomputation_under_each_filter(loaded):
    store, rows = loaded
    seen_sizes = set()
    for f in _filters(rows):
        want = select(rows, f)
        got = kpis(store, f)
        seen_sizes.add(len(want))
        assert got["responses"] == len(want), f
        assert got["claims"] == sum(r.claim_count for r in want), f
        assert got["band_counts"] == {b: sum(r.band == b for r in want) for b in STATES}, f
        assert list(got["band_counts"]) == list(STATES)  # the profile's order, zeros included
        scores = [r.score for r in want if not r.no_claims]  # a response without claims has no score to count
        assert got["median_score"] == pytest.approx(quantile_cont(scores, 0.5), abs=1e-9)
        assert got["p95_score"] == pytest.approx(quantile_cont(scores, 0.95), abs=1e-9)
        assert got["floors_fired"] == sum(r.decisive for r in want), f
        assert got["no_claims"] == sum(r.no_claims for r in want), f
    assert len(seen_sizes) >= 6  # the filters really select different sets


def test_kpis_of_an_empty_selection(loaded):
    store, _ = loaded
    got = kpis(store, Filters(use_cases=("no-such-use-case",)))
    assert got["responses"] == 0 and got["claims"] == 0
    assert got["median_score"] is None and got["p95_score"] is None
    assert got["band_counts"] == dict.fromkeys(STATES, 0)
    assert got["queue_size"] == 0 and got["queue_oldest_age_days"] is None


def test_injection_strings_as_filter_values_are_plain_values(loaded):
    store, _ = loaded
    before = store.query_one("SELECT count(*) FROM scores")[0]
    nasty = ("x' OR '1'='1", "'; DROP TABLE scores; --", "hr-policy' --", "%", "_")
    for f in (Filters(use_cases=nasty), Filters(models=nasty), Filters(bands=nasty)):
        assert kpis(store, f)["responses"] == 0
        assert responses_page(store, f)[1] == 0
        assert score_histogram(store, f)["n"].sum() == 0
        assert high_share_by(store, f, "use_case").empty
    assert responses_page(store, Filters(), search="'; DROP TABLE scores; --")[1] == 0
    assert store.query_one("SELECT count(*) FROM scores")[0] == before


def test_filters_accept_lists_and_stay_hashable():
    f = Filters(use_cases=["a", "b"], models="m", bands=[])
    assert f.use_cases == ("a", "b") and f.models == ("m",) and f.bands == ()
    assert hash(f) == hash(Filters(use_cases=("a", "b"), models=("m",)))


# --- charts ------------------------------------------------------------------------------------------------


def _monday(moment: datetime) -> date:
    day = moment.astimezone(UTC).date()
    return day - timedelta(days=day.weekday())


@pytest.mark.parametrize("f", [Filters(), Filters(models=("rag-v4",)), Filters(date_from=date(2026, 9, 1))])
def test_band_mix_by_week_counts_per_monday_and_band(loaded, f):
    store, rows = loaded
    frame = band_mix_by_week(store, f)
    want = Counter((_monday(r.created_at), r.band) for r in select(rows, f) if r.created_at)
    got = {(w, b): n for w, b, n in frame.itertuples(index=False)}
    assert got == dict(want)
    assert all(isinstance(w, date) and w.weekday() == 0 for w in frame["week"])
    assert list(frame["week"]) == sorted(frame["week"])


def _bin_of(score: float, uppers) -> int:
    """The bin of a score read like a band: the first upper bound it does not exceed (9 decimals)."""
    return next(i for i, upper in enumerate(uppers) if round(score, 9) <= upper)


@pytest.mark.parametrize("bands", [(20, 50, 75, 100), (12.5, 33, 61, 88, 100), (100,)])
@pytest.mark.parametrize("width", [5.0, 10, 3.0, 100])
def test_score_histogram_bins_every_judged_response_like_its_band(loaded, bands, width):
    store, rows = loaded
    uppers = score_bins(bands, width)
    for f in (Filters(), Filters(use_cases=("claims-handling",))):
        want_rows = [r for r in select(rows, f) if not r.no_claims]
        frame = score_histogram(store, f, uppers)
        assert list(frame["bin_end"]) == list(uppers)
        assert frame["bin_start"].iloc[0] == 0 and list(frame["bin_start"].iloc[1:]) == list(uppers[:-1])
        assert frame["n"].sum() == len(want_rows)
        want = Counter(_bin_of(r.score, uppers) for r in want_rows)
        assert list(frame["n"]) == [want.get(i, 0) for i in range(len(uppers))]
        assert set(bands) <= set(uppers)  # no bin straddles a band bound


def test_a_score_equal_to_a_band_bound_is_counted_in_that_bands_last_bin(store, tmp_path):
    # a CONTRADICTED claim of criticality 2 meets the 0.50 floor: score exactly 50, Medium's upper bound. It
    # belongs in the bin that ends at 50 (Medium), never in the one that starts there ([start, end) bins drew
    # it as a High bar beside a Medium band card)
    records = [{"response_id": f"edge-{i}", "answer": "a", "claims": [claim("x", ["CONTRADICTED"], 2)]}
               for i in range(3)] + [{"response_id": "low", "answer": "a", "claims": [claim("x", ["PARTIAL"])]}]
    load(store, tmp_path, records)
    assert sorted(s for (s,) in store.query("SELECT score FROM scores WHERE is_current")) == [7.5, 50, 50, 50]
    frame = score_histogram(store, Filters()).set_index("bin_end")
    assert frame.loc[50.0, "n"] == 3 and frame.loc[55.0, "n"] == 0 and frame.loc[10.0, "n"] == 1
    assert kpis(store, Filters())["band_counts"]["Medium"] == 3  # the band card counts the same three


def test_histogram_and_calibration_table_bin_alike(loaded):
    store, rows = loaded
    judged = [r for r in rows if not r.no_claims]
    uppers = score_bins([b.upper for b in active_profile(store).bands])
    table = calibration_table([(r.score, r.band in ("High", "Critical")) for r in judged], uppers)
    assert list(score_histogram(store, Filters(), uppers)["n"]) == [b.count for b in table]


def test_responses_without_claims_are_their_own_state(loaded):
    store, rows = loaded
    none = [r for r in rows if r.no_claims]
    assert none and all(r.score == 0 for r in none)
    got = kpis(store, Filters())
    assert got["band_counts"][NO_CLAIMS_STATE] == len(none) == got["no_claims"]
    assert got["band_counts"]["Low"] == sum(r.band == "Low" for r in rows)  # not counted as Low
    assert score_histogram(store, Filters())["n"].sum() == len(rows) - len(none)
    frame, total = responses_page(store, Filters(bands=(NO_CLAIMS_STATE,)))
    assert total == len(none) and set(frame["band"]) == {NO_CLAIMS_STATE}
    assert NO_CLAIMS_STATE not in set(responses_page(store, Filters(bands=("Low",)), limit=500)[0]["band"])
    detail = response_detail(store, none[0].response_id)
    assert set(detail["history"]["band"]) == {NO_CLAIMS_STATE}


def test_a_score_of_100_goes_in_the_last_bin(loaded):
    store, rows = loaded
    assert [r.score for r in rows if r.response_id == "hc-crit"] == [100.0]
    frame = score_histogram(store, Filters(models=("handmade",)), [10 * (k + 1) for k in range(10)])
    assert frame["n"].iloc[-1] == 1 and (frame["bin_start"].iloc[-1], frame["bin_end"].iloc[-1]) == (90, 100)


@pytest.mark.parametrize("bins", [[], [50], [60, 50, 100], [0, 100], [50, 101], list(range(1, 1002))])
def test_score_histogram_refuses_unusable_bins(store, bins):
    with pytest.raises(ValueError, match="bins"):
        score_histogram(store, Filters(), bins)


def test_dimension_contributions_match_python_means(loaded):
    store, rows = loaded
    weights = active_profile(store).weights
    for f in (Filters(), Filters(use_cases=("supplier-contracts",)), Filters(bands=("Medium",)),
              Filters(decisions=("review",))):
        want = select(rows, f)
        frame = dimension_contributions(store, f, weights)
        assert list(frame["dimension"]) == ALL_DIMS
        for d, mean, weight, weighted in frame.itertuples(index=False):
            expected = statistics.fmean(r.dims[d] for r in want)
            assert mean == pytest.approx(expected, abs=1e-12)
            assert weight == weights[d]
            assert weighted == pytest.approx(weights[d] * expected, abs=1e-12)


def test_dimension_contributions_use_the_weights_passed_in(loaded):
    store, rows = loaded
    custom = {"F": 0.0, "C": 0.0, "U": 1.0, "O": 0.0, "S": 0.0, "P": 0.0, "H": 0.0}
    frame = dimension_contributions(store, Filters(), custom).set_index("dimension")
    assert frame.loc["F", "mean_weighted"] == 0.0 and frame.loc["F", "mean_score"] > 0
    assert frame.loc["U", "mean_weighted"] == pytest.approx(statistics.fmean(r.dims["U"] for r in rows), abs=1e-12)
    with pytest.raises(ValueError, match="missing: H"):
        dimension_contributions(store, Filters(), {k: v for k, v in custom.items() if k != "H"})
    with pytest.raises(ValueError, match="unknown: X"):
        dimension_contributions(store, Filters(), {**custom, "X": 0.5})


@pytest.mark.parametrize("by", ["use_case", "model"])
def test_high_share_by_matches_python(loaded, by):
    store, rows = loaded
    for f in (Filters(), Filters(date_to=date(2026, 8, 31)), Filters(decisions=("review", "caution"))):
        frame = high_share_by(store, f, by, BAND_NAMES)
        want_rows = select(rows, f)
        keys = sorted({getattr(r, by) for r in want_rows})
        assert list(frame["key"]) == keys
        for key, n, high, share in frame.itertuples(index=False):
            group = [r for r in want_rows if getattr(r, by) == key]
            assert n == len(group)
            assert high == sum(r.band in ("High", "Critical") for r in group)
            assert share == pytest.approx(high / n)
    assert frame["high_or_critical"].sum() > 0


def test_high_share_takes_the_last_two_of_the_bands_given(loaded):
    store, rows = loaded
    frame = high_share_by(store, Filters(), "model", ("Low", "Medium", "High"))  # last two: Medium, High
    handmade = frame.set_index("key").loc["handmade"]
    assert handmade["high_or_critical"] == sum(r.band in ("Medium", "High") for r in rows if r.model == "handmade")
    default = high_share_by(store, Filters(), "model").set_index("key").loc["handmade"]  # active profile's
    assert default["high_or_critical"] == sum(r.band in ("High", "Critical") for r in rows if r.model == "handmade")
    assert default["high_or_critical"] != handmade["high_or_critical"]


@pytest.mark.parametrize("by", ["response_id", "use_case; DROP TABLE scores", "band", "", None])
def test_high_share_by_refuses_columns_off_the_allow_list(store, by):
    with pytest.raises(ValueError, match="cannot group by"):
        high_share_by(store, Filters(), by, BAND_NAMES)


@pytest.mark.parametrize("f", [Filters(), Filters(use_cases=("hr-policy", "claims-handling")),
                               Filters(bands=("Low",), date_to=date(2026, 8, 31)), Filters(models=("nobody",)),
                               Filters(decisions=("block", "review"))])
def test_overview_in_one_pass_equals_the_one_figure_functions(loaded, f):
    store, _ = loaded
    weights = active_profile(store).weights
    now = datetime(2027, 3, 1, tzinfo=UTC)
    bins = [10 * (k + 1) for k in range(10)]
    got = overview(store, f, weights, BAND_NAMES, bins=bins, now=now)
    assert got["kpis"] == kpis(store, f, now=now)
    pairs = {"band_mix_by_week": band_mix_by_week(store, f), "score_histogram": score_histogram(store, f, bins),
             "dimension_contributions": dimension_contributions(store, f, weights),
             "high_share_by_use_case": high_share_by(store, f, "use_case", BAND_NAMES),
             "high_share_by_model": high_share_by(store, f, "model", BAND_NAMES)}
    for name, alone in pairs.items():
        pd.testing.assert_frame_equal(got[name], alone, check_dtype=False, check_index_type=False, rtol=1e-12,
                                      obj=name)
    assert len(got["score_histogram"]) == 10


# --- responses page ------------------------------------------------------------------------------------------


def test_responses_page_default_order_columns_and_total(loaded):
    store, rows = loaded
    frame, total = responses_page(store, Filters(), limit=20)
    assert tuple(frame.columns) == PAGE_COLUMNS
    assert total == len(rows)
    want = sorted(rows, key=lambda r: (-r.score, r.response_id))[:20]
    assert list(frame["response_id"]) == [r.response_id for r in want]
    assert list(frame["score"]) == pytest.approx([r.score for r in want], abs=1e-9)
    assert list(frame["band"]) == [r.band for r in want]


def test_responses_page_paginates_the_filtered_set(loaded):
    store, rows = loaded
    f = Filters(use_cases=("customer-support", "hr-policy"))
    want = [r.response_id for r in sorted(select(rows, f), key=lambda r: (r.score, r.response_id))]
    pages, offset = [], 0
    while True:
        frame, total = responses_page(store, f, sort_by="score", descending=False, limit=7, offset=offset)
        assert total == len(want)
        if frame.empty:
            break
        assert len(frame) <= 7
        pages += list(frame["response_id"])
        offset += 7
    assert pages == want
    frame, total = responses_page(store, f, limit=0)
    assert frame.empty and total == len(want)


def test_responses_page_sorts_by_allow_listed_columns(loaded):
    store, rows = loaded
    frame, _ = responses_page(store, Filters(), sort_by="created_at", descending=False, limit=500)
    dated = [r for r in rows if r.created_at]
    assert list(frame["response_id"][: len(dated)]) == [r.response_id for r in sorted(
        dated, key=lambda r: (r.created_at, r.response_id))]
    assert frame["created_at"].iloc[len(dated):].isna().all()  # undated rows last
    for key in SORT_COLUMNS:
        assert len(responses_page(store, Filters(), sort_by=key, limit=3)[0]) == 3


@pytest.mark.parametrize("sort_by", ["score; DROP TABLE scores", "score DESC, (SELECT 1)", "question", "", None])
def test_responses_page_refuses_sort_keys_off_the_allow_list(loaded, sort_by):
    store, _ = loaded
    with pytest.raises(ValueError, match="cannot sort by"):
        responses_page(store, Filters(), sort_by=sort_by)
    assert store.query_one("SELECT count(*) FROM scores")[0] > 0


@pytest.mark.parametrize("window", [{"limit": -1}, {"offset": -3}, {"limit": "10"}, {"limit": True}])
def test_responses_page_refuses_bad_windows(store, window):
    with pytest.raises(ValueError):
        responses_page(store, Filters(), **window)


def _search(rows: list[Row], text: str) -> set[str]:
    needle = text.lower()
    return {r.response_id for r in rows
            if any(needle in (t or "").lower() for t in [r.question, r.answer, *r.claim_texts])}


@pytest.mark.parametrize("text, expected", [
    ("a_c", {"hc-us-1"}),  # "_" is literal: "abc" does not match
    ("10%off", {"hc-pct-1"}),  # "%" is literal: "10 items off" does not match
    (r"C:\temp", {"hc-slash"}),  # the escape character itself is literal too
    ("ZEPPELINWORTHY", {"hc-slash"}),  # claim text, case-insensitive
    ("code a_c IS", {"hc-us-1"}),
])
def test_search_is_a_literal_case_insensitive_substring(loaded, text, expected):
    store, rows = loaded
    assert _search(rows, text) == expected  # the fixture says what we think it says
    frame, total = responses_page(store, Filters(), search=text)
    assert set(frame["response_id"]) == expected and total == len(expected)


def test_search_over_question_answer_and_claims_with_filters(loaded):
    store, rows = loaded
    for text, f in (("notice", Filters()), ("warranty", Filters(models=("rag-v4",))),
                    ("Summarise", Filters(use_cases=("supplier-contracts",)))):
        want = _search(select(rows, f), text)
        frame, total = responses_page(store, f, search=text, limit=1000)
        assert total == len(want) > 0
        assert set(frame["response_id"]) == want
    assert responses_page(store, Filters(), search="   ")[1] == len(rows)  # blank search: no filter


def _cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame's values as Python objects, every missing value None (a column of nulls reads as object or string)."""
    return frame.astype(object).where(frame.notna(), None).reset_index(drop=True)


def _matches_read_as(monkeypatch, store: Store, bitmap: bool) -> None:
    """Every search read from the index alone reads its matches on the Responses page as a bitmap of keys
    (``bitmap``), or none does; the export reads them as keys."""
    monkeypatch.setattr(search, "BITMAP_SHARE", 10**9 if bitmap else 0)
    for text in ("notice", "%", "of the", "e"):
        with recorded_statements(monkeypatch) as statements:
            assert (search.search_matches(store, text, Params(), bitmap=True).prepare is not None) == bitmap, text
        # read as a bitmap, the text is split against the index once: the bitmap is built from the lookup that was
        # counted (read as keys after a count, it is split again for the keys' DISTINCT lookup)
        splits = [sql for sql in statements if "AS separators FROM search_index" in sql]
        assert len(splits) == (1 if bitmap else 2), text
        assert search.search_matches(store, text, Params()).prepare is None, text
    # texts decide: not counted
    assert search.search_matches(store, "of the notice", Params(), bitmap=True).prepare is None


@pytest.mark.parametrize("bitmap", [False, True], ids=["matches as keys", "matches as a bitmap"])
@pytest.mark.parametrize("joined", [False, True], ids=["kept view", "score rows joined"])
def test_a_searched_page_is_the_filtered_view_narrowed_to_the_matches(loaded, monkeypatch, joined, bitmap):
    """Every column of a searched page, in order, is the unsearched view's rows of the matching responses: the page
    reads its rows by the page's keys (not through the matches again), so it must agree with the view under every
    filter -- use case, model, an older profile version (kept as a read model, or its score rows joined), the
    Authority filter -- every sort order and every page; whether the matches are read as keys or as a bitmap."""
    store, rows = loaded
    _second_profile(store)  # version 1 is now an older version: kept as a read model of its own
    filters = [Filters(), Filters(use_cases=("customer-support",)), Filters(models=("rag-v4", "handmade")),
               Filters(profile_version=1), Filters(profile_version=1, use_cases=("customer-support", "hr-policy"))]
    from_kept = {f: filtered_scores(store, f, Params()) for f in filters}
    if joined:
        monkeypatch.setattr(version_views, "kept", lambda cur: [])
        # only the filters whose rows are now read another way: the rest run the very queries the kept case runs
        filters = [f for f in filters if filtered_scores(store, f, Params()) != from_kept[f]]
        assert filters == [f for f in filters if f.profile_version == 1] and len(filters) == 2
    assert ("FROM scores" in filtered_scores(store, Filters(profile_version=1), Params())) == joined
    _matches_read_as(monkeypatch, store, bitmap)
    orders = (("score", True, None), ("response_id", False, None), ("created_at", True, None),
              ("score", True, "any finding"))
    views = {(f, order): responses_page(store, f, sort_by=order[0], descending=order[1], authority=order[2],
                                        limit=1000)[0] for f in filters for order in orders}
    for text in ("notice", "%", "of the", "e", "of the notice"):
        matching = _search(rows, text)
        for f in filters:
            for sort_by, descending, authority in orders:
                view = views[f, (sort_by, descending, authority)]
                want = view[view["response_id"].isin(matching)].reset_index(drop=True)
                for offset in (0, 4, max(0, len(want) - 2)):
                    page, total = responses_page(store, f, search=text, sort_by=sort_by, descending=descending,
                                                 authority=authority, limit=4, offset=offset)
                    assert total == len(want), (text, f, sort_by)
                    pd.testing.assert_frame_equal(_cells(page), _cells(want.iloc[offset:offset + 4]))


@pytest.mark.parametrize("text", ["%", "_", "\\", "%%", "99.5%"])
def test_wildcard_characters_alone_are_searched_literally(loaded, text):
    store, rows = loaded
    want = _search(rows, text)
    assert want == set() if text == "%%" else 0 < len(want) < len(rows)  # unescaped, "%%" would match all
    frame, total = responses_page(store, Filters(), search=text, limit=1000)
    assert set(frame["response_id"]) == want and total == len(want)


def test_export_rows_are_the_filtered_view_with_texts(loaded):
    store, rows = loaded
    f = Filters(use_cases=("hr-policy",))
    frame = export_rows(store, f)
    want = {r.response_id: r for r in select(rows, f)}
    assert tuple(frame.columns) == EXPORT_COLUMNS
    assert set(frame["response_id"]) == set(want)
    for rid, question, answer in frame[["response_id", "question", "answer"]].itertuples(index=False):
        assert (question, answer) == (want[rid].question, want[rid].answer)
    assert len(export_rows(store, f, limit=3)) == 3
    assert set(export_rows(store, Filters(), search="zeppelinworthy")["response_id"]) == {"hc-slash"}


def test_a_searched_export_holds_the_matching_responses_with_their_texts(loaded):
    store, rows = loaded
    texts = {r.response_id: (r.question, r.answer) for r in rows}
    for text in ("notice", "%", "of the", "e"):
        f = Filters(use_cases=("customer-support", "hr-policy"))
        frame = export_rows(store, f, search=text)
        want = _search(rows, text) & {r.response_id for r in select(rows, f)}
        assert len(want) > 0 and sorted(frame["response_id"]) == sorted(want), text
        assert all(texts[rid] == (q, a) for rid, q, a in frame[["response_id", "question", "answer"]].itertuples(
            index=False))


def test_pages_searched_at_once_each_read_their_own_bitmap(loaded, monkeypatch):
    """The bitmap lives in a variable of the page's own cursor: pages searched at the same time from several threads
    (as the console's sessions do) each read their own matches, and none is left behind for another read."""
    store, rows = loaded
    _matches_read_as(monkeypatch, store, True)
    texts = ("notice", "%", "of the", "e")
    want = {text: _search(rows, text) for text in texts}

    def page(text: str) -> tuple[str, set[str]]:
        frame, total = responses_page(store, Filters(), search=text, limit=1000)
        assert total == len(frame)
        return text, set(frame["response_id"])

    with ThreadPoolExecutor(max_workers=4) as pool:
        for text, found in pool.map(page, texts * 5):
            assert found == want[text], text
    assert store.scalar("SELECT getvariable('hri_search_matches')") is None


def test_a_search_is_not_counted_while_the_index_is_far_behind(loaded, monkeypatch):
    """Counting a lookup's rows would scan the texts above the index's mark: with more than a catch-up slice of them
    the matches are read as keys, uncounted, and the page still lists exactly the matching responses."""
    store, rows = loaded
    monkeypatch.setattr(search, "BITMAP_SHARE", 10**9)
    monkeypatch.setattr(search, "SLICE_KEYS", 3)
    assert search.search_matches(store, "e", Params(), bitmap=True).prepare is not None  # caught up: counted
    top = store.scalar("SELECT max(response_key) FROM responses")

    def behind(tx: Transaction) -> Change:
        for table in ("search_postings", "search_pair_postings", "search_separator_postings", "search_characters"):
            tx.execute(f"DELETE FROM {table} WHERE response_key > ?", [top - 10])
        tx.execute("UPDATE search_index SET indexed_through = ?", [top - 10])
        return Change("search_index", None, None, {"indexed_through": top - 10})

    store.write(SYSTEM, "test.tamper", behind)
    # 10 revisions above the mark: keys
    assert search.search_matches(store, "e", Params(), bitmap=True).prepare is None
    frame, total = responses_page(store, Filters(), search="e", limit=1000)
    assert set(frame["response_id"]) == _search(rows, "e") and total == len(frame) > 10
    search_index.catch_up(store, SYSTEM)
    assert search.search_matches(store, "e", Params(), bitmap=True).prepare is not None


@pytest.mark.parametrize("text", ["notice", "zeppelin clause"])
def test_matches_above_the_bitmap_bound_are_read_from_the_keys(loaded, text):
    """Revisions with keys above the bitmap's bound (imported after it was read) are matched by their keys: the
    bitmap's condition agrees with the keys' for any bound, and for no match at all."""
    store, _ = loaded
    by_keys = Params()
    keys = search_index.search_select(store, text, by_keys)
    top = store.scalar("SELECT max(response_key) FROM responses")
    want = store.query(f"SELECT response_key FROM responses WHERE response_key IN ({keys}) ORDER BY 1", by_keys.values)
    assert (10 < len(want) < top) if text == "notice" else want == []
    for bound in (1, top // 2, top - 1, top, top + 5):
        looked_up = Params()
        matches = search._bitmap(search_index.lookup(store, text, looked_up), looked_up, bound)
        p = Params()
        items, matched = search._matched(matches, p)
        assert items == "" and matches.prepare is not None
        with store.cursor() as cur:
            cur.execute(*matches.prepare)
            got = cur.query(f"SELECT response_key FROM responses WHERE {matched} ORDER BY 1", p.values)
        assert got == want, bound


# --- one response -----------------------------------------------------------------------------------------------


def test_response_detail_shows_the_response_its_score_claims_and_floors(loaded):
    store, rows = loaded
    row = next(r for r in rows if r.floors and r.claim_count >= 3)
    detail = response_detail(store, row.response_id)
    response, score = detail["response"], detail["score"]
    assert (response["response_id"], response["revision"], response["is_current"]) == (row.response_id, 1, True)
    assert (response["question"], response["answer"], response["claim_count"]) == (
        row.question, row.answer, row.claim_count)
    assert response["batch_id"] >= 1 and "stakes" in response
    assert score["score"] == pytest.approx(row.score, abs=1e-9) and score["band"] == row.band
    assert score["hri_add"] == pytest.approx(row.hri_add, abs=1e-9)
    assert all(score[f"s_{d.lower()}"] == pytest.approx(row.dims[d], abs=1e-12) for d in ALL_DIMS)
    assert score["is_current"] and score["as_of"] == AS_OF and score["profile_version"] == 1
    assert (score["decisive_claim_id"] is not None) == row.decisive
    record = next(r for r in dataset() if r["response_id"] == row.response_id)
    claims = detail["claims"]
    assert list(claims["claim_id"]) == [c["claim_id"] for c in record["claims"]]
    assert list(claims["labels"]) == [c["labels"] for c in record["claims"]]
    assert list(claims["dimensions"]) == [c.get("dimensions") for c in record["claims"]]
    assert list(claims["criticality"]) == [c["criticality"] for c in record["claims"]]
    assert sorted(zip(detail["floors"]["claim_id"], detail["floors"]["rule_id"], strict=True)) == sorted(row.floors)
    # imported (scored at import time), then rescored at AS_OF: two runs, the later one current
    history = detail["history"]
    assert list(history["is_current"]) == [False, True]
    assert list(history["run_id"]) == sorted(history["run_id"])
    assert detail["revisions"] == [1]


def test_response_detail_of_unknown_responses_and_revisions(loaded):
    store, _ = loaded
    assert response_detail(store, "no-such-response") is None
    assert response_detail(store, "hc-crit", revision=2) is None
    assert response_detail(store, "' OR 1=1 --") is None


def test_response_detail_follows_revisions(loaded, tmp_path):
    store, _ = loaded
    changed = next(r for r in handmade_records() if r["response_id"] == "hc-crit")
    changed = {**changed, "claims": [claim("The liability cap is 100% of fees.", ["SUPPORTED"], 3)]}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "fix.jsonl", [changed]))
    current = response_detail(store, "hc-crit")
    assert current["revisions"] == [1, 2]
    assert current["response"]["revision"] == 2 and current["score"]["band"] == "Low"
    assert list(current["claims"]["text"]) == ["The liability cap is 100% of fees."]
    assert current["floors"].empty
    old = response_detail(store, "hc-crit", revision=1)
    assert old["response"]["is_current"] is False and old["score"]["band"] == "Critical"
    assert list(old["claims"]["labels"]) == [["CONTRADICTED"]]
    assert list(old["floors"]["rule_id"]) == ["contradicted-high"]
    assert list(current["history"]["revision"]) == [1, 1, 2]
    # the explorer lists the current revision only
    frame, _ = responses_page(store, Filters(models=("handmade",)), search="liability")
    assert list(zip(frame["response_id"], frame["revision"], strict=True)) == [("hc-crit", 2)]


# --- profile versions -------------------------------------------------------------------------------------------


def _second_profile(store: Store) -> int:
    version = create_draft(store, SYSTEM, {
        "weights": {"F": 0.1, "C": 0.1, "U": 0.5, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05},
        "contributions": {"PARTIAL": 0.9},
        "bands": [{"name": "Low", "upper": 10, "action": "release"},
                  {"name": "Medium", "upper": 30, "action": "caution"},
                  {"name": "High", "upper": 60, "action": "review"},
                  {"name": "Critical", "upper": 100, "action": "block"}],
    })
    activate(store, SYSTEM, version, "test: a stricter profile")
    rescore(store, SYSTEM, get_profile(store, version), as_of=AS_OF)
    return version


def _latest_under(store: Store, version: int) -> set[tuple]:
    """Each current response's latest score row under ``version``, picked in Python from every stored row."""
    current = set(store.query("SELECT response_id, revision FROM responses WHERE is_current"))
    latest: dict[tuple, tuple] = {}
    for run_id, rid, rev, as_of, score, action in store.query(
            "SELECT run_id, response_id, revision, as_of, score, action FROM scores WHERE profile_version = ?",
            [version]):
        if (rid, rev) in current and run_id > latest.get((rid, rev), (-1,))[0]:
            latest[(rid, rev)] = (run_id, as_of, score, action)
    return {(rid, rev, *row[1:]) for (rid, rev), row in latest.items()}


def _covers_by_rows(store: Store, version: int) -> bool:
    """Whether every current response has a score under ``version``, from every stored row (``_latest_under``)."""
    current = set(store.query("SELECT response_id, revision FROM responses WHERE is_current"))
    return {row[:2] for row in _latest_under(store, version)} == current


def test_a_version_covers_every_current_response_only_while_no_answer_is_newer_than_its_full_run(loaded, tmp_path):
    """``covers_every_current``: true after a run of the version over everything, false once a revision or a new
    answer is imported after it (until the version runs over everything again) and for a version never run over
    everything; never true where the stored rows say some current response has no score under the version."""
    store, _ = loaded  # version 1: the import's batch run, then a run over everything
    records = dataset()
    assert covers_every_current(store, 1) and _covers_by_rows(store, 1)
    version = _second_profile(store)
    assert covers_every_current(store, 1) and covers_every_current(store, version)
    assert not covers_every_current(store, 99)
    revised = {**records[0], "answer": "A revised answer."}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "revised.jsonl", [revised]))  # scored under the active one
    assert not covers_every_current(store, 1) and not _covers_by_rows(store, 1)  # the revision has no v1 score
    assert not covers_every_current(store, version)  # newer than the full run (a sufficient test, not exact)
    rescore(store, SYSTEM, get_profile(store, version), as_of=AS_OF + timedelta(days=1))
    assert covers_every_current(store, version) and not covers_every_current(store, 1)
    third = create_draft(store, SYSTEM, {"weights": {"F": 0.5, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.05,
                                                     "H": 0.05}})
    batch = store.scalar("SELECT min(batch_id) FROM responses WHERE is_current")
    rescore(store, SYSTEM, get_profile(store, third), as_of=AS_OF, batch_id=batch)  # one batch only
    assert not covers_every_current(store, third)
    for v in (1, version, third, 99):
        assert not covers_every_current(store, v) or _covers_by_rows(store, v), v


def test_profile_version_filter_takes_each_responses_latest_score_under_it(loaded, tmp_path):
    """Runs of one version before and after another version's, batch runs after a full one, revisions
    between them: under each version every current response shows its latest score under that version."""
    store, _ = loaded  # version 1: the import's batch run, then a full run at AS_OF
    records = dataset()
    extra = list(generate_responses(12, seed=11, id_prefix="late"))
    batch_a = import_path(store, SYSTEM, write_jsonl(tmp_path / "a.jsonl", extra[:6])).batch_ids[0]  # v1 batch
    version = _second_profile(store)  # version 2 active, everything rescored under it
    # and scored again on Spark: an imported run may score any set of revisions (here all of them)
    job_output(store, get_profile(store, version), tmp_path / "spark")
    import_scores(store, SYSTEM, tmp_path / "spark")
    revised = {**records[0], "answer": "A revised answer."}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "b.jsonl", [revised, *extra[6:]]))  # v2 batch
    # version 1 again for batch a, after version 2's full run: a second v1 run over the same revisions; and
    # version 2 for batch a, whose rows replace those of version 2's full run
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF + timedelta(days=1), batch_id=batch_a)
    rescore(store, SYSTEM, get_profile(store, version), as_of=AS_OF + timedelta(days=2), batch_id=batch_a)
    import_path(store, SYSTEM, write_jsonl(tmp_path / "c.jsonl", [{**extra[0], "answer": "Changed."}]))  # v2
    # a version never run over everything: two runs of batch a (the second replaces the first) and one of b
    third = create_draft(store, SYSTEM, {"weights": {"F": 0.5, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.05,
                                                     "H": 0.05}})
    batch_b = store.scalar("SELECT batch_id FROM responses WHERE response_id = ?", [extra[7]["response_id"]])
    for days, batch in ((3, batch_a), (4, batch_b), (5, batch_a)):
        rescore(store, SYSTEM, get_profile(store, third), as_of=AS_OF + timedelta(days=days), batch_id=batch)
    runs_v1 = store.query("SELECT count(*) FROM score_runs WHERE profile_version = 1")[0][0]
    assert runs_v1 >= 4
    for v in (1, version, third):
        assert not covers_every_current(store, v) or _covers_by_rows(store, v), v
        want = _latest_under(store, v)
        frame, total = responses_page(store, Filters(profile_version=v), limit=1000)
        got = {(r.response_id, r.revision, r.as_of, r.score, r.action) for r in frame.itertuples()}
        assert total == len(frame) == len(want) and got == want
        assert kpis(store, Filters(profile_version=v))["responses"] == len(want)
    ids_v1 = {row[0] for row in _latest_under(store, 1)}
    assert records[0]["response_id"] not in ids_v1 and extra[0]["response_id"] not in ids_v1  # revised since
    assert extra[1]["response_id"] in ids_v1 and extra[6]["response_id"] not in ids_v1
    as_of_by_id = {row[0]: row[2] for row in _latest_under(store, third)}
    assert as_of_by_id[extra[1]["response_id"]] == AS_OF + timedelta(days=5)  # the later run of batch a
    assert as_of_by_id[extra[7]["response_id"]] == AS_OF + timedelta(days=4)
    latest_v2 = {row[0]: row[2] for row in _latest_under(store, version)}
    assert latest_v2[extra[1]["response_id"]] == AS_OF + timedelta(days=2)  # batch a's run after the Spark run
    assert latest_v2[records[5]["response_id"]] == SPARK_AS_OF  # the Spark run after the full run


def _differing_rows(store: Store, f: Filters) -> int:
    """Rows of the version view read as ``filtered_scores`` reads it, not in the join of the version's own score
    rows (``scored_set`` with its runs), and the other way round."""
    p = Params()
    columns = ("response_key, run_id, profile_version, as_of, score, hri, hri_add, band, action, floors_fired, "
               "decisive_claim_id, mitigation_action, s_f, s_u, created_at, use_case")
    read = f"SELECT {columns} FROM ({filtered_scores(store, f, p)})"
    joined = f"SELECT {columns} FROM ({scored_set(f, p, runs=version_runs(store, f.profile_version))})"
    return store.scalar(f"SELECT (SELECT count(*) FROM ({read} EXCEPT ALL {joined})) "
                        f"+ (SELECT count(*) FROM ({joined} EXCEPT ALL {read}))", p.values)


def test_a_version_every_current_score_is_under_is_read_from_the_read_model(loaded):
    """After a version is published and run over everything, its view is the current view: read from the read
    model (no join of its score rows), with the same rows the join gives; a version some current scores are not
    under, or that none is, is joined."""
    store, records = loaded
    version = _second_profile(store)
    under = Filters(profile_version=version, use_cases=("hr-policy",))
    assert as_current(store, under) == Filters(use_cases=("hr-policy",))
    assert "FROM scores" not in filtered_scores(store, under, Params())
    assert _differing_rows(store, under) == 0 and kpis(store, under)["responses"] > 0
    weights, now = get_profile(store, version).weights, AS_OF + timedelta(days=30)
    assert overview(store, under, weights, now=now)["kpis"] == overview(
        store, Filters(use_cases=("hr-policy",)), weights, now=now)["kpis"]
    assert as_current(store, Filters(profile_version=1)).profile_version == 1  # history: the join
    assert as_current(store, Filters(profile_version=99)).profile_version == 99
    # one batch scored under version 1 again: version 2 is no longer every current score's
    batch = store.scalar("SELECT min(batch_id) FROM responses")
    rescore(store, SYSTEM, get_profile(store, 1), as_of=AS_OF + timedelta(days=1), batch_id=batch)
    mixed = Filters(profile_version=version)
    assert as_current(store, mixed) == mixed and "FROM scores" in filtered_scores(store, mixed, Params())
    assert kpis(store, mixed)["responses"] == len(_latest_under(store, version)) == len(records)


def test_profile_version_filter_selects_that_profiles_scores(loaded, tmp_path):
    store, rows_v1 = loaded
    records = dataset()
    version = _second_profile(store)
    rows_v2 = expected_rows(records, get_profile(store, version))
    assert filter_options(store)["profile_versions"] == [1, version]
    for f_rows, f in ((rows_v1, Filters(profile_version=1)), (rows_v2, Filters(profile_version=version)),
                      (rows_v2, Filters())):
        got = kpis(store, f)
        assert got["band_counts"] == {b: sum(r.band == b for r in f_rows) for b in STATES}
        judged = [r for r in f_rows if not r.no_claims]
        assert got["median_score"] == pytest.approx(quantile_cont([r.score for r in judged], 0.5), abs=1e-9)
        bins = [10 * (k + 1) for k in range(10)]
        hist = score_histogram(store, f, bins)
        assert list(hist["n"]) == [sum(_bin_of(r.score, bins) == i for r in judged) for i in range(10)]
        contrib = dimension_contributions(store, f, get_profile(store, version).weights).set_index("dimension")
        assert contrib.loc["U", "mean_score"] == pytest.approx(statistics.fmean(r.dims["U"] for r in f_rows))
        frame, total = responses_page(store, f, limit=5)
        assert total == len(records)
        assert list(frame["profile_version"]) == [f.profile_version or version] * 5
        assert set(frame["as_of"]) == {AS_OF}  # the latest run under that version, not the import-time one
        band_f = Filters(bands=("High",), profile_version=f.profile_version)
        assert kpis(store, band_f)["responses"] == sum(r.band == "High" for r in f_rows)
    assert kpis(store, Filters(profile_version=1))["band_counts"] != kpis(store, Filters())["band_counts"]
    # a revision imported after the switch was never scored under version 1: it drops out of that view
    changed = {**next(r for r in records if r["response_id"] == "hc-us-2"), "answer": "See the new code."}
    import_path(store, SYSTEM, write_jsonl(tmp_path / "late.jsonl", [changed]))
    assert kpis(store, Filters(profile_version=1))["responses"] == len(records) - 1
    assert kpis(store, Filters(profile_version=version))["responses"] == len(records)
    assert kpis(store, Filters(profile_version=99))["responses"] == 0
