"""``python -m register`` while the console runs: the console's process holds the database, and each command is
handed to it and carried out there, with the output and exit code of the same command run directly.

One console for the module (``python -m register serve``, a real second process); the commands run in processes of
their own, as a person's would. The reference for "the same output" is the command run directly on a fresh copy of
the console's template database, which nothing holds. The tests write disjoint things (a new account, their own
answers), so that none changes what another compares.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import time
import urllib.request

import pytest

from tests.helpers.intake import MIXED_JSONL, outcome
from tests.helpers.paths import REPO_ROOT
from tests.register.cli.conftest import CONSOLE_TEMPLATE, register_in_process


@pytest.fixture
def direct(database_templates, tmp_path):
    """``direct(*args, cwd=)``: the command run directly on a fresh copy of the console's template database."""

    def run(*args: object, cwd=REPO_ROOT):
        db = database_templates.copy(CONSOLE_TEMPLATE, tmp_path / "direct" / "direct.duckdb")
        return register_in_process(db, *args, cwd=cwd)

    return run


def _answers(path, prefix: str, count: int):
    """``count`` valid answers of one claim each, ids ``prefix-N``, as JSON Lines at ``path``."""
    path.write_text("".join(json.dumps({"response_id": f"{prefix}-{n}", "use_case": "handoff", "model": "m",
                                        "claims": [{"labels": ["SUPPORTED"], "criticality": 1}]}) + "\n"
                            for n in range(count)), encoding="utf-8")
    return path


def test_users_list_prints_what_it_prints_directly_and_shows_an_account_added_meanwhile(running_console, direct):
    reference = direct("users", "list")
    listed = running_console.run("users", "list")
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, reference.stdout, "") and reference.returncode == 0
    added = running_console.run("users", "add", "second-admin", "--role", "admin")
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("created 'second-admin' (admin). One-time password (shown only now):\n\n    ")
    again = running_console.run("users", "list")
    assert again.returncode == 0
    added_line = "second-admin\tadmin\tactive\tsecond-admin"
    assert set(again.stdout.splitlines()) == {*reference.stdout.splitlines(), added_line}


def test_a_failing_command_exits_1_with_the_same_title_and_message(running_console, direct):
    reference = direct("users", "add", "test-admin", "--role", "admin")
    refused = running_console.run("users", "add", "test-admin", "--role", "admin")
    assert reference.returncode == refused.returncode == 1
    assert refused.stderr == reference.stderr == \
        "Invalid account data: the username 'test-admin' is taken: choose another\n"
    assert refused.stdout == reference.stdout == ""
    usage = running_console.run("users", "set-role", "test-admin", "emperor")  # caught here, never handed over
    assert usage.returncode == 64 and "Usage error" in usage.stderr


def test_an_import_named_relative_to_the_client_quarantines_and_reports_as_directly(running_console, direct, tmp_path):
    work = tmp_path / "work"  # the client's working directory; the console's is the repository
    work.mkdir()
    shutil.copyfile(MIXED_JSONL, work / "answers.jsonl")
    reference = direct("import", "answers.jsonl", "--json", "--quiet", cwd=work)
    handed = running_console.run("import", "answers.jsonl", "--json", "--quiet", cwd=work)
    assert handed.returncode == reference.returncode == 2, handed.stderr
    report, expected = json.loads(handed.stdout), json.loads(reference.stdout)
    assert set(report) == set(expected)
    assert outcome(report, store=None) == outcome(expected, store=None)
    assert report["quarantined"] == 4 and handed.stderr == ""


def test_an_export_to_a_relative_path_is_written_in_the_clients_directory(running_console, tmp_path):
    handed = running_console.run("export", "scores.csv", cwd=tmp_path)
    assert handed.returncode == 0, handed.stderr
    assert re.fullmatch(rf"wrote [\d,]+ score row\(s\) to {re.escape(str(tmp_path / 'scores.csv'))}\n", handed.stdout)
    assert (tmp_path / "scores.csv").read_text(encoding="utf-8").startswith("response_id,")
    assert not (REPO_ROOT / "scores.csv").exists()


def test_the_checklist_gate_exits_as_directly(running_console, direct):
    reference = direct("checklist", "run", "--fail-on", "violations", "--json")
    gate = running_console.run("checklist", "run", "--fail-on", "violations", "--json")
    results = json.loads(gate.stdout)
    assert results["summary"]["failed_checks"] == json.loads(reference.stdout)["summary"]["failed_checks"] == [7, 8, 9]
    assert gate.returncode == reference.returncode == 1  # a failed check fails the gate
    assert set(results) == set(json.loads(reference.stdout))
    report_only = running_console.run("checklist", "run", "--fail-on", "never", "--json")
    assert report_only.returncode == 0 and json.loads(report_only.stdout)["summary"] == results["summary"]


def test_rescore_and_audit_verify(running_console):
    rescored = running_console.run("rescore")
    assert rescored.returncode == 0, rescored.stderr
    assert re.fullmatch(r"score run \d+: [\d,]+ responses scored under profile v\d+ as of \S+\n", rescored.stdout)
    verified = running_console.run("audit", "verify")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("audit trail verifies: ")


def test_an_import_streams_its_progress_while_another_command_is_carried_out(running_console, tmp_path):
    answers = _answers(tmp_path / "stream.jsonl", "stream", 1000)
    importing = running_console.popen("import", answers, "--chunk-size", "10")
    first = importing.stderr.readline()
    assert re.fullmatch(r"  10/1,000  stream\.jsonl: 10 records, 10 accepted, 0 quarantined\n", first), first
    assert importing.poll() is None  # the first chunk's line came while the import went on
    listed = running_console.run("users", "list")  # a second command, carried out meanwhile
    still_importing = importing.poll() is None
    out, err = importing.communicate(timeout=300)
    assert importing.returncode == 0, err
    assert listed.returncode == 0 and all(re.fullmatch(r"[\w-]+\t\w+\t\w+\t.+", line)
                                          for line in listed.stdout.splitlines())
    assert still_importing, "the import ended before the second command was carried out: make it longer"
    assert out.splitlines()[-1] == "total: 1,000 records, 1,000 accepted, 0 quarantined"
    assert "\t" not in out and len(err.splitlines()) >= 100  # each command's own output, whole


def test_ctrl_c_ends_the_client_and_stops_its_command_not_the_console(running_console, tmp_path):
    answers = _answers(tmp_path / "interrupted.jsonl", "interrupted", 1000)
    importing = running_console.popen("import", answers, "--chunk-size", "10", env={"HRI_ACTOR": "handoff-tester"})
    assert importing.stderr.readline().startswith("  10/1,000  interrupted.jsonl")
    importing.send_signal(signal.SIGINT)
    _, err = importing.communicate(timeout=60)
    assert importing.returncode == 1
    assert err.splitlines()[-1].startswith("Interrupted: this command line stopped waiting. The console stops the "
                                           "command at its next line of output")
    assert "Traceback" not in err
    time.sleep(1)  # the console stops the import at its next chunk (a chunk takes a fraction of a second)
    stored = [_interrupted_batch(running_console.run("status"))]
    time.sleep(2)
    stored.append(_interrupted_batch(running_console.run("status")))  # the console answers; the import stays stopped
    assert stored[0] == stored[1] < 1000


def _interrupted_batch(status) -> int:
    """The records stored by the interrupted import, as ``status`` lists its unfinished batch."""
    assert status.returncode == 0, status.stderr
    found = re.search(r"batch \d+ interrupted\.jsonl: ([\d,]+) records stored .* by handoff-tester, never finished",
                      status.stdout)
    assert found, status.stdout
    return int(found.group(1).replace(",", ""))


def test_a_token_made_on_the_command_line_opens_the_running_consoles_api(running_console):
    """Commands added since the hand-off are covered by it without code of their own: ``tokens``."""
    made = running_console.run("tokens", "create", "--user", "test-reviewer", "--json")
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    request = urllib.request.Request(running_console.url + "/api/v1/queue",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        assert answer.status == 200
    listed = running_console.run("tokens", "list", "--user", "test-reviewer", "--json")
    assert listed.returncode == 0 and [t["username"] for t in json.loads(listed.stdout)] == ["test-reviewer"]
