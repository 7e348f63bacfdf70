"""Publishing is one step that completes or is resumed (``register.scoring.publishes``, migration 040).

A publish is two transactions: the draft made active, then every current response rescored under it. A process
killed between them left the new version active while every score stayed under the old one, and ``status`` said
nothing. Now the activation records the publish as pending, ``status`` names it, and a full rescore under the
version (``rescore``, or the same publish again) completes it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from datetime import UTC, datetime

import pytest

from hri_core import profile_from_dict
from register import RegisterError, Store
from register.scoring import profiles
from register.scoring.profiles import active_profile, create_draft, publish, resume_publish
from register.scoring.publishes import incomplete_publish
from register.scoring.scorer import rescore
from tests.helpers.actors import ANN, BOB, enrol
from tests.helpers.paths import REPO_ROOT

AS_OF = datetime(2026, 12, 1, tzinfo=UTC)
WEIGHTS = {"weights": {"F": 0.30, "C": 0.20, "U": 0.20, "O": 0.10, "S": 0.05, "P": 0.05, "H": 0.10}}

# the child publishes the draft as Bob and is killed the moment the activation has committed, before the rescore
_CHILD = """
import os, signal, sys
from register import Actor, Store
from register.scoring import profiles
store = Store(sys.argv[1])
profiles.rescore = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
profiles.publish(store, Actor(sys.argv[3], "admin"), int(sys.argv[2]), "new weights")
"""


def _score_versions(store: Store) -> dict[int, int]:
    return dict(store.query("SELECT profile_version, count(*) FROM scores WHERE is_current GROUP BY ALL"))


def test_a_publish_killed_between_its_steps_is_named_by_status_and_finished_by_rescore(database_templates,
                                                                                       register_cli):
    run = register_cli("Casey CLI")
    store = database_templates.open("demo50", run.db)
    enrol(store, ANN, BOB)
    version = create_draft(store, ANN, WEIGHTS)
    responses = store.scalar("SELECT count(*) FROM responses WHERE is_current")
    store.close()
    child = subprocess.run([sys.executable, "-c", _CHILD, str(run.db), str(version), BOB.name], cwd=REPO_ROOT,
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == -signal.SIGKILL, child.stderr

    status = run("status")
    assert status.returncode == 0 and f"active_profile_version: {version}" in status.stdout
    (line,) = [line for line in status.stdout.splitlines() if line.startswith("publish of")]
    assert line.startswith(f"publish of version {version} incomplete: scores are under version 1 (version "
                           f"{version} made active ")
    assert line.endswith(f"UTC by {BOB.name}; its rescore never ran); finish it: python -m register rescore")

    finished = run("rescore")
    assert finished.returncode == 0
    assert f"publish of version {version} complete: every current score is under it" in finished.stdout
    assert "publish of" not in run("status").stdout
    store = Store(run.db)
    try:
        assert _score_versions(store) == {version: responses}
        assert incomplete_publish(store) is None
    finally:
        store.close()
    assert run("audit", "verify").returncode == 0


def _crash_in_rescore(monkeypatch) -> None:
    def crash(*_args, **_kwargs):
        raise RuntimeError("the process stopped here")

    monkeypatch.setattr(profiles, "rescore", crash)


def test_publishing_the_same_version_again_resumes_it(demo_store, monkeypatch):
    version = create_draft(demo_store, ANN, WEIGHTS)
    with monkeypatch.context() as patched:
        _crash_in_rescore(patched)
        with pytest.raises(RuntimeError, match="stopped here"):
            publish(demo_store, BOB, version, "new weights", as_of=AS_OF)
    pending = incomplete_publish(demo_store)
    assert pending is not None and (pending.version, pending.scores_version, pending.published_by) == \
        (version, 1, BOB.name)
    assert pending.message() == f"publish of version {version} incomplete: scores are under version 1"
    assert active_profile(demo_store).version == version and set(_score_versions(demo_store)) == {1}

    summary = publish(demo_store, BOB, version, "new weights", as_of=AS_OF)  # no "only a draft" refusal: resumed
    assert summary.profile_version == version and incomplete_publish(demo_store) is None
    assert set(_score_versions(demo_store)) == {version}
    completed = demo_store.scalar("SELECT after FROM audit_events WHERE action = 'scores.rescore' "
                                  "ORDER BY seq DESC LIMIT 1")
    assert json.loads(completed)["completes_publish_of_version"] == version
    with pytest.raises(RegisterError, match="no publish is incomplete"):
        resume_publish(demo_store, BOB)


def test_only_a_full_rescore_under_the_published_version_completes_it(demo_store, monkeypatch):
    version = create_draft(demo_store, ANN, WEIGHTS)
    with monkeypatch.context() as patched:
        _crash_in_rescore(patched)
        with pytest.raises(RuntimeError):
            publish(demo_store, BOB, version, "new weights", as_of=AS_OF)
    batch = demo_store.scalar("SELECT min(batch_id) FROM responses WHERE is_current")
    rescore(demo_store, BOB, active_profile(demo_store), as_of=AS_OF, batch_id=batch)  # one batch: not the publish
    rescore(demo_store, BOB, profiles.get_profile(demo_store, 1), as_of=AS_OF)  # the old version: not either
    # the version's number with other parameters than those stored: not the published version's scores
    other = profile_from_dict({"weights": {**WEIGHTS["weights"], "F": 0.35, "C": 0.15}},
                              base=active_profile(demo_store))
    assert other.version == version
    rescore(demo_store, BOB, other, as_of=AS_OF)
    assert incomplete_publish(demo_store) is not None
    summary = resume_publish(demo_store, BOB, as_of=AS_OF)
    assert summary.profile_version == version and incomplete_publish(demo_store) is None


def test_a_second_publish_over_an_incomplete_one_says_where_the_scores_are(demo_store, monkeypatch):
    first = create_draft(demo_store, ANN, WEIGHTS)
    second = create_draft(demo_store, ANN, {"weights": {**WEIGHTS["weights"], "F": 0.35, "C": 0.15}})
    with monkeypatch.context() as patched:
        _crash_in_rescore(patched)
        for version in (first, second):
            with pytest.raises(RuntimeError):
                publish(demo_store, BOB, version, "new weights", as_of=AS_OF)
    pending = incomplete_publish(demo_store)
    assert pending is not None and (pending.version, pending.scores_version) == (second, 1)
    resume_publish(demo_store, BOB, as_of=AS_OF)
    assert incomplete_publish(demo_store) is None and set(_score_versions(demo_store)) == {second}


def test_the_spark_jobs_scores_of_every_current_response_complete_it_too(store, tmp_path, monkeypatch):
    """A large register's rescore may run on Spark (``import-scores``): a run that scored every current response
    under the published version completes its publish; one that scored only some does not."""
    from register.scoring.spark_exchange import import_scores
    from tests.helpers.parity import load
    from tests.helpers.spark_output import job_output

    load(store, [{"response_id": "r-1", "claims": [{"labels": ["CONTRADICTED"], "criticality": 3}]}])
    version = create_draft(store, ANN, WEIGHTS)
    with monkeypatch.context() as patched:
        _crash_in_rescore(patched)
        with pytest.raises(RuntimeError):
            publish(store, BOB, version, "new weights", as_of=AS_OF)
    job_output(store, active_profile(store), tmp_path / "partial")
    load(store, [{"response_id": "r-2", "claims": []}])  # scored at import, not by the job's output
    import_scores(store, BOB, tmp_path / "partial")
    assert incomplete_publish(store) is not None
    job_output(store, active_profile(store), tmp_path / "whole")
    import_scores(store, BOB, tmp_path / "whole")
    assert incomplete_publish(store) is None
