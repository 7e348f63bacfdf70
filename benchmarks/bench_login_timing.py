"""Benchmark: how long a login takes on each path (can the answer time tell which names exist?).

    .venv/bin/python benchmarks/bench_login_timing.py [--rounds 20] [--seed 1] [--json]

Builds a temporary register with four accounts: alice (active), lou (locked), dee (disabled) and
newbie (a one-time password not yet changed), then times ``register.access.identity.authenticate``
on every path, ``--rounds`` times each, in a shuffled order per round (so load drift on a shared
machine spreads over every path alike):

- unknown name, a new one each time / the same one each time
- wrong password (alice), locked account (lou, right password), disabled account (dee, right
  password), must-change (newbie, its one-time password), success (alice)

Between timed calls, alice's and dee's failure counters are reset (untimed) so a path stays that path
(three failures would lock them). Prints, per path, the median and the 10th-90th percentile spread
of the wall time and of the process CPU time (argon2 runs on several threads: CPU can exceed wall),
each path's median difference from the wrong-password path with a bootstrap 95% interval, and the
load average before and after. Asserts nothing (tests count argon2 calls instead of timing).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from register import SYSTEM, Actor, Store  # noqa: E402
from register.access import identity  # noqa: E402
from register.db.store import Change, utc_now  # noqa: E402
from register.errors import LoginFailed  # noqa: E402

PASSWORD = "benchmark password, long enough"
REFERENCE = "wrong password"


def setup(store: Store) -> tuple[str, object]:
    """The four accounts; returns newbie's one-time password and the time at which lou is locked."""
    for name in ("alice", "lou", "dee"):
        identity.change_own_password(store, Actor(name, "viewer"),
                                     identity.create_user(store, SYSTEM, name, "viewer"), PASSWORD)
    identity.set_disabled(store, SYSTEM, "dee", True)
    one_time = identity.create_user(store, SYSTEM, "newbie", "viewer")
    base = utc_now()
    for _ in range(identity.FREE_ATTEMPTS + 6):  # locked for minutes: longer than the benchmark
        with contextlib.suppress(LoginFailed):
            identity.authenticate(store, "lou", "wrong", now=base)
        base += timedelta(seconds=identity.lock_seconds(identity.get_user(store, "lou").failed_attempts))
    return one_time, base - timedelta(seconds=1)


def reset_failures(store: Store, username: str) -> None:
    store.write(SYSTEM, "bench.reset_failures", lambda tx: (tx.execute(
        "UPDATE users SET failed_attempts = 0, locked_until = NULL WHERE username = ?", [username]),
        Change("user", username))[1])


def paths(one_time: str) -> dict[str, tuple[str, str]]:
    counter = iter(range(10**9))
    return {
        "unknown name (new each time)": (lambda: f"nobody-{next(counter)}", PASSWORD),
        "unknown name (same each time)": (lambda: "nobody", PASSWORD),
        "wrong password": (lambda: "alice", "not the password"),
        "locked account": (lambda: "lou", PASSWORD),
        "disabled account": (lambda: "dee", PASSWORD),
        "must change (one-time)": (lambda: "newbie", one_time),
        "success": (lambda: "alice", PASSWORD),
    }


def time_once(store: Store, username: str, password: str, now) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.suppress(LoginFailed):
        identity.authenticate(store, username, password, now=now)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def median_difference_ci(a: list[float], b: list[float], rng: np.random.Generator, n: int = 2000):
    """Median of a minus median of b, with a bootstrap 95% interval."""
    xa, xb = np.asarray(a), np.asarray(b)
    boots = [np.median(rng.choice(xa, xa.size)) - np.median(rng.choice(xb, xb.size)) for _ in range(n)]
    return float(np.median(xa) - np.median(xb)), tuple(float(v) for v in np.percentile(boots, [2.5, 97.5]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as work:
        store = Store(Path(work) / "bench.duckdb")
        one_time, now = setup(store)
        cases = paths(one_time)
        wall: dict[str, list[float]] = {name: [] for name in cases}
        cpu: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.rounds):
            order = list(cases)
            rng.shuffle(order)
            for name in order:
                reset_failures(store, "alice")
                reset_failures(store, "dee")
                username, password = cases[name][0](), cases[name][1]
                w, c = time_once(store, username, password, now)
                wall[name].append(w)
                cpu[name].append(c)
        audit_events = store.scalar("SELECT count(*) FROM audit_events WHERE action LIKE 'login%'")
        store.close()
    load_after = os.getloadavg()
    nrng = np.random.default_rng(args.seed)

    def summary(values: list[float]) -> dict[str, float]:
        p10, p90 = np.percentile(values, [10, 90])
        return {"median": statistics.median(values), "p10": float(p10), "p90": float(p90)}

    report = {"rounds": args.rounds, "cpus": os.cpu_count(), "load_average_before": load_before,
              "load_average_after": load_after, "login_audit_events": audit_events, "paths": {}}
    for name in cases:
        diff, ci = median_difference_ci(wall[name], wall[REFERENCE], nrng)
        report["paths"][name] = {"wall_ms": summary(wall[name]), "cpu_ms": summary(cpu[name]),
                                 "wall_median_minus_wrong_password_ms": diff, "ci95": ci}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"login timing: {args.rounds} rounds per path, {os.cpu_count()} CPUs, load average before "
          f"{', '.join(f'{v:.2f}' for v in load_before)}, after {', '.join(f'{v:.2f}' for v in load_after)}")
    print(f"{'path':<32}{'wall median':>12}{'p10-p90':>18}{'CPU median':>12}{'p10-p90':>18}"
          f"{'vs wrong pw (95% CI)':>30}")
    for name, r in report["paths"].items():
        w, c = r["wall_ms"], r["cpu_ms"]
        lo, hi = r["ci95"]
        print(f"{name:<32}{w['median']:>10.1f}ms{w['p10']:>8.1f}-{w['p90']:<7.1f}ms"
              f"{c['median']:>10.1f}ms{c['p10']:>8.1f}-{c['p90']:<7.1f}ms"
              f"{r['wall_median_minus_wrong_password_ms']:>+12.1f} ms [{lo:+.1f}, {hi:+.1f}]")
    print(f"login audit events written: {audit_events}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
