"""The issue's "done when", end to end: a pipeline on the same machine, with a token, imports a file, reads an
answer's decision and runs the checklist over HTTP while two people use the console in Chromium, and
`python -m register users list` answers at the same time (handed to the console's process)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import httpx
import pytest

from tests.e2e.conftest import server_environment
from tests.helpers.browser import browser_login
from tests.helpers.paths import REPO_ROOT

pytestmark = pytest.mark.browser

ANSWERS = [
    {"response_id": "pipe-1", "use_case": "pipeline", "model": "m-pipe",
     "claims": [{"labels": ["SUPPORTED"], "criticality": 1}, {"labels": ["CONTRADICTED"], "criticality": 3}]},
    {"response_id": "pipe-2", "use_case": "pipeline", "model": "m-pipe",
     "claims": [{"labels": ["SUPPORTED"], "criticality": 1}]},
]


def test_a_pipeline_imports_reads_and_gates_over_http_while_two_people_work(start_app, chromium_browser, tmp_path):
    tokens: list[str] = []

    def prepare(db) -> None:
        from register import SYSTEM, Store
        from register.access.api_tokens import create_token
        from tests.e2e.conftest import create_accounts

        store = Store(db)
        try:
            create_accounts(store, {"e2e-pipeline": "reviewer"})
            tokens.append(create_token(store, SYSTEM, "e2e-pipeline").token)
        finally:
            store.close()

    server = start_app(prepare=prepare)
    url, db = server["url"], server["db"]
    headers = {"Authorization": f"Bearer {tokens[0]}"}
    body = "".join(json.dumps(a) + "\n" for a in ANSWERS) + '{"response_id": "pipe-broken", "claims": [\n'
    results: dict = {}

    def pipeline() -> None:
        try:
            with httpx.Client(base_url=f"{url}/api/v1", headers=headers, timeout=120) as api:
                imported = api.post("/imports", params={"filename": "nightly.jsonl"}, content=body.encode(),
                                    headers={"Content-Type": "application/x-ndjson"})
                results["import"] = (imported.status_code, imported.json())
                answer = api.get("/responses/pipe-1")
                results["answer"] = (answer.status_code, answer.json())
                gate = api.post("/checklist/runs", json={"record": False})
                results["gate"] = (gate.status_code, gate.json())
        except Exception as error:  # noqa: BLE001 - reported by the assertions below
            results["error"] = repr(error)

    def users_list() -> None:
        results["users"] = subprocess.run([sys.executable, "-m", "register", "--db", str(db), "users", "list"],
                                          cwd=REPO_ROOT, env=server_environment(), capture_output=True, text=True,
                                          timeout=180)

    reviewer = chromium_browser.new_context().new_page()
    admin = chromium_browser.new_context().new_page()
    try:
        browser_login(reviewer, url, "e2e-reviewer")
        browser_login(admin, url, "e2e-admin")
        workers = [threading.Thread(target=pipeline), threading.Thread(target=users_list)]
        for worker in workers:
            worker.start()
        # the two people go on working while the pipeline and the command line are served
        reviewer.goto(f"{url}/review")
        reviewer.get_by_role("heading", name="Review queue").wait_for(timeout=60_000)
        admin.goto(f"{url}/users")
        admin.get_by_role("heading", name="Users").wait_for(timeout=60_000)
        for worker in workers:
            worker.join(timeout=240)
        assert "error" not in results, results.get("error")
        status, report = results["import"]
        assert status == 200 and report["accepted"] == 2 and report["quarantined"] == 1, report
        status, answer = results["answer"]
        assert status == 200 and answer["score"]["decision"] in ("release", "caution", "review", "block")
        assert answer["score"]["decision_reasons"], answer["score"]
        status, gate = results["gate"]
        assert status == 201 and gate["passed"] is (not gate["failed_checks"])
        users = results["users"]
        assert users.returncode == 0 and "e2e-pipeline" in users.stdout and "e2e-admin" in users.stdout, users.stderr
        # both people are still signed in, and what the pipeline imported is in the console
        reviewer.goto(f"{url}/response?response_id=pipe-1")
        reviewer.get_by_role("heading", name="Response detail").wait_for(timeout=60_000)
        reviewer.get_by_text("m-pipe").first.wait_for(timeout=60_000)  # the imported answer's model
        admin.reload()
        admin.get_by_role("heading", name="Users").wait_for(timeout=60_000)
        # the accounts grid (a canvas: its cells are in the page for assistive technology, not visible)
        admin.locator("[role=gridcell]", has_text="e2e-pipeline").first.wait_for(state="attached", timeout=60_000)
    finally:
        reviewer.context.close()
        admin.context.close()
