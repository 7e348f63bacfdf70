"""The pre-submission claim-verification checklist (paper Table IX): runs, sign-offs, history, CI gate.

Called by the checklist page (through ``ui.features.governance``), the release report and the CI gate
(``python -m register checklist run --fail-on violations``). The seven checks themselves are the
registry in ``register.governance.checks``.

``record_run`` stores a run's results with a hash of exactly what was checked: the canonical content
of every row of both registers (deleted rows included), the evidence rules in force and the results.
``sign`` records a reviewer's pass / fail / waived-with-reason per item and binds the sign-off to
that hash and to the head of the audit trail at signing time (an anchor: ``signoff_anchor``, checked
by ``python -m register audit verify --anchor signoff:ID``). Staleness is computed on read by
re-hashing the current rows and rules with the run's stored results: any later change to a checked
record (or a new rule version) makes the run and its sign-offs stale. The signer must not be the last
editor of any checked record (four eyes), and each reviewer signs a run once: a second sign-off must
come from another person.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date
from typing import Any

import pandas as pd

from hri_core.fingerprint import fingerprint
from register.access.permissions import Permission, authorize, deny, require_other_person
from register.db import audit
from register.db.store import Actor, Change, Store, Transaction, utc_now
from register.errors import FourEyesViolation, InvalidAnchor, NotFound, Problem, SignOffRefused, StaleEdit
from register.governance.checks import CHECKS, NOT_EVALUABLE, run_checks
from register.governance.evidence import current_rule_version, list_rules
from register.governance.registers import canonical_rows

__all__ = ["DECISIONS", "failed_checks_text", "gate_summary", "history", "record_run", "run_detail", "sign",
           "signoff_anchor"]

DECISIONS = ("pass", "fail", "waived")


def _fingerprint(store: Store) -> tuple[dict, list[str]]:
    rows = canonical_rows(store)
    version = current_rule_version(store)
    rules = json.loads(list_rules(store, version).drop(columns="rule_version").to_json(orient="records")) \
        if version is not None else []
    editors = sorted({r["updated_by"] for kind in ("claims", "sources") for r in rows[kind] if r["updated_by"]})
    return {"rows": rows, "rule_version": version, "rules": rules}, editors


def _hash(state: dict, results: dict) -> str:
    return _content_hash({**state, "results": results})


def _content_hash(payload: Any) -> str:
    return fingerprint(payload, other_types="str")  # a date or time as its str(), as the stored runs were hashed


def record_run(store: Store, actor: Actor, *, today: date | None = None, results: dict | None = None) -> int:
    """Run the checks and store the run with its content hash; returns the run id."""
    authorize(store, actor, Permission.CHECKLIST_RUN, entity_type="checklist_run")
    results = results if results is not None else run_checks(store, today=today)
    state, editors = _fingerprint(store)
    digest = _hash(state, results)
    outcome = "fail" if results["summary"]["failed_checks"] else "pass"

    def fn(tx: Transaction) -> Change:
        run_id = tx.scalar("SELECT nextval('seq_checklist_run')")
        tx.execute("INSERT INTO checklist_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [run_id, utc_now(), actor.name, actor.role, results["rule_version"], outcome,
                    json.dumps(results), digest, editors])
        return Change("checklist_run", str(run_id), None,
                      {"outcome": outcome, "failed_checks": results["summary"]["failed_checks"],
                       "content_hash": digest, "rule_version": results["rule_version"]}, result=run_id)

    return store.write(actor, "checklist.run", fn)


def _runs(store: Store, run_id: int | None = None) -> list[dict]:
    where = "WHERE run_id = ?" if run_id is not None else ""
    runs = store.dicts("SELECT run_id, run_at, run_by, run_role, rule_version, outcome, results, content_hash, "
                       f"editors FROM checklist_runs {where} ORDER BY run_id DESC",
                       [run_id] if run_id is not None else [])
    for run in runs:
        run["results"] = json.loads(run["results"])
        run["editors"] = list(run["editors"])
    return runs


def _signoffs(store: Store, run_id: int | None = None) -> list[dict]:
    where = "WHERE run_id = ?" if run_id is not None else ""
    signoffs = store.dicts("SELECT signoff_id, run_id, signed_by, signed_role, signed_at, outcome, decisions, "
                           "content_hash, audit_seq, audit_hash, audit_events "
                           f"FROM checklist_signoffs {where} ORDER BY signoff_id",
                           [run_id] if run_id is not None else [])
    return [{**s, "decisions": json.loads(s["decisions"])} for s in signoffs]


def signoff_anchor(store: Store, signoff_id: int) -> audit.Anchor:
    """The head of the audit trail that sign-off ``signoff_id`` recorded when it was signed, as an anchor
    (``python -m register audit verify --anchor signoff:ID``)."""
    row = store.one("SELECT audit_seq, audit_hash, audit_events, signed_at FROM checklist_signoffs "
                    "WHERE signoff_id = ?", [signoff_id])
    if row is None:
        raise InvalidAnchor(f"signoff:{signoff_id}: there is no checklist sign-off {signoff_id}")
    if row["audit_seq"] is None:
        raise InvalidAnchor(f"signoff:{signoff_id}: this sign-off was made before sign-offs recorded the audit "
                            "head; use an anchor file (`python -m register audit anchor --out FILE`)")
    return audit.Anchor(row["audit_seq"], row["audit_hash"], row["audit_events"], None, None,
                        f"sign-off {signoff_id}")


def run_detail(store: Store, run_id: int) -> dict:
    """One run with its results, sign-offs and whether it is stale now (re-hashed on read)."""
    runs = _runs(store, run_id)
    if not runs:
        raise NotFound(f"checklist run {run_id} does not exist")
    run = runs[0]
    state, editors = _fingerprint(store)
    run["current_hash"] = _hash(state, run["results"])
    run["stale"] = run["current_hash"] != run["content_hash"]
    run["current_editors"] = editors
    run["signoffs"] = [{**s, "stale": s["content_hash"] != run["current_hash"]} for s in _signoffs(store, run_id)]
    return run


def history(store: Store) -> pd.DataFrame:
    """Every run, newest first: who ran it, when, automated outcome, failed checks, sign-offs, stale now?"""
    state, _ = _fingerprint(store)
    signoffs: dict[int, list[dict]] = {}
    for s in _signoffs(store):
        signoffs.setdefault(s["run_id"], []).append(s)
    rows = []
    for run in _runs(store):
        current = _hash(state, run["results"])
        signed = signoffs.get(run["run_id"], [])
        last = signed[-1] if signed else None
        rows.append({"run_id": run["run_id"], "run_at": run["run_at"], "run_by": run["run_by"],
                     "rule_version": run["rule_version"], "automated": run["outcome"],
                     "failed_checks": failed_checks_text(run["results"]["summary"]),
                     "signed_by": last["signed_by"] if last else None, "signed_at": last["signed_at"] if last else None,
                     "sign_off": last["outcome"] if last else "unsigned",
                     "stale": current != run["content_hash"]})
    return pd.DataFrame(rows, columns=["run_id", "run_at", "run_by", "rule_version", "automated", "failed_checks",
                                       "signed_by", "signed_at", "sign_off", "stale"])


def sign(store: Store, actor: Actor, run_id: int, decisions: Mapping[Any, dict]) -> int:
    """Record a reviewer's decision per item and sign the run; returns the sign-off id.

    ``decisions``: {item no: {"decision": pass | fail | waived, "reason": text}}, the item numbers as integers or
    as their text (the keys of a JSON object). Every item needs a
    decision; waived needs a reason; an item whose automated check failed or could not be evaluated cannot be
    passed (fail it or waive it with a reason): ``SignOffRefused`` names each such item, its title and why.
    Refused with ``StaleEdit`` when the checked records changed since the run,
    and ``FourEyesViolation`` when the signer last edited any checked record or already signed this run.
    """
    authorize(store, actor, Permission.CHECKLIST_SIGN, entity_type="checklist_run", entity_id=run_id)
    run = run_detail(store, run_id)
    editors = sorted(set(run["editors"]) | set(run["current_editors"]))
    require_other_person(store, actor, actor.name if actor.name in editors else None, Permission.CHECKLIST_SIGN,
                         entity_type="checklist_run", entity_id=run_id,
                         what="edits to the checked register rows")
    if any(s["signed_by"] == actor.name for s in run["signoffs"]):
        deny(store, actor, Permission.CHECKLIST_SIGN, "checklist_run", run_id, _signed_twice(actor, run_id),
             FourEyesViolation)
    if run["stale"]:
        raise StaleEdit(f"the register or the evidence rules changed since checklist run {run_id} "
                        f"({run['run_at']:%Y-%m-%d %H:%M:%S} UTC): run the checklist again, then sign")
    status = {c["no"]: c["status"] for c in run["results"]["checks"]}
    problems, clean = [], {}
    for no in (check.no for check in CHECKS):
        item = decisions.get(no) or decisions.get(str(no)) or {}
        decision, reason = item.get("decision"), (item.get("reason") or "").strip()
        if decision not in DECISIONS:
            problems.append(Problem(no, "decision", f"no decision: choose one of {', '.join(DECISIONS)}"))
        elif decision == "waived" and not reason:
            problems.append(Problem(no, "reason", "waived without a reason: a waiver needs a reason"))
        elif decision == "pass" and status.get(no) == "fail":
            problems.append(Problem(no, "decision", "passed, but the automated check found offending rows: fix "
                                                    "them, or record fail / waived with a reason"))
        elif decision == "pass" and status.get(no) == NOT_EVALUABLE:
            problems.append(Problem(no, "decision", "passed, but the automated check could not be evaluated, so it "
                                                    "cannot pass: record fail, or waived with a reason"))
        clean[str(no)] = {"decision": decision, "reason": reason or None, "automated": status.get(no)}
    if problems:
        raise SignOffRefused(problems, {check.no: check.title for check in CHECKS})
    outcome = "passed" if all(d["decision"] in ("pass", "waived") for d in clean.values()) else "failed"

    def fn(tx: Transaction) -> Change:
        if tx.scalar("SELECT count(*) FROM checklist_signoffs WHERE run_id = ? AND signed_by = ?",
                     [run_id, actor.name]):  # signed meanwhile, e.g. from a second tab
            raise FourEyesViolation(_signed_twice(actor, run_id))
        now_hash = tx.scalar("SELECT content_hash FROM checklist_runs WHERE run_id = ?", [run_id])
        signoff_id = tx.scalar("SELECT nextval('seq_checklist_signoff')")
        anchor = audit.head(tx)  # the trail as the signer saw it: this sign-off's own event comes next
        tx.execute("INSERT INTO checklist_signoffs (signoff_id, run_id, signed_by, signed_role, signed_at, outcome, "
                   "decisions, content_hash, audit_seq, audit_hash, audit_events) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [signoff_id, run_id, actor.name, actor.role, utc_now(), outcome, json.dumps(clean), now_hash,
                    anchor.seq, anchor.hash, anchor.events])
        return Change("checklist_run", str(run_id), None,
                      {"signoff_id": signoff_id, "outcome": outcome, "decisions": clean, "content_hash": now_hash,
                       "audit_head": {"seq": anchor.seq, "hash": anchor.hash, "events": anchor.events}},
                      result=signoff_id)

    return store.write(actor, "checklist.sign", fn)


def _signed_twice(actor: Actor, run_id: int) -> str:
    return (f"{actor.name} already signed checklist run {run_id}: a second sign-off must come from another "
            "reviewer (four eyes)")


def failed_checks_text(summary: Mapping[str, Any]) -> str:
    """The failed checks of a run's summary as text, a check not evaluable marked: "1, 7 (not evaluable)"."""
    apart = set(summary.get("not_evaluable_checks", ()))  # runs recorded before the state have no such list
    return ", ".join(f"{n} ({NOT_EVALUABLE})" if n in apart else str(n) for n in summary["failed_checks"]) or "none"


def gate_summary(results: dict) -> tuple[bool, str]:
    """(failed?, readable summary) of a set of results, for the CI gate."""
    lines = [f"Pre-submission checklist (rule version {results['rule_version']}): "
             f"{results['summary']['claims']} claims, {results['summary']['sources']} sources"]
    for c in results["checks"]:
        lines.append(f"  [{'pass' if c['status'] == 'pass' else c['status'].upper()}] {c['no']}. {c['title']}")
        if c.get("not_evaluable"):
            lines.append(f"         {NOT_EVALUABLE} (fails unless a reviewer waives it): {c['not_evaluable']}")
        for f in c["offending"][:25]:
            lines.append(f"         - {f['entity_type']} {f['entity_id']}: {f['reason']}")
        if len(c["offending"]) > 25:
            lines.append(f"         ... and {len(c['offending']) - 25} more")
    failed = results["summary"]["failed_checks"]
    lines.append(f"{len(failed)} of {len(CHECKS)} checks failed"
                 + (f": {failed_checks_text(results['summary'])}" if failed else ""))
    return bool(failed), "\n".join(lines)

