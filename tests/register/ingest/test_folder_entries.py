"""A folder named to ``import`` is judged entry by entry as the inbox judges it: links and what is not a regular
file are refused unread and named in the report; every regular file is imported."""

from __future__ import annotations

import json
import os

from tests.helpers.paths import REPO_ROOT

DATA = REPO_ROOT / "tests" / "data" / "import"


def _secret_record(rid: str) -> str:
    record = json.loads((DATA / "responses.jsonl").read_text(encoding="utf-8").splitlines()[0])
    record["response_id"] = rid
    return json.dumps(record) + "\n"


def test_links_and_special_entries_in_a_folder_are_refused_unread(register_cli, tmp_path):
    run = register_cli("Casey CLI")
    assert run("init").returncode == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text(_secret_record("secret-by-symlink"), encoding="utf-8")
    (outside / "other.jsonl").write_text(_secret_record("secret-by-hard-link"), encoding="utf-8")
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "a_good.jsonl").write_bytes((DATA / "responses.jsonl").read_bytes())
    (folder / "b_link.jsonl").symlink_to(outside / "secret.jsonl")
    os.link(outside / "other.jsonl", folder / "c_hard.jsonl")
    os.mkfifo(folder / "d_pipe.jsonl")
    (folder / "e_dirlink.jsonl").symlink_to(outside, target_is_directory=True)

    result = run("import", str(folder), "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [b["source_name"] for b in report["batches"]] == ["a_good.jsonl"]
    assert report["records"] == 3 and report["accepted"] == 3
    notes = "\n".join(report["notes"])
    assert "b_link.jsonl: a symbolic link" in notes
    assert "c_hard.jsonl: a hard link" in notes
    assert "d_pipe.jsonl: a FIFO" in notes
    assert "e_dirlink.jsonl: a symbolic link" in notes
    from register import Store
    store = Store(run.db)
    try:
        stored = {rid for (rid,) in store.query("SELECT response_id FROM responses")}
        quarantined = store.query("SELECT count(*) FROM quarantine")[0][0]
    finally:
        store.close()
    assert not stored & {"secret-by-symlink", "secret-by-hard-link"}
    assert quarantined == 0
