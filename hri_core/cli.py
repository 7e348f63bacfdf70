"""``python -m hri_core``: pure scoring from the command line (no database).

    python -m hri_core score INPUT [--profile FILE] [--as-of ISO_TIME]
    python -m hri_core ahp MATRIX.json
    python -m hri_core agreement RATINGS.csv --level nominal|ordinal|interval|ratio
    python -m hri_core ragmetrics CHECKED.json
    python -m hri_core fit-weights OUTCOMES.jsonl [--json]        (hri_core.cli_outcomes)
    python -m hri_core compare-aggregations OUTCOMES.jsonl [--json]

INPUT is JSON Lines (``.jsonl``/``.json``) or a flat CSV claim table (``.csv``); ``-`` reads JSON
Lines from standard input. One JSON object per scored response goes to stdout; every invalid record
(a JSON Lines line that is not UTF-8 or not strict JSON included) is reported on stderr with its line
and field, every valid one is still scored, and the exit code is 2 when any record was invalid. A file
that cannot be read as a whole (missing, a folder, UTF-16 or binary, a CSV with a NUL byte or a quoted
field never closed) is named on stderr with exit code 1; bad options exit 64. No input ends in a
traceback.

``ahp`` reads ``{"matrix": [[...], ...]}``, a 7x7 pairwise comparison matrix over F, C, U, O, S, P, H
(Saaty's 1-9 scale), and prints one JSON object with the eigenvector ``weights``, ``lambda_max``,
``ci``, ``cr``, ``acceptable`` (CR <= 0.10) and the most ``inconsistent`` judgements when not
acceptable. An invalid matrix is reported on stderr cell by cell, with exit code 2.

``agreement`` reads a CSV with the columns ``unit,rater,value`` (one row per rating; extra columns
ignored; a BOM is fine) and prints one JSON object: ``alpha`` (Krippendorff's, at ``--level``),
``kappa`` (Cohen's, unweighted, only when there are exactly two raters), ``units``, ``raters``,
``pairable`` and, when alpha or kappa is undefined (``null``), a ``note`` saying why. Bad rows are
reported on stderr by row number (header = row 1) and field, with exit code 2; a missing file exits 1.

``ragmetrics`` reads RAGChecker's checked results (``{"results": [...]}``) and prints the metrics as
RAGChecker's own ``metrics`` object: ``{"overall": ..., "retriever": ..., "generator": ...}`` in
percent with one decimal. Bad input is reported by query and field with exit code 2; a missing file
exits 1; checks a query lacks are named on stderr (the metrics that need them are 0).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from .agreement import LEVELS, cohen_kappa, krippendorff_alpha
from .agreement.rows import ratings_from_rows
from .ahp import analyse_matrix, weights_to_profile_dict
from .errors import FieldProblem, HRIError, ProfileError, RecordError
from .models import parse_response
from .profile import ScoringProfile, default_profile, profile_from_dict
from .ragmetrics import aggregate_metrics, parse_checked_results, query_metrics
from .readers import decode_json, iter_csv, iter_jsonl, unclosed_quote_line
from .scoring import score_response

EXIT_OK, EXIT_NO_FILE, EXIT_INVALID_RECORDS, EXIT_USAGE = 0, 1, 2, 64


def _parse_as_of(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"--as-of {text!r} is not an ISO 8601 time (e.g. 2026-12-01T00:00:00Z)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def load_profile_file(path: str | None) -> ScoringProfile:
    """Read a (possibly partial) profile JSON file; the paper's defaults fill what it leaves out."""
    if path is None:
        return default_profile()
    data, problems = decode_json(Path(path).read_text(encoding="utf-8"))
    if problems:
        raise ProfileError(problems)
    return profile_from_dict(data)


def report(error: HRIError, where: str, stream: TextIO) -> None:
    """The single place that renders a record error for the terminal."""
    for problem in error.problems:
        field = problem.loc or "(record)"
        print(f"{where}: {field}: {problem.message}", file=stream)


class Unreadable(Exception):
    """The input file cannot be read as a whole (missing, a folder, UTF-16, binary, an unclosed quote)."""


# Stands for a line that is not UTF-8 (no JSON starts with a NUL): iter_jsonl refuses it, _records says why.
_UNDECODABLE_LINE = "\x00 not UTF-8"


def _jsonl_lines(handle: BinaryIO) -> Iterator[str]:
    """Lines decoded one by one, so that a line that is not UTF-8 is reported alone."""
    for data in handle:
        try:
            yield data.decode("utf-8")
        except UnicodeDecodeError:
            yield _UNDECODABLE_LINE


def _check_text_head(path: str, head: bytes) -> None:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        raise Unreadable(f"{path}: not UTF-8 text (UTF-16 or binary: NUL bytes); save it as UTF-8")


def _records(path: str) -> Iterator[tuple[str, dict[str, Any] | RecordError]]:
    if path == "-":
        for line, _raw, record in iter_jsonl(sys.stdin):
            yield f"line {line}", record
        return
    try:
        with open(path, "rb") as handle:
            _check_text_head(path, handle.read(8192))
            handle.seek(0)
            if Path(path).suffix.lower() == ".csv":
                text = _csv_text(path, handle.read())
                for rows, _raw, record in iter_csv(io.StringIO(text, newline="")):
                    yield ("row " if len(rows) == 1 else "rows ") + ",".join(map(str, rows)), record
                return
            for line, raw, record in iter_jsonl(_jsonl_lines(handle)):
                if raw == _UNDECODABLE_LINE:
                    record = RecordError([FieldProblem("", "the line is not valid UTF-8 text")])
                yield f"line {line}", record
    except OSError as error:
        raise Unreadable(f"{path}: cannot read: {error.strerror or error}") from error


def _csv_text(path: str, data: bytes) -> str:
    """The CSV's text: UTF-8 (a BOM dropped), no NUL, every quoted field closed -- or ``Unreadable``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise Unreadable(f"{path}: line {line}: not UTF-8 text ({error.reason})") from None
    if "\x00" in text:
        nul_line = text[:text.index("\x00")].count("\n") + 1
        raise Unreadable(f"{path}: line {nul_line}: a NUL byte: binary data or a damaged file")
    if text.count('"') % 2:
        open_line = unclosed_quote_line(io.StringIO(text, newline=""))
        if open_line is not None:
            raise Unreadable(f"{path}: line {open_line}: a quoted field opened here is never closed")
    return text


def cmd_score(args: argparse.Namespace) -> int:
    profile = load_profile_file(args.profile)
    as_of = _parse_as_of(args.as_of)
    invalid = scored = 0
    try:
        for where, record in _records(args.input):
            try:
                if isinstance(record, HRIError):
                    raise record
                response = parse_response(record)
            except HRIError as error:
                invalid += 1
                rid = record.get("response_id") if isinstance(record, dict) else None
                report(error, f"{args.input}:{where}" + (f" (response_id={rid})" if rid else ""), sys.stderr)
                continue
            print(json.dumps(score_response(response, profile, as_of).to_output()))
            scored += 1
    except Unreadable as error:
        print(f"{error}; scored {scored} response(s) before it", file=sys.stderr)
        return EXIT_NO_FILE
    print(f"scored {scored} response(s), {invalid} invalid record(s)", file=sys.stderr)
    return EXIT_INVALID_RECORDS if invalid else EXIT_OK


def cmd_ahp(args: argparse.Namespace) -> int:
    """Weights and consistency of one expert's AHP matrix over the seven dimensions."""
    text = Path(args.matrix).read_text(encoding="utf-8")
    try:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise HRIError([FieldProblem(f"line {error.lineno}", f"malformed JSON: {error.msg}")]) from error
        if not isinstance(data, dict) or "matrix" not in data:
            raise HRIError([FieldProblem("matrix", 'expected a JSON object {"matrix": [[...], ...]}')])
        result = analyse_matrix(data["matrix"])
    except HRIError as error:
        report(error, args.matrix, sys.stderr)
        return EXIT_INVALID_RECORDS
    output = {
        "weights": result.weights,
        "cr": result.cr,
        "ci": result.ci,
        "ri": result.ri,
        "lambda_max": result.lambda_max,
        "acceptable": result.acceptable,
        "inconsistent": [j.to_dict() for j in result.inconsistent],
        "profile": weights_to_profile_dict(result.weights),
    }
    print(json.dumps(output))
    return EXIT_OK


def _read_text(path: str) -> str | int:
    """The file's text (a BOM dropped), or the exit code after saying on stderr why there is none:
    1 when the file cannot be read, 2 when it is not UTF-8 text (bad input)."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        print(f"{path}: cannot read: {error.strerror or error}", file=sys.stderr)
        return EXIT_NO_FILE
    except UnicodeDecodeError as error:
        print(f"{path}: byte {error.start}: not UTF-8 text ({error.reason})", file=sys.stderr)
        return EXIT_INVALID_RECORDS


def cmd_agreement(args: argparse.Namespace) -> int:
    """Krippendorff's alpha (and Cohen's kappa for two raters) of a unit,rater,value CSV."""
    text = _read_text(args.ratings)
    if isinstance(text, int):
        return text
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        ratings, warnings = ratings_from_rows(reader.fieldnames, enumerate(reader, start=2), args.level)
        alpha = krippendorff_alpha(ratings, args.level)
        output: dict[str, object] = {"alpha": alpha.alpha}
        notes = [alpha.note] if alpha.note else []
        if alpha.raters == 2:
            kappa = cohen_kappa(ratings)
            output["kappa"] = kappa.kappa
            if kappa.note:
                notes.append(f"kappa: {kappa.note}")
    except HRIError as error:
        report(error, args.ratings, sys.stderr)
        return EXIT_INVALID_RECORDS
    for warning in warnings:
        print(f"{args.ratings}: {warning}", file=sys.stderr)
    output.update(units=alpha.units, raters=alpha.raters, pairable=alpha.pairable)
    if notes:
        output["note"] = "; ".join(notes)
    print(json.dumps(output, allow_nan=False))
    return EXIT_OK


def cmd_ragmetrics(args: argparse.Namespace) -> int:
    """RAGChecker's metrics recomputed from the per-claim labels of its checked results."""
    text = _read_text(args.checked)
    if isinstance(text, int):
        return text
    try:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise HRIError([FieldProblem(f"line {error.lineno}", f"malformed JSON: {error.msg}")]) from error
        queries = parse_checked_results(data)
        totals = aggregate_metrics([query_metrics(query) for query in queries])
    except HRIError as error:
        report(error, args.checked, sys.stderr)
        return EXIT_INVALID_RECORDS
    for query in queries:
        if query.missing:
            print(f"{args.checked}: query {query.query_id}: no {', '.join(query.missing)}; "
                  "the metrics that need them are 0", file=sys.stderr)
    print(json.dumps(totals, allow_nan=False))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m hri_core", description="Hallucination Risk Index scoring")
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="score responses from a JSON Lines or flat CSV file")
    score.add_argument("input", help="JSON Lines (.jsonl), flat CSV (.csv), or - for JSON Lines on stdin")
    score.add_argument("--profile", help="profile JSON file (partial files override only what they name)")
    score.add_argument("--as-of", help="scoring time, ISO 8601 (default: now); fixes feedback decay")
    score.set_defaults(func=cmd_score)
    ahp = sub.add_parser("ahp", help="AHP weights and consistency ratio of a 7x7 pairwise comparison matrix")
    ahp.add_argument("matrix", help='JSON file {"matrix": [[...], ...]} over F, C, U, O, S, P, H')
    ahp.set_defaults(func=cmd_ahp)
    agreement = sub.add_parser("agreement", help="inter-annotator agreement (Krippendorff's alpha, Cohen's kappa)")
    agreement.add_argument("ratings", help="CSV with the columns unit,rater,value (one row per rating)")
    agreement.add_argument("--level", choices=LEVELS, default="nominal",
                           help="level of measurement of the values (default: nominal)")
    agreement.set_defaults(func=cmd_agreement)
    ragmetrics = sub.add_parser("ragmetrics", help="RAGChecker's metrics from its checked results JSON")
    ragmetrics.add_argument("checked", help="RAGChecker's checking output ({\"results\": [...]})")
    ragmetrics.set_defaults(func=cmd_ragmetrics)
    # imported here: the outcome commands read their input with this module's readers
    from .cli_outcomes import add_outcome_commands
    add_outcome_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        exit_code: int = args.func(args)
        return exit_code
    except HRIError as error:
        report(error, getattr(args, "profile", None) or "error", sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError, RecursionError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as error:  # noqa: BLE001 - bad input must never end in a traceback
        print(f"error: unexpected {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_NO_FILE
