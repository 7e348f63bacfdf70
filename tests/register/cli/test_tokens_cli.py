"""``python -m register tokens create|list|revoke`` (issue 35, item 2): the JSON contract of ``create --json`` (one
object with the token, printed once), the human sentence without it, lists without secrets, revocation, and the
exit codes of the other commands (0; 1 with ``title: message``; 64 for usage errors)."""

from __future__ import annotations

import json

import pytest

from register import Store
from register.access.api_tokens import TOKEN_PATTERN, authenticate
from register.errors import TokenRejected
from tests.helpers.cli import run_module


@pytest.fixture
def run(register_cli):
    """``python -m register ARGS`` in this process, acting as 'Casey CLI', with the account ``alice`` (reviewer)."""
    runner = register_cli("Casey CLI")
    assert runner("users", "add", "alice", "--role", "reviewer").returncode == 0
    return runner


def _authenticates(db, token: str):
    store = Store(db)
    try:
        return authenticate(store, token, client="cli-test")
    finally:
        store.close()


def test_create_json_prints_one_object_with_the_token_that_authenticates(run):
    made = run("tokens", "create", "--user", "alice", "--expires-days", "30", "--name", "nightly import", "--json")
    assert made.returncode == 0, made.stderr
    printed = json.loads(made.stdout)  # the whole of stdout is one JSON object
    assert list(printed) == ["token", "token_id", "username", "expires_at"]
    assert TOKEN_PATTERN.fullmatch(printed["token"]).group(1) == printed["token_id"]
    assert printed["username"] == "alice" and printed["expires_at"].endswith("+00:00")
    assert _authenticates(run.db, printed["token"]).name == "alice"
    listed = run("tokens", "list", "--json")
    (token,) = json.loads(listed.stdout)
    assert (token["token_id"], token["name"], token["created_by"], token["status"]) == (
        printed["token_id"], "nightly import", "Casey CLI", "active")
    assert token["expires_at"] == printed["expires_at"]
    secret = TOKEN_PATTERN.fullmatch(printed["token"]).group(2)
    assert secret not in listed.stdout and secret not in run("tokens", "list").stdout  # shown once only


def test_create_without_json_says_it_is_shown_once(run):
    made = run("tokens", "create", "--user", "alice")
    assert made.returncode == 0, made.stderr
    (token,) = [word for word in made.stdout.split() if word.startswith("hri_")]
    assert TOKEN_PATTERN.fullmatch(token)
    assert "shown only now" in made.stdout and "Authorization: Bearer TOKEN" in made.stdout


def test_list_and_revoke(run):
    first = json.loads(run("tokens", "create", "--user", "alice", "--json").stdout)
    assert run("users", "add", "bob", "--role", "viewer").returncode == 0
    json.loads(run("tokens", "create", "--user", "bob", "--json").stdout)
    everyone = json.loads(run("tokens", "list", "--json").stdout)
    assert sorted(t["username"] for t in everyone) == ["alice", "bob"]
    assert {t["username"] for t in json.loads(run("tokens", "list", "--user", "bob", "--json").stdout)} == {"bob"}
    assert "secret_hash" not in everyone[0]

    revoked = run("tokens", "revoke", first["token_id"])
    assert (revoked.returncode, revoked.stdout.strip()) == (0, f"API token {first['token_id']}: revoked")
    with pytest.raises(TokenRejected):
        _authenticates(run.db, first["token"])
    lines = run("tokens", "list", "--user", "alice").stdout.splitlines()
    assert lines[0].split("\t")[:3] == [first["token_id"], "alice", "revoked"]
    again = run("tokens", "revoke", first["token_id"])
    assert again.returncode == 1
    assert again.stderr.startswith(f"API token not changed: token_id: API token {first['token_id']} was revoked "
                                   "already, by Casey CLI")
    assert run("tokens", "list", "--user", "nobody").stdout.strip() == "no API tokens of 'nobody'"
    assert run("tokens", "list", "--user", "nobody", "--json").stdout.strip() == "[]"


@pytest.mark.parametrize("args, message", [
    (("tokens", "create", "--user", "nobody", "--json"), "Not found: user 'nobody' does not exist"),
    (("tokens", "create", "--user", "alice", "--expires-days", "9999"),
     "API token not changed: expires_days: 9999 is not between 1 and 365 days (HRI_TOKEN_MAX_DAYS)"),
    (("tokens", "create", "--user", "alice", "--name", "tab\there"), "API token not changed: name: holds a control"),
    (("tokens", "revoke", "0123456789ab"), "Not found: API token '0123456789ab' does not exist"),
])
def test_refusals_exit_1_with_title_and_message_and_print_no_token(run, args, message):
    refused = run(*args)
    assert refused.returncode == 1
    assert refused.stderr.startswith(message) and refused.stderr.count("\n") == 1
    assert refused.stdout == ""


@pytest.mark.parametrize("args", [
    ("tokens",), ("tokens", "create"), ("tokens", "create", "--user", "alice", "--expires-days", "0"),
    ("tokens", "create", "--user", "alice", "--expires-days", "ten"), ("tokens", "revoke"),
    ("tokens", "list", "--all"),
])
def test_usage_errors_exit_64(run, args):
    refused = run(*args)
    assert refused.returncode == 64 and "Usage error" in refused.stderr and refused.stdout == ""


def test_the_json_contract_as_a_shell_sees_it(run):
    """A pipeline's set-up step: ``python -m register tokens create ... --json`` in a process of its own."""
    made = run_module("register", "tokens", "create", "--user", "alice", "--json", env={"HRI_DB": str(run.db)})
    assert made.returncode == 0, made.stderr
    assert TOKEN_PATTERN.fullmatch(json.loads(made.stdout)["token"])
