"""Benchmark: an answer's whole life found in the audit trail by its id (the audit page's answer search).

    .venv/bin/python benchmarks/bench_answer_life.py [--synthetic 2000] [--db PATH] [--reviews 1500]
        [--feedback 300] [--rescores 4] [--filler 5000] [--answers 40] [--repeat 3] [--pad 1000000]

Builds the register as a user would (``python -m register demo --synthetic N`` in a process of its own), then adds
events of the kinds an answer's life holds: a review decision on ``--reviews`` answers, feedback reported and
validated (a revision and a score run each) on ``--feedback`` answers, ``--rescores`` full rescores, and
``--filler`` events of another kind, so that the trail is large and the answers' events are a small part of it.
``--db PATH`` keeps the database and reuses it (a database that holds answers is not built again).

Then times ``register.console.answer_life.answer_events`` (the page's first 500 events and their count) for
``--answers`` answers, those with the longest lives first, median of ``--repeat`` runs each, in wall and CPU
seconds (the process's, all threads), against its floor in the same run: the exact-id search of the same id
(``register.db.audit.search_events``), one scan of the trail. Prints the load average before and after.

``--pad N`` then times the same on a copy of the database whose trail has N more events appended by SQL (copies
of its filler events under new numbers: the chain of that copy does not verify; it is a timing copy only), for
the cost on a trail of millions of events.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from register import SYSTEM, Actor, Store  # noqa: E402
from register.access.identity import create_user  # noqa: E402
from register.console.answer_life import answer_events  # noqa: E402
from register.console.review import record_decision  # noqa: E402
from register.db.audit import EventFilter, search_events  # noqa: E402
from register.db.store import Change  # noqa: E402
from register.feedback.items import report_feedback, validate_feedback  # noqa: E402
from register.scoring.profiles import active_profile  # noqa: E402
from register.scoring.scorer import rescore  # noqa: E402

VIEWER = Actor("bench-viewer", "viewer")
REVIEWER = Actor("bench-reviewer", "reviewer")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _build(db: Path, args) -> None:
    env = dict(os.environ, HRI_DB=str(db), HRI_ACTOR="bench")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "register", "demo", "--synthetic", str(args.synthetic)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    print(f"demo --synthetic {args.synthetic}: {time.perf_counter() - started:.1f} s")
    store = Store(db)
    try:
        _add_events(store, args)
    finally:
        store.close()


def _add_events(store: Store, args) -> None:
    started = time.perf_counter()
    for actor in (VIEWER, REVIEWER):
        create_user(store, SYSTEM, actor.name, actor.role)
    ids = [r for (r,) in store.query("SELECT response_id FROM responses WHERE is_current AND claim_count > 0 "
                                     "ORDER BY response_key")]
    for rid in ids[:args.feedback]:
        claim = store.scalar("SELECT claim_id FROM claims WHERE is_current AND response_id = ? ORDER BY claim_idx "
                             "LIMIT 1", [rid])
        item = report_feedback(store, VIEWER, rid, "the figure is out of date", 0.6, claim_id=claim)
        validate_feedback(store, REVIEWER, item, "review")
    for rescore_number in range(args.rescores):
        rescore(store, SYSTEM, active_profile(store))
        print(f"  rescore {rescore_number + 1} of {args.rescores} done")
    for rid in ids[:args.reviews]:
        revision = store.scalar("SELECT revision FROM responses WHERE is_current AND response_id = ?", [rid])
        record_decision(store, REVIEWER, rid, revision, "release_with_caution", "benchmark decision")
    for number in range(args.filler):
        store.write(SYSTEM, "bench.filler", lambda _tx, n=number: Change("bench", str(n), None, {"n": n}))
    print(f"events added: {time.perf_counter() - started:.1f} s")


def _timed(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _measure(db: Path, args) -> None:
    store = Store(db)
    try:
        events = store.scalar("SELECT count(*) FROM audit_events")
        answers = store.scalar("SELECT count(*) FROM responses WHERE is_current")
        scores = store.scalar("SELECT count(*) FROM scores")
        print(f"register: {answers:,} answers, {scores:,} score rows, {events:,} audit events")
        # the answers with the most revisions first, then the rest by key
        ids = [r for (r,) in store.query(
            "SELECT response_id FROM responses GROUP BY response_id ORDER BY max(revision) DESC, "
            "min(response_key) LIMIT ?", [args.answers])]
        rows = []
        for rid in ids:
            life = [_timed(lambda rid=rid: answer_events(store, rid)) for _ in range(args.repeat)]
            exact = [_timed(lambda rid=rid: search_events(store, EventFilter(entity_id=rid)))
                     for _ in range(args.repeat)]
            rows.append((rid, life[0][2][1], statistics.median(w for w, _, _ in life),  # type: ignore[index]
                         statistics.median(c for _, c, _ in life), statistics.median(w for w, _, _ in exact),
                         statistics.median(c for _, c, _ in exact)))
        print(f"{'answer':<14} {'events':>6} {'life wall':>9} {'life CPU':>9} {'exact wall':>10} {'exact CPU':>9}")
        for rid, count, wall, cpu, exact_wall, exact_cpu in rows[:10]:
            print(f"{rid:<14} {count:>6} {wall:>9.3f} {cpu:>9.3f} {exact_wall:>10.3f} {exact_cpu:>9.3f}")
        for name, index in (("life wall", 2), ("life CPU", 3), ("exact wall", 4), ("exact CPU", 5)):
            values = [row[index] for row in rows]
            print(f"{name}: median {statistics.median(values):.3f} s, max {max(values):.3f} s over {len(rows)} answers")
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--synthetic", type=int, default=2000)
    parser.add_argument("--db", type=Path)
    parser.add_argument("--reviews", type=int, default=1500)
    parser.add_argument("--feedback", type=int, default=300)
    parser.add_argument("--rescores", type=int, default=4)
    parser.add_argument("--filler", type=int, default=5000)
    parser.add_argument("--answers", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pad", type=int, default=0)
    args = parser.parse_args()
    folder = None if args.db else tempfile.TemporaryDirectory()
    db = args.db or Path(folder.name) / "life.duckdb"  # type: ignore[union-attr]
    print(f"load before: {_load()}")
    if not db.exists():
        _build(db, args)
    _measure(db, args)
    if args.pad:
        with tempfile.TemporaryDirectory() as scratch:
            padded = Path(scratch) / "padded.duckdb"
            shutil.copyfile(db, padded)
            store = Store(padded)
            try:
                with store.cursor() as cur:  # a timing copy: these rows are not chained
                    cur.execute("INSERT INTO audit_events (seq, occurred_at, actor_name, actor_role, action, "
                                "entity_type, entity_id, before, after, prev_hash, hash, key_id) "
                                "SELECT m.top + i, now(), 'system', 'system', 'bench.filler', 'bench', "
                                "CAST(i AS VARCHAR), NULL, '{}', '', '', NULL "
                                "FROM range(1, ? + 1) t(i), (SELECT max(seq) AS top FROM audit_events) m", [args.pad])
            finally:
                store.close()
            print(f"padded copy: {args.pad:,} more events")
            _measure(padded, args)
    if folder is not None:
        folder.cleanup()
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()
