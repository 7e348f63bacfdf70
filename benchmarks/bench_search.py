"""Benchmark: the console's search through the search index, against the scan it replaced.

    .venv/bin/python benchmarks/bench_search.py --db PATH [--repeat 3] [--search TEXT ...]

On an existing register (``python -m register --db PATH demo --synthetic N --bulk`` builds one; the index is
caught up first if it is behind, and that catch-up is timed), times for each search text:

* **index**: the responses page with the search (``queries.explorer.responses_page``: the index lookup, the matches'
  scores, the page's fifty rows and the total), as the Responses page runs it;
* **in one use case**: the same page under a use-case filter (``--use-case``; by default the largest), where the
  filter and the matches meet;
* **scan**: the keys found by scanning every current question, answer and claim (the search before the index);
* **floor**: one scan of the read model's ``score`` column (``current_scores``), the cheapest full-table read.

Prints wall and CPU time (median of ``--repeat``), the ratio of each to the floor taken in the same run, the
number of matches, and the load average before and after. The default search texts: one word found in many
answers, one word found in one (the demo set's real answers are not copied), a two-word phrase found in many
(the console benchmark's ``notice period``), a three-word phrase, a phrase found nowhere, and two texts with no
letter or digit, one found in a third of the answers and one found nowhere (looked up in the runs of separators),
and one letter, found in every answer (looked up in the revisions' masks of letters and digits).
Asserts nothing (tests never time anything).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_impact import timed  # noqa: E402

from register import SYSTEM, Store  # noqa: E402
from register.console.queries import explorer  # noqa: E402
from register.console.queries.filters import Filters  # noqa: E402
from register.db.sql import Params  # noqa: E402
from register.readmodels import search_index  # noqa: E402

DEFAULT_SEARCHES = ("notice", "abolitionist", "notice period", "iso 27001 certification", "zeppelin clause", "%",
                    "§", "e")


def scan_count(store: Store, text: str) -> int:
    """The search before the index: every current text scanned."""
    p = Params()
    needle = f"lower({p(text.strip())})"
    return int(store.scalar(f"SELECT count(*) FROM ({search_index._scan(needle, 'true')})", p.values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--search", nargs="*", default=list(DEFAULT_SEARCHES))
    parser.add_argument("--no-scan", action="store_true", help="skip the scan (minutes at 10M when uncached)")
    parser.add_argument("--use-case", help="the use-case filter of the filtered search (default: the largest)")
    args = parser.parse_args()

    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    store = Store(args.db)
    state = search_index.state(store)
    if state.pending or state.pairs_missing_through or state.separators_missing_through \
            or state.characters_missing_through:
        wall, cpu = time.perf_counter(), time.process_time()
        done = search_index.catch_up(store, SYSTEM)
        print(f"catch-up: {done:,} revisions indexed in {time.perf_counter() - wall:,.1f} s wall, "
              f"{time.process_time() - cpu:,.1f} CPU-s")
        state = search_index.state(store)
    responses = store.scalar("SELECT count(*) FROM current_scores")
    print(f"database: {responses:,} current scored responses; index: {state.words:,} words, "
          f"{state.postings:,} postings, {state.pairs:,} word pairs, {state.pair_postings:,} pair postings, "
          f"{state.separators:,} runs of separators, {state.separator_postings:,} run postings, "
          f"{state.character_masks:,} masks of letters and digits, every revision up to key {state.indexed_through:,}")

    floor_wall, floor_cpu, _ = timed(args.repeat, lambda: store.scalar("SELECT sum(score) FROM current_scores"))
    print(f"floor (one scan of current_scores.score): {floor_wall:.3f} s wall, {floor_cpu:.3f} CPU-s")
    use_case = args.use_case or store.scalar("SELECT use_case FROM score_summary GROUP BY use_case "
                                             "ORDER BY sum(responses) DESC LIMIT 1")
    print(f"\n| search | matches | index: page + total (wall / CPU) | x floor | in {use_case}: matches, page + total "
          "(wall / CPU) | x floor | scan (wall / CPU) | x floor |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    everything, one_use_case = Filters(), Filters(use_cases=(use_case,))
    for text in args.search:
        wall, cpu, result = timed(args.repeat, lambda t=text: explorer.responses_page(store, everything, search=t))
        matches = result[1]  # type: ignore[index]
        u_wall, u_cpu, u_result = timed(args.repeat, lambda t=text: explorer.responses_page(store, one_use_case,
                                                                                            search=t))
        in_use_case = f"{u_result[1]:,}, {u_wall:.3f} s / {u_cpu:.2f}"  # type: ignore[index]
        if args.no_scan:
            scan = "-"
            scan_ratio = "-"
        else:
            s_wall, s_cpu, scanned = timed(args.repeat, lambda t=text: scan_count(store, t))
            scan = f"{s_wall:.3f} s / {s_cpu:.2f}"
            scan_ratio = f"{s_wall / floor_wall:,.0f}x"
            if scanned < matches:
                print(f"  note: {text!r}: the scan counts {scanned:,} current revisions, the page {matches:,} "
                      "scored responses")
        print(f"| {text!r} | {matches:,} | {wall:.3f} s / {cpu:.2f} | {wall / floor_wall:,.0f}x | {in_use_case} | "
              f"{u_wall / floor_wall:,.0f}x | {scan} | {scan_ratio} |", flush=True)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    store.close()


if __name__ == "__main__":
    main()
