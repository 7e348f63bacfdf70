"""Benchmark: the HTTP API's latency against the same work in-process, measured in the same run.

    .venv/bin/python benchmarks/bench_api.py [--synthetic 2000] [--reads 200] [--imports 3] [--answers 1000]

Builds a demo register (the demo set plus ``--synthetic`` answers) in a temporary folder, then:
1. in-process (this process opens the file): ``response_detail`` of one answer, ``--reads`` times, and the import
   of ``--answers`` new answers from a JSON Lines file, ``--imports`` times (new ids each time);
2. over HTTP: ``python -m register serve`` on that file, a personal token, then ``GET /api/v1/responses/{id}``
   ``--reads`` times and ``POST /api/v1/imports`` of the same kind of file ``--imports`` times.
The floor of each side, measured in the same run: in-process a ``SELECT 1`` through the Store; over HTTP
``GET /api/v1/health`` (a token-free round trip that reads ``SELECT 1``). Printed: median and p95 wall time, the
CPU time of the process doing the work (this one in-process; the server's, from /proc, over HTTP), the load
average before and after, and the ratios HTTP / in-process and each to its floor. No assertion: tests never time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hri_core.synthetic import generate_responses  # noqa: E402
from register import SYSTEM, Store  # noqa: E402
from register.console.queries.detail import response_detail  # noqa: E402
from register.ingest.importer import import_path  # noqa: E402


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _answers_file(folder: Path, n: int, prefix: str) -> Path:
    path = folder / f"{prefix}.jsonl"
    with path.open("w") as out:
        for record in generate_responses(n, seed=hash(prefix) % 1000, id_prefix=prefix):
            out.write(json.dumps(record, default=str) + "\n")
    return path


def _timed(fn, repeat: int, cpu) -> tuple[list[float], float]:
    walls, cpu0 = [], cpu()
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - start)
    return walls, cpu() - cpu0


def _line(name: str, walls: list[float], cpu: float) -> dict:
    ordered = sorted(walls)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    median = statistics.median(walls)
    print(f"  {name:<34} median {median * 1000:9.2f} ms  p95 {p95 * 1000:9.2f} ms  CPU {cpu:7.2f} s "
          f"({cpu / len(walls) * 1000:8.2f} ms per call)  n={len(walls)}")
    return {"median": median, "p95": p95, "cpu": cpu}


def _serve(db: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "register", "--db", str(db), "serve", "--port", str(port)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.terminate()
    raise SystemExit("the server did not answer")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=2000)
    parser.add_argument("--reads", type=int, default=200)
    parser.add_argument("--imports", type=int, default=3)
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--port", type=int, default=8765)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="hri-bench-api-") as tmp:
        folder, db = Path(tmp), Path(tmp) / "bench.duckdb"
        env = {**os.environ, "HRI_DB": str(db), "HRI_ACTOR": "bench", "HRI_ANCHOR_DIR": str(folder / "anchors"),
               "HRI_INBOX_POLL_SECONDS": "0"}
        os.environ.update(env)
        subprocess.run([sys.executable, "-m", "register", "--db", str(db), "demo", "--synthetic",
                        str(args.synthetic)], cwd=ROOT, check=True, env=env, capture_output=True)
        files = [_answers_file(folder, args.answers, f"inproc{i}") for i in range(args.imports)]
        http_files = [_answers_file(folder, args.answers, f"http{i}") for i in range(args.imports)]
        store = Store(db)
        answer_id = store.scalar("SELECT response_id FROM scores WHERE is_current AND NOT no_claims "
                                 "ORDER BY response_id LIMIT 1")
        from register.access.api_tokens import create_token
        from register.access.identity import change_own_password, create_user

        one_time = create_user(store, SYSTEM, "bench-pipeline", "admin", "Benchmark pipeline")
        change_own_password(store, type(SYSTEM)("bench-pipeline", "admin"), one_time, "bench password 1234 long")
        token = create_token(store, SYSTEM, "bench-pipeline").token
        cpu_self = time.process_time
        print(f"in-process ({args.synthetic:,} synthetic answers + the demo set):")
        local = {
            "floor": _line("SELECT 1 (floor)", *_timed(lambda: store.scalar("SELECT 1"), args.reads, cpu_self)),
            "read": _line("response_detail", *_timed(lambda: response_detail(store, answer_id), args.reads,
                                                     cpu_self)),
        }
        queue = iter(files)
        local["import"] = _line(f"import {args.answers:,} answers",
                                *_timed(lambda: import_path(store, SYSTEM, next(queue)), args.imports, cpu_self))
        store.close()
        server = _serve(db, args.port)
        try:
            base = f"http://127.0.0.1:{args.port}/api/v1"
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(timeout=600) as client:
                client.get(f"{base}/responses/{answer_id}", headers=headers).raise_for_status()  # warm the route
                print(f"over HTTP (server PID {server.pid}; CPU is the server's):")
                cpu_server = lambda: _cpu_of(server.pid)  # noqa: E731
                http = {
                    "floor": _line("GET /health (floor)", *_timed(lambda: client.get(f"{base}/health"), args.reads,
                                                                  cpu_server)),
                    "read": _line("GET /responses/{id}", *_timed(
                        lambda: client.get(f"{base}/responses/{answer_id}", headers=headers).raise_for_status(),
                        args.reads, cpu_server)),
                }
                uploads = iter(http_files)

                def upload() -> None:
                    path = next(uploads)
                    client.post(f"{base}/imports", params={"filename": path.name}, content=path.read_bytes(),
                                headers={**headers, "Content-Type": "application/x-ndjson"}).raise_for_status()

                http["import"] = _line(f"POST /imports {args.answers:,} answers", *_timed(upload, args.imports,
                                                                                           cpu_server))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print("ratios (medians):")
    for name in ("read", "import"):
        print(f"  {name:<7} HTTP / in-process {http[name]['median'] / local[name]['median']:6.2f}x   "
              f"in-process / its floor {local[name]['median'] / local['floor']['median']:8.1f}x   "
              f"HTTP / its floor {http[name]['median'] / http['floor']['median']:8.1f}x")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
