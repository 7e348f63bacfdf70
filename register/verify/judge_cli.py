"""``judge check`` and ``judge eval``: run a judge over PAIRS.jsonl, or score it against gold labels.

    python -m register judge check PAIRS.jsonl [--profile F] [--reasons]
    python -m register judge eval  PAIRS.jsonl [--profile F]
    (also stand-alone: python -m register.verify.judge_cli check|eval ...)

Input: JSON Lines, one pair a line: ``{"id", "claim", "evidence": [sentence or chunk, ...]}``; ``eval``
also needs ``label`` (SUPPORTED, PARTIAL, UNSUPPORTED or CONTRADICTED, any case) and takes an optional
``category`` for the per-category false clearance. ``-`` reads standard input.

``check`` prints one line per pair: ``{"id", "label", "confidence", "abstained"}`` (label null when the
judge abstains; ``--reasons`` adds ``reason``, ``evidence_index`` and ``profile``). ``eval`` prints one
JSON object: accuracy, macro-F1 (and the 3-way macro-F1 with CONTRADICTED counted as UNSUPPORTED),
the confusion matrix, coverage, false clearance overall, per gold label and per category, supported
recall and precision, the calibration error, the profile and the number of bad lines.

``--profile`` is a judge-profile JSON file or the name of one in ``data/judge_profiles/`` (default
``offline-default``: the lexical offline judge). A profile of backend ``offline-minilm`` needs the
MiniLM encoder (``register.verify.embeddings``); when it cannot load, the command fails (exit 1)
rather than judging without the feature its thresholds were fitted with.

Bad lines (not JSON, not an object, a missing or mistyped field, a duplicate id) are reported on
stderr as ``line N: field: problem``; the good lines are still judged. ``check`` fails closed: a bad
line whose id can be read (and is not a repeat) still gets its output line, abstained ("needs
review"), so that no pair silently drops out of a held-out run; ``eval`` leaves bad lines out. Exit
codes: 0 all lines good; 2 some lines bad; 1 the command could not run (file, profile or backend); 64 usage.

``eval`` gives false clearance, coverage and supported recall with their 95% Wilson intervals, and
macro-F1 with a 95% bootstrap interval (``macro_f1_ci95``; 1,000 resamples of the pairs, seeded).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from hri_core import HRIError
from hri_core.judging import (
    JUDGE_LABELS,
    Judge,
    JudgeProfile,
    Verdict,
    abstention,
    evaluate_verdicts,
    judge_profile_from_dict,
    macro_f1_interval,
)
from hri_core.offline_judge import OfflineJudge
from hri_core.readers import decode_object
from hri_core.vocabulary import Label
from register.errors import RegisterError

EXIT_OK, EXIT_FAILED, EXIT_BAD_LINES, EXIT_USAGE = 0, 1, 2, 64
PROFILE_DIR = Path(__file__).resolve().parents[2] / "data" / "judge_profiles"
DEFAULT_PROFILE = "offline-default"
BATCH = 256


class JudgeCommandError(RegisterError):
    """The judge command cannot run: unreadable file, invalid profile, unavailable backend."""

    title = "Judge command failed"


@dataclass(frozen=True)
class Pair:
    """One valid input line."""

    line: int
    id: str
    claim: str
    evidence: tuple[str, ...]
    label: Label | None
    category: str | None


@dataclass(frozen=True)
class LineProblem:
    """Why an input line was skipped."""

    line: int
    field: str
    message: str
    pair_id: str | None = None  # the line's id when it could be read: ``check`` still answers for it

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}" if self.field else f"line {self.line}: {self.message}"


def parse_pair(line_no: int, text: str, need_label: bool) -> Pair | list[LineProblem]:
    """A pair from one line of text, or every problem of the line (each naming its field)."""
    data, decoding = decode_object(text)  # strictly, as every import reads JSON (duplicate keys, NaN...)
    if data is None:
        return [LineProblem(line_no, p.loc, p.message) for p in decoding]
    problems: list[LineProblem] = []
    pair_id = data.get("id")
    if isinstance(pair_id, bool) or not isinstance(pair_id, (str, int)) or str(pair_id).strip() == "":
        problems.append(LineProblem(line_no, "id", "required: a non-empty string or integer"))
    claim = data.get("claim")
    if not isinstance(claim, str) or not claim.strip():
        problems.append(LineProblem(line_no, "claim", "required: a non-empty string"))
    evidence = data.get("evidence")
    if not isinstance(evidence, list):
        problems.append(LineProblem(line_no, "evidence", "required: a list of strings (sentences or chunks)"))
    else:
        for i, item in enumerate(evidence):
            if not isinstance(item, str):
                problems.append(LineProblem(line_no, f"evidence[{i}]", f"must be a string, got {type(item).__name__}"))
    label: Label | None = None
    raw_label = data.get("label")
    if need_label:  # ``check`` ignores gold labels, so a file can be checked and evaluated alike
        allowed = ", ".join(lab.value for lab in JUDGE_LABELS)
        if not isinstance(raw_label, str) or raw_label.strip().upper() not in {lab.value for lab in JUDGE_LABELS}:
            required = "required: " if raw_label is None else ""
            problems.append(LineProblem(line_no, "label", f"{required}one of {allowed}"))
        else:
            label = Label(raw_label.strip().upper())
    category = data.get("category")
    if category is not None and not isinstance(category, str):
        problems.append(LineProblem(line_no, "category", "must be a string when given"))
    if problems:
        if not any(p.field == "id" for p in problems):
            problems = [LineProblem(p.line, p.field, p.message, str(pair_id)) for p in problems]
        return problems
    assert isinstance(claim, str) and isinstance(evidence, list)  # narrowed by the checks above
    return Pair(line_no, str(pair_id), claim, tuple(evidence), label, category)


def read_pairs(lines: Iterable[str], need_label: bool) -> Iterator[Pair | list[LineProblem]]:
    """Parsed pairs or the problems of each non-blank line; a repeated id is a problem of its later line."""
    seen: dict[str, int] = {}
    for line_no, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        result = parse_pair(line_no, text, need_label)
        pair_id = result.id if isinstance(result, Pair) else next((p.pair_id for p in result if p.pair_id), None)
        if pair_id is not None:
            if pair_id in seen:
                yield [LineProblem(line_no, "id", f"duplicate of line {seen[pair_id]}")]
                continue
            seen[pair_id] = line_no
        yield result


def load_profile(reference: str | None) -> JudgeProfile:
    """A profile from a JSON file path, or by name from ``data/judge_profiles/``."""
    reference = reference or DEFAULT_PROFILE
    path = Path(reference)
    if not path.is_file():
        named = PROFILE_DIR / f"{reference}.json"
        if not named.is_file():
            known = ", ".join(sorted(p.stem for p in PROFILE_DIR.glob("*.json")))
            raise JudgeCommandError(f"no judge profile {reference!r}: not a file, nor one of {known}")
        path = named
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise JudgeCommandError(f"cannot read judge profile {path.name}: {error}") from error
    if not isinstance(data, dict):
        raise JudgeCommandError(f"judge profile {path.name}: expected a JSON object")
    return judge_profile_from_dict(data)


def judge_for(profile: JudgeProfile) -> Judge:
    """The judge that runs ``profile``'s backend."""
    if profile.backend == "offline-lexical":
        return OfflineJudge(profile)
    if profile.backend == "offline-minilm":
        from register.verify.embeddings import load_encoder  # optional dependency, loaded only when asked

        return OfflineJudge(profile, load_encoder().similarity)
    if profile.backend == "llm":
        from register.verify.llm_judge import llm_judge_from_settings  # configured from HRI_LLM_* when asked

        return llm_judge_from_settings(profile)
    raise JudgeCommandError(f"judge backend {profile.backend!r} of profile {profile.key} is not available here")


class _GoodPairs:
    """Iterates the good pairs in batches, reporting bad lines on ``errors`` and counting them."""

    def __init__(self, items: Iterable[Pair | list[LineProblem]], errors: IO[str], size: int = BATCH) -> None:
        self.items, self.errors, self.size, self.bad = items, errors, size, 0

    def __iter__(self) -> Iterator[list[Pair]]:
        batch: list[Pair] = []
        for item in self.items:
            if isinstance(item, Pair):
                batch.append(item)
                if len(batch) >= self.size:
                    yield batch
                    batch = []
            else:
                self.bad += 1
                for problem in item:
                    print(problem, file=self.errors)
        if batch:
            yield batch


def check(judge: Judge, lines: Iterable[str], out: IO[str], errors: IO[str], reasons: bool = False) -> int:
    """``judge check``: one verdict line per pair on ``out``, in input order; returns the number of bad lines.

    A bad line is reported on ``errors``; when its id can be read it still gets an output line, abstained
    (fail closed: a held-out run never loses a pair without saying so)."""
    bad = 0

    def write(pair_id: str, verdict: Verdict) -> None:
        line = verdict.to_line(pair_id)
        if reasons:
            line |= {"reason": verdict.reason, "evidence_index": verdict.evidence_index, "profile": verdict.profile,
                     "cited": list(verdict.cited), "cited_sentences": list(verdict.cited_sentences)}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")

    def flush(batch: list[Pair | str]) -> None:
        pairs = [item for item in batch if isinstance(item, Pair)]
        verdicts = iter(judge.judge_batch([(p.claim, p.evidence) for p in pairs]))
        for item in batch:
            if isinstance(item, Pair):
                write(item.id, next(verdicts))
            else:
                write(item, abstention(judge.profile, "needs review: the input line is malformed (see stderr)"))
        out.flush()

    batch: list[Pair | str] = []
    for item in read_pairs(lines, need_label=False):
        if isinstance(item, Pair):
            batch.append(item)
        else:
            bad += 1
            for problem in item:
                print(problem, file=errors)
            if item and item[0].pair_id is not None:
                batch.append(item[0].pair_id)
        if len(batch) >= BATCH:
            flush(batch)
            batch = []
    if batch:
        flush(batch)
    return bad


def evaluate(judge: Judge, lines: Iterable[str], errors: IO[str]) -> tuple[dict[str, Any], int]:
    """``judge eval``: the metrics as a JSON-ready dict, and the number of bad lines."""
    pairs: list[Pair] = []
    predicted: list[Label | None] = []
    confidences: list[float] = []
    good = _GoodPairs(read_pairs(lines, need_label=True), errors)
    for batch in good:
        verdicts = judge.judge_batch([(p.claim, p.evidence) for p in batch])
        pairs.extend(batch)
        predicted.extend(v.label for v in verdicts)
        confidences.extend(v.confidence for v in verdicts)
    gold = [p.label for p in pairs if p.label is not None]
    categories = [p.category for p in pairs]
    report = evaluate_verdicts(gold, predicted, categories if any(categories) else None, confidences).as_dict()
    merged = [Label.UNSUPPORTED if g is Label.CONTRADICTED else g for g in gold]
    report["macro_f1_ci95"] = [round(v, 4) for v in macro_f1_interval(gold, predicted)]
    report["macro_f1_3way"] = round(evaluate_verdicts(merged, predicted).macro_f1, 4)
    report["macro_f1_3way_ci95"] = [round(v, 4) for v in macro_f1_interval(merged, predicted)]
    report["profile"] = judge.profile.key
    report["backend"] = judge.profile.backend
    report["bad_lines"] = good.bad
    return report, good.bad


def _open_lines(path: str) -> Iterator[str]:
    if path == "-":
        yield from sys.stdin
        return
    try:
        with open(path, encoding="utf-8") as handle:
            yield from handle
    except (OSError, UnicodeDecodeError) as error:
        raise JudgeCommandError(f"cannot read {path}: {error}") from error


def run(args: argparse.Namespace) -> int:
    """Run ``judge check`` or ``judge eval`` from parsed arguments (see ``add_subparser``)."""
    try:
        judge = judge_for(load_profile(args.profile))
        lines = _open_lines(args.pairs)
        if args.judge_command == "check":
            bad = check(judge, lines, sys.stdout, sys.stderr, reasons=args.reasons)
        else:
            report, bad = evaluate(judge, lines, sys.stderr)
            print(json.dumps(report, indent=2))
    except (RegisterError, HRIError) as error:
        print(f"{getattr(error, 'title', 'Error')}: {error}", file=sys.stderr)
        return EXIT_FAILED
    if bad:
        print(f"{bad} line(s) skipped" if args.judge_command == "eval"
              else f"{bad} line(s) skipped (answered as needs review when their id could be read)", file=sys.stderr)
    return EXIT_BAD_LINES if bad else EXIT_OK


def add_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``judge check`` / ``judge eval`` to a CLI's subparsers.

    Sets ``func`` to a ``(store, args)`` adapter for ``register.cli``'s dispatch and ``needs_store=False``:
    the judge commands never open the database, so the wiring should skip opening it.
    """
    judge: argparse.ArgumentParser = subparsers.add_parser("judge", help="run or evaluate a claim judge on PAIRS.jsonl")
    commands = judge.add_subparsers(dest="judge_command", required=True)
    for name, text in (("check", "print one verdict line per pair"),
                       ("eval", "compare verdicts with the pairs' gold labels; print the metrics as JSON")):
        command = commands.add_parser(name, help=text)
        command.add_argument("pairs", metavar="PAIRS.jsonl", help="JSON Lines of pairs ('-' for stdin)")
        command.add_argument("--profile", help=f"judge profile file or name (default {DEFAULT_PROFILE})")
        if name == "check":
            command.add_argument("--reasons", action="store_true", help="add reason, evidence_index and profile")
        command.set_defaults(func=lambda _store, args: run(args), needs_store=False)
    return judge


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # usage errors exit 64 like register.cli
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m register.verify.judge_cli check|eval PAIRS.jsonl``."""
    parser = _Parser(prog="python -m register.verify.judge_cli", description="Run or evaluate a claim judge.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    add_subparser(sub)
    # Accept both "judge check ..." and the shorter "check ...".
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in ("check", "eval"):
        args_list.insert(0, "judge")
    return run(parser.parse_args(args_list))


if __name__ == "__main__":
    sys.exit(main())
