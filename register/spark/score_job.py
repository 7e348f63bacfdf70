"""Score a Parquet export of the register on Spark, with the register's own scoring statement.

    spark-submit --py-files hri-scoring.zip register/spark/score_job.py \\
        --input EXPORT_DIR --profile EXPORT_DIR/profile.json --as-of 2026-12-01T00:00:00Z --output SCORES_DIR

``EXPORT_DIR`` is what ``python -m register export-parquet`` wrote (``responses/`` and ``claims/``,
Parquet); the profile is a scoring profile as JSON (the export writes the active one beside the data).
The job generates the scorer's SELECT with ``register.scoring.scorer.score_query(..., dialect=SPARK)`` --
the statement the register runs in DuckDB, spelled for Spark, every number a bound ``:name``
parameter -- and writes ``SCORES_DIR/scores/`` (one row per current response, with the profile
version, its fingerprint and the as-of time) and ``SCORES_DIR/score_floors/`` (every floor that
fired), as Parquet, for ``python -m register import-scores SCORES_DIR``.

Only the driver runs Python (it builds the statement); executors run plain Spark SQL, no Python UDF,
so they need nothing but Spark. The driver needs ``hri_core`` and ``register`` (shipped in the zip)
and their pinned dependencies (docs/spark.md, "What runs where").
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from typing import Any

from hri_core import ScoringProfile
from register.scoring.scorer import SPARK, fired_floors_query, score_query

# The score columns the scorer's SELECT yields, in its order. The mitigation columns of ``scores`` are not
# among them: ``import-scores`` decides them in the register (``register.scoring.mitigation``), as ``rescore`` does.
SCORE_COLUMNS = ("response_id", "revision", "s_f", "s_c", "s_u", "s_o", "s_s", "s_p", "s_h", "hri_add", "hri",
                 "score", "band", "action", "no_claims", "total_criticality", "floors_fired", "decisive_claim_id",
                 "decisive_rule_id", "scoring_failure", "action_floor_claim_id", "action_floor_rule_id")
FLOOR_COLUMNS = ("response_id", "revision", "claim_idx", "claim_id", "rule_id", "label", "criticality", "value")


def parse_as_of(text: str) -> datetime:
    """An ISO 8601 time; without a zone it is UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SystemExit(f"--as-of {text!r} is not an ISO 8601 time (e.g. 2026-12-01T00:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def read_profile(text: str) -> ScoringProfile:
    """A complete scoring profile (name and version included) from its JSON text."""
    return ScoringProfile.model_validate(json.loads(text))


def register_views(spark: Any, input_dir: str) -> None:
    """The export's ``responses`` and ``claims`` as the temporary views the statement reads."""
    for table in ("responses", "claims"):
        spark.read.parquet(f"{input_dir.rstrip('/')}/{table}").createOrReplaceTempView(table)


def score_frames(spark: Any, profile: ScoringProfile, as_of: datetime) -> tuple[Any, Any]:
    """The score rows and the fired floors of every current response in the views, as DataFrames.

    The score rows carry ``profile_version``, ``profile_fingerprint`` and ``as_of`` so that an import
    knows exactly what produced them."""
    from pyspark.sql import functions as F  # noqa: N812 - the usual name

    sql, params = score_query(profile, as_of, dialect=SPARK)
    scores = spark.sql(f"SELECT {', '.join(SCORE_COLUMNS)} FROM ({sql}) AS scored", args=params)
    scores = scores.select(*SCORE_COLUMNS,
                           F.lit(profile.version).cast("int").alias("profile_version"),
                           F.lit(profile.fingerprint()).alias("profile_fingerprint"),
                           F.lit(as_of).cast("timestamp").alias("as_of"))
    sql, params = fired_floors_query(profile, as_of, dialect=SPARK)
    floors = spark.sql(f"SELECT {', '.join(FLOOR_COLUMNS)} FROM ({sql}) AS fired", args=params)
    return scores, floors


def run(spark: Any, input_dir: str, profile: ScoringProfile, as_of: datetime, output_dir: str) -> None:
    """Score ``input_dir`` and write ``output_dir/scores`` and ``output_dir/score_floors`` (refusing to
    overwrite: a half-replaced result would mix two runs)."""
    # timestamps as UTC instants (Parquet's isAdjustedToUTC), not Spark's legacy INT96
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    register_views(spark, input_dir)
    scores, floors = score_frames(spark, profile, as_of)
    out = output_dir.rstrip("/")
    scores.write.mode("errorifexists").parquet(f"{out}/scores")
    floors.write.mode("errorifexists").parquet(f"{out}/score_floors")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="score_job.py", description="Score a register Parquet export on Spark")
    parser.add_argument("--input", required=True, help="the export folder (responses/, claims/)")
    parser.add_argument("--profile", required=True, help="scoring profile JSON file (read by the driver)")
    parser.add_argument("--as-of", required=True, help="scoring time, ISO 8601 (UTC when no zone is given)")
    parser.add_argument("--output", required=True, help="folder to write scores/ and score_floors/ into")
    args = parser.parse_args(argv)
    with open(args.profile, encoding="utf-8") as handle:
        profile = read_profile(handle.read())
    as_of = parse_as_of(args.as_of)

    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"hri-score-v{profile.version}").getOrCreate()
    try:
        run(spark, args.input, profile, as_of, args.output)
    finally:
        spark.stop()
    print(f"scored {args.input} under profile v{profile.version} as of {as_of.isoformat()} into {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
