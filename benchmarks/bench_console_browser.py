"""Benchmark: the console's views in Chromium on a large database, cold and warm, with the server's memory.

    .venv/bin/python benchmarks/bench_console_browser.py --db PATH [--repeat 2]

PATH is an existing register (for 10 million responses: ``python -m register --db PATH demo --synthetic
10000000 --bulk``). Starts the console (``streamlit run app.py``) on it, creates a reviewer account with a
random password for this run (kept nowhere), logs in through the login form and times, in a real headless
Chromium, each view from the click until the page's script has finished and its content is on screen: the
overview, the previous profile version chosen in its filter, the responses page, a search, a filter change, the
response detail (an id typed: timed from Enter), the review queue, the queue's link to a response's detail, and
as the floor of each round a page that reads almost nothing (the labelling rubric), with each view's ratio to
it. The first visit after the server started is cold (empty caches); later visits are warm. Prints wall time per
view, the server process's CPU seconds for it (from the view's own start: not what the server did while the person
typed), its resident memory (now and peak: VmRSS, VmHWM) and the load average.
Asserts nothing (tests never time anything).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from google.protobuf.message import DecodeError
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from register import SYSTEM, Actor, Store  # noqa: E402
from register.access.identity import change_own_password, create_user, get_user, reset_password  # noqa: E402
from register.settings import settings  # noqa: E402

USER = "bench-reviewer"
TARGETS = {"floor": 1.0, "overview": 1.0, "profile version": 1.0, "responses": 1.0, "search": 1.0,
           "filter change": 1.0, "detail": 0.3, "review queue": 1.0, "queue -> detail": 0.3}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _account(db: Path) -> tuple[str, str, int | None]:
    """A reviewer with a fresh random password (the one-time-password step done), a response to open and the
    profile version before the active one (None without one): returns (password, response id, version)."""
    password = secrets.token_urlsafe(18)
    store = Store(db)
    try:
        once = (create_user(store, SYSTEM, USER, "reviewer", "Benchmark reviewer") if get_user(store, USER) is None
                else reset_password(store, SYSTEM, USER))
        change_own_password(store, Actor(USER, "reviewer"), once, password)
        detail = store.scalar("SELECT response_id FROM responses WHERE is_current ORDER BY response_key DESC LIMIT 1")
        previous = store.scalar("SELECT max(profile_version) FROM score_runs WHERE responses_scored > 0 AND "
                                "profile_version < (SELECT max(profile_version) FROM scoring_profiles "
                                "WHERE status = 'active')")
    finally:
        store.close()
    return password, detail, previous


def _proc_stats(pid: int) -> tuple[float, float, float]:
    """The server's CPU seconds so far, its resident memory now and its peak, in MB."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return cpu, int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024


_APP = '[data-testid="stApp"]'


class _Runs:
    """The app's script runs that finished, counted from the server's messages on the page's websocket.

    ``arm`` before a click, ``settled`` after it: waits until a run has finished since ``arm`` (a run cut short by
    a rerun does not count; its successor does) and the browser shows the app as not running. Counting the
    server's ``script_finished`` messages rather than watching the app's ``data-test-script-state`` attribute for a
    change: in about one benchmark run in three under load, one page switch showed no change of it at all (the new
    page drawn, the attribute reading not running; seemingly a run whose start and end the browser drew at once)
    and the benchmark waited until its timeout."""

    def __init__(self, page, timeout: float) -> None:
        self.page, self.timeout = page, timeout
        self.finished = self.armed = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except DecodeError:
            return
        if msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self.finished += 1

    def arm(self) -> None:
        self.armed = self.finished

    def settled(self) -> None:
        deadline = time.monotonic() + self.timeout
        while self.finished <= self.armed:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no script run finished within {self.timeout:g} s")
            self.page.wait_for_timeout(10)  # lets Playwright deliver the websocket's frames
        self.page.wait_for_function("""(sel) => { const app = document.querySelector(sel);
            return app && app.getAttribute('data-test-script-state') === 'notRunning'; }""", arg=_APP)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="an existing register database")
    parser.add_argument("--repeat", type=int, default=2, help="visits per view (the first is cold)")
    parser.add_argument("--search", default="notice period")
    parser.add_argument("--use-case", default="claims", help="typed into the use-case filter (first match)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds to wait for one view")
    parser.add_argument("--shots", type=Path, help="folder for a screenshot of each view (and of a failure)")
    parser.add_argument("--login-delay", type=float, default=0.0,
                        help="seconds between the login form showing and the password being sent (a person typing: "
                             "the console warms the overview meanwhile, HRI_CONSOLE_WARMUP); the overview's figure "
                             "is timed from the moment the password is sent")
    args = parser.parse_args()
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    password, detail_id, previous = _account(args.db)
    port = _free_port()
    log = tempfile.NamedTemporaryFile("w", prefix="bench-browser-", suffix=".log", delete=False)  # noqa: SIM115
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.address",
         "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, "HRI_DB": str(args.db), "HRI_DEMO_SYNTHETIC": "0"}, stdout=log,
        stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    finished = False
    try:
        for _ in range(200):
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.3)
        print(f"server up on {url}; DuckDB memory limit of the console (HRI_CONSOLE_MEMORY_LIMIT) "
              f"{settings().console_memory_limit}; overview warm-up on the login page (HRI_CONSOLE_WARMUP) "
              f"{'on' if settings().console_warmup else 'off'}, login delay {args.login_delay:g} s; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        timed: dict[str, float] = {}  # a view's own start: after a person's typing, or from the option chosen

        def start_timing() -> None:
            """The view's own start, wall and the server's CPU: what the server did while the person typed (the
            login page's first run, the overview's warm-up) is not the view's."""
            timed["cpu"] = _proc_stats(server.pid)[0]
            timed["start"] = time.perf_counter()
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(args.timeout * 1000)
            runs = _Runs(page, args.timeout)

            def login() -> None:
                page.goto(url)
                page.get_by_role("textbox", name="Username").wait_for()
                if args.login_delay:
                    time.sleep(args.login_delay)
                    start_timing()
                page.get_by_role("textbox", name="Username").fill(USER)
                page.get_by_role("textbox", name="Password").fill(password)
                runs.arm()
                page.get_by_role("textbox", name="Password").press("Enter")
                page.get_by_role("heading", name="Overview").wait_for()
                runs.settled()
                page.get_by_test_id("stMetricValue").first.wait_for()

            def visit(link: str, heading: str, then: Callable[[], None] | None = None) -> Callable[[], None]:
                def go() -> None:
                    runs.arm()
                    page.get_by_role("link", name=link, exact=True).click()
                    page.get_by_role("heading", name=heading).wait_for()
                    runs.settled()
                    if then:
                        then()
                return go

            def search() -> None:
                box = page.get_by_role("textbox", name="Search question, answer and claims")
                box.fill(args.search)
                runs.arm()
                box.press("Enter")
                runs.settled()

            def detail() -> None:
                """A response id typed on the Response detail page: timed from Enter (the page opened and the id
                typed are the person's part, as the option chosen is for the profile version)."""
                visit("Response detail", "Response detail")()
                box = page.get_by_role("textbox", name="Response id")
                box.fill(detail_id)
                runs.arm()
                start_timing()
                box.press("Enter")
                runs.settled()
                page.get_by_test_id("stMetricValue").first.wait_for()

            def detail_from_queue() -> None:
                """The review queue's link to its first response's detail: one click, one page run."""
                runs.arm()
                page.get_by_role("link", name="Open the detail of").click()
                page.get_by_role("heading", name="Response detail").wait_for()
                runs.settled()
                page.get_by_test_id("stMetricValue").first.wait_for()

            def filter_change() -> None:
                """A use case chosen in the filter (a query no cache has seen)."""
                box = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("Use case", exact=True))
                field = box.locator("input")
                field.click()
                field.press_sequentially(args.use_case)
                runs.arm()
                field.press("Enter")  # the first use case matching what was typed
                page.keyboard.press("Escape")
                runs.settled()
                page.get_by_test_id("stMetricValue").first.wait_for()

            def choose_version(label: str) -> None:
                """A profile version chosen in the filter: ``label`` is its option ("Version 5", "Current scores")."""
                box = page.get_by_test_id("stSelectbox").filter(has=page.get_by_text("Profile version", exact=True))
                option = page.get_by_role("option", name=label, exact=True)
                for _ in range(5):  # a rerun still drawing the sidebar can close the list as it opens: open again
                    box.get_by_role("combobox").click()  # the control itself: the box's middle may be its label
                    try:
                        option.wait_for(timeout=5_000)
                        break
                    except PlaywrightTimeout:
                        page.keyboard.press("Escape")
                runs.arm()
                start_timing()  # from the choice: opening the list is the person's part
                option.click()
                runs.settled()
                page.get_by_test_id("stMetricValue").first.wait_for()

            views: list[tuple[str, Callable[[], None]]] = [("overview", login)]
            if previous is not None:  # the version before the active one, on the overview (then back, untimed)
                views.append(("profile version", lambda: choose_version(f"Version {previous}")))
            views += [
                ("filter change", filter_change),
                ("responses", visit("Responses", "Responses", lambda: page.get_by_test_id("stDataFrame").first
                                    .wait_for())),
                ("search", search),
                ("detail", detail),
                ("review queue", visit("Review queue", "Review queue")),
                ("queue -> detail", detail_from_queue),
                ("floor", visit("Labelling rubric", "Labelling rubric")),  # last: the filters are on console pages
            ]
            print(f"{'view':<16}{'visit':>6}{'wall s':>9}{'server cpu s':>14}{'rss MB':>9}{'peak MB':>9}"
                  f"{'target':>9}", flush=True)
            walls: dict[tuple[str, int], float] = {}
            for visit_no in range(args.repeat):
                for name, go in views:
                    if name in ("filter change", "profile version") and visit_no:
                        continue  # a new filter is cold by nature: measured on the first round only
                    if name == "overview" and visit_no:
                        go = visit("Overview", "Overview", lambda: page.get_by_test_id("stMetricValue").first
                                   .wait_for())
                    cpu0, _, _ = _proc_stats(server.pid)
                    start = time.perf_counter()
                    try:
                        go()
                    except Exception:
                        if args.shots:
                            page.screenshot(path=str(args.shots / f"failed-{name}.png"), full_page=True)
                        raise
                    wall = time.perf_counter() - timed.pop("start", start)
                    cpu0 = timed.pop("cpu", cpu0)
                    if args.shots:
                        page.screenshot(path=str(args.shots / f"{name}-{visit_no}.png"), full_page=True)
                    cpu1, rss, peak = _proc_stats(server.pid)
                    if name == "profile version":
                        choose_version("Current scores")  # the views after it read the current scores
                        timed.pop("start"), timed.pop("cpu")  # (untimed)
                    walls[name, visit_no] = wall
                    kind = "cold" if visit_no == 0 else "warm"
                    print(f"{name:<16}{kind:>6}{wall:9.2f}{cpu1 - cpu0:14.2f}{rss:9.0f}{peak:9.0f}"
                          f"{'< ' + format(TARGETS[name], 'g') + ' s':>9}", flush=True)
            browser.close()
        print("ratio to the floor (a page that reads almost nothing, the Labelling rubric, in the same round):")
        for (name, visit_no), wall in walls.items():
            if name != "floor":
                print(f"  {name:<16}{'cold' if visit_no == 0 else 'warm':>6}{wall / walls['floor', visit_no]:9.1f}x")
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finished = True
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        if finished:  # the server's log is kept only to read why a run failed
            os.unlink(log.name)
        else:
            print(f"the console's log: {log.name}", file=sys.stderr)


if __name__ == "__main__":
    main()
