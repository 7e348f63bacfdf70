"""``checklist run|sign``, ``governance import|export`` and ``authority check``: the governance registers (sources,
claims and use cases) and the checks run over them, the pre-submission checklist's CI gate and CLAIM's Authority
step."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from register.cli.common import EXIT_FAILED, EXIT_OK, EXIT_QUARANTINED, cli_actor, client_path
from register.db.store import Store
from register.errors import Problem, ValidationFailed


def add_commands(sub) -> None:
    chk = sub.add_parser("checklist", help="the pre-submission claim-verification checklist")
    csub = chk.add_subparsers(dest="checklist_command", required=True)
    crun = csub.add_parser("run", help="run the automated checks (the CI gate)")
    crun.add_argument("--fail-on", choices=("violations", "never"), default="never",
                      help="violations: exit 1 when any check fails or an imported row is rejected")
    crun.add_argument("--claims", metavar="FILE", type=client_path,
                      help="check this claims register file (CSV/Excel) instead of the database")
    crun.add_argument("--sources", metavar="FILE", type=client_path,
                      help="with --claims: the sources register file it refers to")
    crun.add_argument("--record", action="store_true", help="store the run in the database (to sign it in the console)")
    crun.add_argument("--json", action="store_true", help="print the results as JSON")
    crun.set_defaults(func=cmd_checklist_run)
    csign = csub.add_parser("sign", help="sign a recorded run: a decision (pass, fail, waived) and reason per item")
    csign.add_argument("run_id", type=int, metavar="RUN_ID", help="a run recorded with `checklist run --record`")
    csign.add_argument("--decisions", required=True, type=client_path, metavar="FILE",
                       help='JSON: {"1": {"decision": "pass"}, "2": {"decision": "waived", "reason": "..."}, ...}, '
                            "one entry per item")
    csign.set_defaults(func=cmd_checklist_sign)

    gov = sub.add_parser("governance", help="import or export the source, claims and use-case registers")
    gsub = gov.add_subparsers(dest="governance_command", required=True)
    for name in ("import", "export"):
        g = gsub.add_parser(name, help=f"{name} a register file (.csv or .xlsx)")
        g.add_argument("kind", choices=("sources", "claims", "usecases"))
        g.add_argument("file", type=client_path)
        g.set_defaults(func=cmd_governance)

    auth = sub.add_parser("authority", help="CLAIM's Authority step: are the answers' sources allowed, current, "
                                            "authoritative?")
    authsub = auth.add_subparsers(dest="authority_command", required=True)
    acheck = authsub.add_parser("check", help="list every failed check; exit 2 when there is any")
    acheck.add_argument("--json", action="store_true", help="findings as JSON")
    acheck.set_defaults(func=cmd_authority_check)


def cmd_checklist_run(store: Store, args) -> int:
    """The CI gate: run the automated checks and print a readable summary."""
    import tempfile

    from register.governance.checklist import gate_summary, record_run
    from register.governance.checks import run_checks
    from register.governance.evidence import ensure_default_rules
    from register.governance.transfer import import_register, read_upload

    rejected: list[str] = []
    if args.claims or args.sources:
        with tempfile.TemporaryDirectory(prefix="hri-checklist-") as tmp:
            temp = Store(Path(tmp) / "register.duckdb", audit_keyring=Path(tmp) / "register.audit-key",
                         keep_anchors=False)  # a throwaway register: no anchor folder left behind
            try:
                ensure_default_rules(temp, cli_actor())
                for kind, path in (("sources", args.sources), ("claims", args.claims)):
                    if path:
                        frame = read_upload(Path(path).name, Path(path).read_bytes())
                        result = import_register(temp, cli_actor(), kind, frame)
                        rejected += [f"{path}: {p}" for p in result.rejected]
                results = run_checks(temp)
            finally:
                temp.close()
    else:
        results = run_checks(store)
        if args.record:
            run_id = record_run(store, cli_actor(), results=results)
            print(f"recorded as checklist run {run_id}", file=sys.stderr)
    failed, text = gate_summary(results)
    if args.json:
        print(json.dumps({**results, "rejected_rows": rejected}, indent=2, default=str))
    else:
        print(text)
        for line in rejected:
            print(f"  rejected row: {line}")
    if args.fail_on == "violations" and (failed or rejected):
        return EXIT_FAILED
    return EXIT_OK


def cmd_checklist_sign(store: Store, args) -> int:
    """Sign a recorded run as the command line's actor (``HRI_ACTOR``): the same rules as the console's sign-off
    (every item decided, a waiver with a reason, four eyes against the checked rows' editors)."""
    from hri_core.strict_json import decode_json
    from register.governance.checklist import sign

    decisions, problems = decode_json(Path(args.decisions).read_text(encoding="utf-8"))
    if problems or not isinstance(decisions, dict):
        why = str(problems[0]) if problems else "not a JSON object of items"
        raise ValidationFailed([Problem(None, "decisions", f"{args.decisions}: {why}")])
    signoff = sign(store, cli_actor(), args.run_id, decisions)
    print(f"checklist run {args.run_id} signed: sign-off {signoff}")
    return EXIT_OK


def cmd_governance(store: Store, args) -> int:
    """Import a register file (valid rows saved by key; exit 2 when a row was rejected, each named on stderr) or
    export one (formula-escaped, re-importable)."""
    from register.governance.transfer import (
        export_claims,
        export_sources,
        export_use_cases,
        formula_escaped,
        import_register,
        read_upload,
    )

    path = Path(args.file)
    if args.governance_command == "import":
        frame = read_upload(path.name, path.read_bytes())
        result = import_register(store, cli_actor(), args.kind, frame)
        print(f"{result.rows} rows: {result.inserted} new, {result.updated} updated, {result.unchanged} unchanged, "
              f"{result.rejected_rows} rejected" + (f", {result.sources_created} sources created"
                                                   if result.sources_created else ""))
        for problem in result.rejected:
            print(f"  {problem}", file=sys.stderr)
        return EXIT_QUARANTINED if result.rejected else EXIT_OK
    exports = {"sources": export_sources, "claims": export_claims, "usecases": export_use_cases}
    frame = exports[args.kind](store)
    frame = formula_escaped(frame)
    if path.suffix.lower() == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, index=False, lineterminator="\r\n")  # RFC 4180: a bare CR in a value gets quoted
    print(f"{len(frame)} rows written to {path}")
    return EXIT_OK


def _text(value):
    """A frame's text or None (pandas reads a NULL of an object column as None or NaN)."""
    return value if isinstance(value, str) else None


def cmd_authority_check(store: Store, args) -> int:
    """Every failed or undecided Authority check of the current answers' sourced claims, and every Scope finding
    (an OUT_OF_SCOPE proposal); exit 2 when any."""
    from register.scoring.authority import findings

    frame = findings(store)
    rows = [{"response_id": r["response_id"], "revision": int(r["revision"]), "claim_id": _text(r["claim_id"]),
             "claim": _text(r["claim"]), "source_id": _text(r["source_id"]), "check": r["check"],
             "problem": r["problem"], "reason": r["reason"],
             "proposed_label": None if r["proposed_label"] is None or r["proposed_label"] != r["proposed_label"]
             else r["proposed_label"]} for r in frame.to_dict("records")]
    if args.json:
        print(json.dumps({"findings": rows, "count": len(rows)}, indent=2))
    elif not rows:
        print("authority check: every sourced claim's source is allowed, current and authoritative")
    else:
        proposed = sum(1 for r in rows if r["proposed_label"])
        print(f"authority check: {len(rows)} finding(s), {proposed} with a proposed label")
        for r in rows:
            label = f" -> proposed {r['proposed_label']}" if r["proposed_label"] else ""
            where = (f"claim {r['claim_id']}" if r["claim_id"] else "answer") + (
                f" on {r['source_id']}" if r["source_id"] else "")  # a Scope finding may be the whole answer's
            print(f"  {r['response_id']} rev {r['revision']} {where}: {r['check']}: {r['problem']} ({r['reason']})"
                  f"{label}")
    return EXIT_QUARANTINED if rows else EXIT_OK
