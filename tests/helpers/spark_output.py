"""What the Spark score job writes, made without a JVM: the tests of ``import_scores`` and of the console's
profile-version view import its output as a Spark run."""

from __future__ import annotations

from register.scoring.scorer import fired_floors_query, score_query
from tests.helpers.strategies import AS_OF


def job_output(store, profile, folder, *, fingerprint: str | None = None):
    """What ``register/spark/score_job.py`` writes, computed by the DuckDB scorer: scores/ (with the
    profile version, fingerprint and as-of time) and score_floors/, each with Spark's _SUCCESS marker."""
    for name, (sql, params), extra in (
            ("scores", score_query(profile, AS_OF), ", $v AS profile_version, $f AS profile_fingerprint, "
                                                   "CAST($t AS TIMESTAMPTZ) AS as_of"),
            ("score_floors", fired_floors_query(profile, AS_OF), "")):
        (folder / name).mkdir(parents=True)
        target = str(folder / name / "part-00000.parquet").replace("'", "''")
        bound = {**params, "v": profile.version, "f": fingerprint or profile.fingerprint(), "t": AS_OF} if extra \
            else params
        with store.cursor() as cur:
            cur.execute(f"COPY (SELECT *{extra} FROM ({sql})) TO '{target}' (FORMAT parquet)", bound)
        (folder / name / "_SUCCESS").write_text("", encoding="utf-8")
