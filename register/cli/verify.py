"""``judge check|eval``, ``verify``, ``judge-agreement`` and ``testset``: the claim judges (register.verify) from
the command line. ``judge`` is ``register.verify.judge_cli``'s own parser; the others store what they verify
as proposals and scored revisions, measure the judges against the people's decisions, or run the
critical-information test sets."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from register.cli.common import (
    EXIT_OK,
    EXIT_QUARANTINED,
    cli_actor,
    client_file_or_name,
    client_path,
    initialise,
    progress,
)
from register.db.store import Store
from register.errors import RegisterError
from register.settings import settings


def add_commands(sub) -> None:
    # --- claim judges (register.verify): `judge check|eval` open no database ---
    from register.verify.judge_cli import add_subparser as add_judge_subparser

    add_judge_subparser(sub)

    ver = sub.add_parser("verify", help="verify answers' claims against their retrieved context (proposals)")
    ver.add_argument("input", metavar="INPUT.jsonl", type=client_path,
                     help="JSON Lines: question, answer, retrieved_context, gt_answer")
    ver.add_argument("--profile", type=client_file_or_name, help="judge profile file or name (default offline-default)")
    ver.add_argument("--link-threshold", type=float, default=None,
                     help="least claim-word recall of a claim's best span; below it the claim is UNLINKED (0.5)")
    ver.add_argument("--json", action="store_true", help="print the report as JSON")
    ver.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    ver.set_defaults(func=cmd_verify)

    agr = sub.add_parser("judge-agreement", help="each judge against the people who decided its proposals")
    agr.add_argument("--json", action="store_true", help="print the agreement as JSON")
    agr.add_argument("--profile", type=client_file_or_name,
                     help="with --threshold: the judge profile to write the next version of")
    agr.add_argument("--threshold", type=float, help="the SUPPORTED threshold chosen from the curve")
    agr.add_argument("--out", type=client_path, help="with --threshold: the file to write the new profile version to")
    agr.set_defaults(func=cmd_judge_agreement)

    tst = sub.add_parser("testset", help="critical-information test sets: draft, save, export, run, report")
    tsub = tst.add_subparsers(dest="testset_command", required=True)
    tdraft = tsub.add_parser("draft", help="draft a set offline from the register (saved as the next version)")
    tdraft.add_argument("name")
    tdraft.add_argument("--llm", action="store_true",
                        help="have the LLM at HRI_LLM_URL (model HRI_LLM_MODEL) write the questions; the targets stay "
                             "the register's statements")
    tsave = tsub.add_parser("save", help="save edited items (JSON Lines) as the set's next version")
    tsave.add_argument("name")
    tsave.add_argument("file", type=client_path)
    tsave.add_argument("--note", default="", help="what changed")
    texp = tsub.add_parser("export", help="write a version's items as JSON Lines, to edit")
    texp.add_argument("name")
    texp.add_argument("file", type=client_path)
    texp.add_argument("--version", type=int)
    trun = tsub.add_parser("run", help="ask an assistant (or take --answers) and verify the answers")
    trun.add_argument("name")
    trun.add_argument("--version", type=int)
    trun.add_argument("--assistant-url", help="the assistant's OpenAI-compatible endpoint (key: $HRI_LLM_API_KEY_ENV)")
    trun.add_argument("--assistant-model", help="the assistant's model name")
    trun.add_argument("--answers", type=client_path,
                      help="instead: JSON Lines of {item_id, answer} (with --assistant-model as its name)")
    trun.add_argument("--profile", type=client_file_or_name, help="judge profile (default offline-default)")
    trep = tsub.add_parser("report", help="hallucination on the critical questions, per model and run")
    trep.add_argument("name", nargs="?")
    trep.add_argument("--json", action="store_true")
    for parser_ in (tdraft, tsave, texp, trun, trep):
        parser_.set_defaults(func=cmd_testset)


def cmd_verify(store: Store, args) -> int:
    """Verify the answers of INPUT.jsonl; bad lines are reported (line and field) and skipped."""
    from register.verify.judge_cli import load_profile
    from register.verify.pipeline import LINK_THRESHOLD, VerifyInput, read_inputs, verify
    from register.verify.run import judge_in_register

    actor = cli_actor()
    initialise(store)
    path = Path(args.input)
    try:
        with path.open(encoding="utf-8") as handle:
            parsed = list(read_inputs(handle))
    except (OSError, UnicodeDecodeError) as error:
        raise RegisterError(f"cannot read {args.input}: {error}") from error
    inputs = [item for item in parsed if isinstance(item, VerifyInput)]
    problems = [problem for item in parsed if not isinstance(item, VerifyInput) for problem in item]
    for problem in problems:
        print(problem, file=sys.stderr)
    judge = judge_in_register(load_profile(args.profile), store, actor)
    report = verify(store, actor, inputs, judge, source_name=path.name,
                    link_threshold=args.link_threshold if args.link_threshold is not None else LINK_THRESHOLD,
                    progress=None if args.quiet else progress)
    skipped = len(parsed) - len(inputs)
    if args.json:
        print(json.dumps({**report.as_dict(), "skipped_lines": skipped}))
    else:
        labels = ", ".join(f"{n} {label}" for label, n in sorted(report.labels.items()))
        print(f"verification run {report.run_id}: {report.responses:,} responses, {report.claims:,} claims "
              f"({labels}); {report.unlinked:,} UNLINKED; {report.applied:,} applied by the judge policy, "
              f"{report.proposed:,} proposals await a person; stored as batch {report.batch_id}, "
              f"score run {report.score_run_id}")
    if skipped:
        print(f"{skipped} line(s) skipped", file=sys.stderr)
    return EXIT_QUARANTINED if skipped else EXIT_OK


def cmd_judge_agreement(store: Store, args) -> int:
    """Kappa, false clearance and the threshold curve of each judge; optionally a profile's next version."""
    from register.verify.agreement import judge_agreement, profile_with_threshold
    from register.verify.judge_cli import load_profile

    entries = judge_agreement(store)
    if args.threshold is not None:
        if not args.out:
            raise RegisterError("--threshold needs --out FILE (where the new profile version is written)")
        profile = load_profile(args.profile)
        mine = next((e for e in entries if e["judge_profile"] == profile.key), None)
        point = next((c for c in mine["curve"] if c["threshold"] == args.threshold), None) if mine else None
        evidence = (f"chosen from {mine['decided']} decided proposals: false clearance "
                    f"{point['false_clearance']['count']}/{point['false_clearance']['total']}, coverage "
                    f"{point['coverage']['value']}" if mine and point
                    else "chosen by hand (no curve point at this threshold)")
        chosen = profile_with_threshold(profile, args.threshold, evidence)
        Path(args.out).write_text(chosen.model_dump_json(indent=2) + "\n", encoding="utf-8")
        print(f"wrote {chosen.key} (thresholds.supported {args.threshold}) to {args.out}")
        return EXIT_OK
    if args.json:
        print(json.dumps(entries, indent=2))
        return EXIT_OK
    if not entries:
        print("no decided proposal yet: confirm or reject proposals on the Claim verification page")
    for e in entries:
        fc = e["false_clearance"]
        print(f"{e['judge_profile']} ({e['backend']}): {e['decided']} decided, kappa {e['kappa']}, false clearance "
              f"{fc['count']}/{fc['total']}")
        for point in e["curve"]:
            print(f"  >= {point['threshold']:.2f}: coverage {point['coverage']['value']}, false clearance "
                  f"{point['false_clearance']['value']}, supported recall {point['supported_recall']['value']}")
    return EXIT_OK


def _llm_client():
    """A chat client for the endpoint the ``HRI_LLM_*`` settings name; a clear error when none is set."""
    from register.settings import secret
    from register.verify.llm_client import ChatClient

    current = settings()
    if not (current.llm_url and current.llm_model):
        raise RegisterError("--llm needs an endpoint and a model: set HRI_LLM_URL and HRI_LLM_MODEL (the API key "
                            f"in ${current.llm_api_key_env})")
    return ChatClient(current.llm_url, current.llm_model, secret(current.llm_api_key_env),
                      timeout=current.llm_timeout, retries=current.llm_retries)


def cmd_testset(store: Store, args) -> int:
    """Critical-information test sets (register.verify.testsets)."""
    from register.verify import testsets

    actor = cli_actor()
    command = args.testset_command
    if command == "draft":
        if args.llm:
            items, drafted = testsets.draft_with_llm(store, _llm_client())
            note = (f"drafted from the register, questions by {drafted.model}: {drafted.written} written, "
                    f"{len(drafted.fallbacks)} from the template")
        else:
            items, note = testsets.draft_from_register(store), "drafted offline from the register"
        if not items:
            raise RegisterError("nothing to draft from: the register has no claims register rows and no supported "
                                "claims of critical categories")
        version = testsets.save_test_set(store, actor, args.name, items, note=note)
        print(f"test set {args.name} v{version}: {len(items)} draft question(s); edit them (testset export, "
              "testset save) before relying on them")
        if args.llm:
            print(note)
            for item_id, why in drafted.fallbacks.items():
                print(f"  {item_id}: template question ({why})")
    elif command == "save":
        items = _read_jsonl_objects(Path(args.file))
        version = testsets.save_test_set(store, actor, args.name, items, note=args.note)
        print(f"test set {args.name} v{version}: {len(items)} item(s)")
    elif command == "export":
        version, items = testsets.load_test_set(store, args.name, args.version)
        Path(args.file).write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items), encoding="utf-8")
        print(f"wrote {len(items)} item(s) of {args.name} v{version} to {args.file}")
    elif command == "run":
        from register.verify.judge_cli import load_profile
        from register.verify.run import judge_in_register

        judge = judge_in_register(load_profile(args.profile), store, actor)
        if args.answers:
            rows = _read_jsonl_objects(Path(args.answers))
            answers = {str(r.get("item_id")): str(r.get("answer") or "") for r in rows}
            run_id, report = testsets.run_test_set(store, actor, args.name, judge, version=args.version,
                                                   answers=answers, model=args.assistant_model)
        else:
            from register.settings import secret
            from register.verify.llm_client import ChatClient

            if not (args.assistant_url and args.assistant_model):
                raise RegisterError("give --assistant-url and --assistant-model, or --answers FILE")
            current = settings()
            client = ChatClient(args.assistant_url, args.assistant_model, secret(current.llm_api_key_env),
                                timeout=current.llm_timeout, retries=current.llm_retries)
            run_id, report = testsets.run_test_set(store, actor, args.name, judge, version=args.version,
                                                   assistant=client)
        print(f"test set run {run_id}: {report.responses} answer(s) verified (verification run {report.run_id}, "
              f"{report.claims} claims)")
    else:
        rows = testsets.critical_report(store, args.name)
        if args.json:
            print(json.dumps(rows, default=str, indent=2))
        for row in [] if args.json else rows:
            share = "-" if row["question_share"] is None else f"{row['question_share']:.2f}"
            fraction = "-" if row["hallucination"] is None else \
                f"{row['hallucination']:.3f} (at most {row['hallucination_at_most']:.3f})"
            print(f"run {row['test_run_id']} {row['name']} v{row['version']} {row['model']} "
                  f"{row['started_at']:%Y-%m-%d %H:%M}: hallucination {fraction} (seed 003: claims unsupported and "
                  f"incorrect, mean over questions; {row['hallucinated_claims']} of {row['claims']} claims, "
                  f"{row['undecided_claims']} undecided); {row['critical_questions']} critical question(s), "
                  f"{row['hallucinated']} with a hallucinated claim (share {share}), {row['needs_review']} "
                  f"need review, {row['unanswered']} unanswered")
            for q in row["questions"]:
                print(f"  {q['response_id']}: {q['hallucinated_claims']} of {q['claims']} claims hallucinated "
                      f"({q['hallucination']:.3f}), {q['undecided_claims']} undecided (at most "
                      f"{q['hallucination_at_most']:.3f})")
    return EXIT_OK


def _read_jsonl_objects(path: Path) -> list[dict]:
    """The JSON objects of a JSON Lines file; the first bad line is an error naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise RegisterError(f"cannot read {path}: {error}") from error
    out = []
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise RegisterError(f"{path.name} line {number}: not valid JSON ({error.msg})") from None
        if not isinstance(value, dict):
            raise RegisterError(f"{path.name} line {number}: expected a JSON object")
        out.append(value)
    return out
