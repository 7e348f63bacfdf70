"""The pre-submission claim-verification checklist (paper Table IX) and its sign-offs.

Called by the checklist page (through ``ui.governance``), the release report and the CI gate
(``python -m register checklist run --fail-on violations``).

``run_checks`` evaluates the seven checks against the register and lists the offending rows of each
(DOMAIN.md section 7 says how each check is automated). ``record_run`` stores the results with a
hash of exactly what was checked: the canonical content of every row of both registers (deleted
rows included), the evidence rules in force and the results. ``sign`` records a reviewer's
pass / fail / waived-with-reason per item and binds the sign-off to that hash. Staleness is computed
on read by re-hashing the current rows and rules with the run's stored results: any later change to
a checked record (or a new rule version) makes the run and its sign-offs stale. The signer must not
be the last editor of any checked record (four eyes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date

import pandas as pd

from register.errors import NotFound, StaleEdit
from register.governance.registers import (MUTABLE_SOURCE_TYPES, ValidationFailed, Problem, canonical_rows, content_hash,
                         current_rule_version, evaluate_rules, list_rules)
from register.access.permissions import Permission, authorize, require_other_person
from register.db.store import Actor, Change, Store, utc_now

__all__ = ["CHECKS", "DECISIONS", "REPRODUCE_SAMPLE", "gate_summary", "history", "record_run", "run_checks", "run_detail", "sign"]

CHECKS = (
    (1, "Every factual claim is linked to a primary or acceptable secondary source."),
    (2, "Every numerical value, benchmark property, and threshold is either sourced or explicitly marked as "
        "provisional."),
    (3, "Vendor claims are labeled as vendor claims and are not presented as independent validation."),
    (4, "Original elements of the HRI are described as proposals, design choices, or hypotheses, not as "
        "established standards."),
    (5, "Ambiguous or unverifiable claims are removed, softened, or moved to future work."),
    (6, "Mutable web sources include access dates in the reference list or verification register."),
    (7, "Claim labels, criticality weights, and safety floors are reproducible from the documented rubric."),
)
DECISIONS = ("pass", "fail", "waived")
REPRODUCE_SAMPLE = 20  # responses recomputed by the Python reference scorer on top of the full SQL recomputation
PROVISIONAL = ("provisional (design parameter)", "not claimed", "removed")


@dataclass(frozen=True)
class Finding:
    entity_type: str   # register_claim | source | response
    entity_id: str
    label: str
    reason: str

    def as_dict(self) -> dict:
        return {"entity_type": self.entity_type, "entity_id": self.entity_id, "label": self.label, "reason": self.reason}


def _claim(row, reason: str) -> dict:
    return Finding("register_claim", row["claim_key"], str(row["statement"])[:120], reason).as_dict()


def _check_1(ev: pd.DataFrame) -> list[dict]:
    bad = ev[(ev["outcome"] == "violation") & (ev["claim_type"] != "original design choice")]
    return [_claim(r, f"{r['reason']} (required handling: {r['required_handling']})") for _, r in bad.iterrows()]


def _check_2(ev: pd.DataFrame) -> list[dict]:
    numeric = (ev["claim_type"] == "benchmark property or number") | ev["statement"].str.contains(r"(?<![A-Za-z_])\d", regex=True)
    sourced = ev["reason"].str.startswith("acceptable source")
    bad = ev[numeric & ~sourced & ~ev["verification_status"].isin(PROVISIONAL)]
    return [_claim(r, f"a number or threshold without an acceptable source, marked {r['verification_status']!r} "
                      "(source it or mark it provisional)") for _, r in bad.iterrows()]


def _check_3(store: Store) -> list[dict]:
    rows = store.query_df("""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM register_claims WHERE NOT deleted)
        SELECT c.claim_key, c.statement, c.claim_type, string_agg(s.source_id, ', ' ORDER BY s.source_id) AS vendor_sources
        FROM register_claims c JOIN links l ON l.claim_key = c.claim_key
        JOIN sources s ON s.source_id = l.source_id AND NOT s.deleted AND s.source_type = 'vendor documentation'
        WHERE NOT c.deleted AND c.claim_type <> 'vendor capability'
        GROUP BY c.claim_key, c.statement, c.claim_type, c.created_at ORDER BY c.created_at, c.claim_key""")
    return [_claim(r, f"rests on vendor documentation ({r['vendor_sources']}) but is typed {r['claim_type']!r}, "
                      "not 'vendor capability'") for _, r in rows.iterrows()]


def _check_4(store: Store) -> list[dict]:
    rows = store.query_df("""
        WITH links AS (SELECT claim_key, unnest(source_ids) AS source_id FROM register_claims WHERE NOT deleted),
        prop AS (SELECT DISTINCT l.claim_key FROM links l JOIN sources s ON s.source_id = l.source_id
                 AND NOT s.deleted AND s.source_type = 'original proposal')
        SELECT c.claim_key, c.statement, c.claim_type, c.verification_status, prop.claim_key IS NOT NULL AS proposal
        FROM register_claims c LEFT JOIN prop ON prop.claim_key = c.claim_key
        WHERE NOT c.deleted AND (
            (c.claim_type = 'original design choice' AND prop.claim_key IS NULL
             AND c.verification_status NOT IN ('provisional (design parameter)', 'hypothesis', 'not claimed', 'removed'))
         OR (c.claim_type <> 'original design choice' AND prop.claim_key IS NOT NULL
             AND c.verification_status NOT IN ('hypothesis', 'provisional (design parameter)', 'not claimed', 'removed')))
        ORDER BY c.created_at, c.claim_key""")
    out = []
    for _, r in rows.iterrows():
        if r["claim_type"] == "original design choice":
            out.append(_claim(r, f"original element marked {r['verification_status']!r} without an 'original proposal' "
                                 "source: link the proposal or mark it provisional / hypothesis"))
        else:
            out.append(_claim(r, f"rests on an original proposal but is typed {r['claim_type']!r} and marked "
                                 f"{r['verification_status']!r}: present it as a design choice or hypothesis"))
    return out


def _check_5(store: Store) -> list[dict]:
    rows = store.query_df("SELECT claim_key, statement, verification_status FROM register_claims WHERE NOT deleted "
                          "AND verification_status IN ('unverified', 'partially verified') ORDER BY created_at, claim_key")
    return [_claim(r, f"marked {r['verification_status']!r}: remove, soften (and re-verify) or move to future work")
            for _, r in rows.iterrows()]


def _check_6(store: Store) -> list[dict]:
    rows = store.query_df("SELECT source_id, title, source_type FROM sources WHERE NOT deleted AND access_date IS NULL "
                          "AND list_contains(?, source_type) ORDER BY source_id", [list(MUTABLE_SOURCE_TYPES)])
    return [Finding("source", r["source_id"], str(r["title"] or "")[:120],
                    f"{r['source_type']} without an access date").as_dict() for _, r in rows.iterrows()]


def _check_7(store: Store, sample: int) -> tuple[list[dict], str]:
    """Every current score recomputed in SQL from its labels under its recorded profile version and
    as-of time, plus a sample recomputed by the Python reference scorer (``register.scoring.reproduce``)."""
    from register.scoring.profiles import get_profile
    from register.scoring.reproduce import reproduce
    from register.scoring.scorer import score_query

    total = store.query_one("SELECT count(*) FROM scores WHERE is_current")[0]
    if not total:
        return [], "no stored scores to reproduce"
    out: dict[str, dict] = {}
    missing = store.query("SELECT DISTINCT s.profile_version FROM scores s LEFT JOIN scoring_profiles p "
                          "ON p.profile_version = s.profile_version WHERE s.is_current AND p.profile_version IS NULL") \
        if _has_table(store, "scoring_profiles") else []
    for (version,) in missing:
        out[f"profile-{version}"] = Finding("response", f"profile {version}", "",
                                            "scores recorded a profile version that is not stored").as_dict()
    groups = store.query("SELECT DISTINCT profile_version, as_of FROM scores WHERE is_current ORDER BY 1, 2")
    for version, as_of in groups:
        if f"profile-{version}" in out:
            continue
        sql, params = score_query(get_profile(store, version), as_of)
        params = {**params, "chk_version": version, "chk_as_of": as_of}
        rows = store.query(f"""
            WITH rec AS ({sql})
            SELECT s.response_id, s.score, rec.score, s.band, rec.band, s.action, rec.action
            FROM scores s JOIN rec ON rec.response_id = s.response_id AND rec.revision = s.revision
            WHERE s.is_current AND s.profile_version = $chk_version AND s.as_of = $chk_as_of
              AND (abs(s.hri - rec.hri) > 1e-9 OR abs(s.hri_add - rec.hri_add) > 1e-9 OR s.band <> rec.band
                   OR s.action <> rec.action OR s.no_claims <> rec.no_claims)
            ORDER BY s.response_id""", params)
        for rid, s_score, r_score, s_band, r_band, s_action, r_action in rows:
            out[rid] = Finding("response", rid, "", f"stored {s_score:.4f} {s_band}/{s_action}, recomputed "
                                                    f"{r_score:.4f} {r_band}/{r_action}").as_dict()
    picked = store.query("SELECT response_id FROM scores WHERE is_current ORDER BY md5(response_id) LIMIT ?", [sample])
    for (rid,) in picked:
        if rid in out:
            continue
        rep = reproduce(store, rid)
        if not rep.matches:
            out[rid] = Finding("response", rid, "", "reference scorer: " + "; ".join(rep.differences)).as_dict()
    note = (f"{total:,} current scores recomputed in SQL from labels under their recorded profile versions; "
            f"{len(picked)} of them also by the Python reference scorer")
    return sorted(out.values(), key=lambda f: f["entity_id"]), note


def _has_table(store: Store, name: str) -> bool:
    return bool(store.query_one("SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [name])[0])


def run_checks(store: Store, *, today: date | None = None, sample: int = REPRODUCE_SAMPLE) -> dict:
    """The seven checks against the register now: ``{"rule_version", "checks": [{no, title, status, automated,
    offending: [...], note}], "summary": {...}}``. Nothing is written."""
    version = current_rule_version(store)
    ev = evaluate_rules(store, version, today=today)
    found = {1: (_check_1(ev), "claims checked against the minimum evidence rules in force"),
             2: (_check_2(ev), "claims typed as numbers or containing digits"),
             3: (_check_3(store), "claims resting on vendor documentation"),
             4: (_check_4(store), "original design choices and claims resting on the paper's own proposals"),
             5: (_check_5(store), "claims still unverified or partially verified"),
             6: (_check_6(store), "web pages, vendor pages and repository documentation")}
    found[7] = _check_7(store, sample)
    checks = []
    for no, title in CHECKS:
        offending, note = found[no]
        checks.append({"no": no, "title": title, "automated": True, "status": "fail" if offending else "pass",
                       "offending": offending, "note": note})
    counts = store.query_one("SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted) "
                             "FROM register_claims")
    summary = {"claims": counts[0], "claims_deleted": counts[1],
               "sources": store.query_one("SELECT count(*) FROM sources WHERE NOT deleted")[0],
               "violations": int((ev["outcome"] == "violation").sum()),
               "by_status": {k: int(v) for k, v in ev["verification_status"].value_counts().sort_index().items()},
               "failed_checks": [c["no"] for c in checks if c["status"] == "fail"]}
    return json.loads(json.dumps({"rule_version": version, "checks": checks, "summary": summary}, default=str))


def _fingerprint(store: Store) -> tuple[dict, list[str]]:
    rows = canonical_rows(store)
    version = current_rule_version(store)
    rules = json.loads(list_rules(store, version).drop(columns="rule_version").to_json(orient="records")) \
        if version is not None else []
    editors = sorted({r["updated_by"] for kind in ("claims", "sources") for r in rows[kind] if r["updated_by"]})
    return {"rows": rows, "rule_version": version, "rules": rules}, editors


def _hash(state: dict, results: dict) -> str:
    return content_hash({**state, "results": results})


def record_run(store: Store, actor: Actor, *, today: date | None = None, results: dict | None = None) -> int:
    """Run the checks and store the run with its content hash; returns the run id."""
    authorize(store, actor, Permission.CHECKLIST_RUN, entity_type="checklist_run")
    results = results if results is not None else run_checks(store, today=today)
    state, editors = _fingerprint(store)
    digest = _hash(state, results)
    outcome = "fail" if results["summary"]["failed_checks"] else "pass"

    def fn(cur) -> Change:
        run_id = cur.execute("SELECT nextval('seq_checklist_run')").fetchone()[0]
        cur.execute("INSERT INTO checklist_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, utc_now(), actor.name, actor.role, results["rule_version"], outcome,
                     json.dumps(results), digest, editors])
        return Change("checklist_run", str(run_id), None,
                      {"outcome": outcome, "failed_checks": results["summary"]["failed_checks"],
                       "content_hash": digest, "rule_version": results["rule_version"]}, result=run_id)

    return store.write(actor, "checklist.run", fn)


def _runs(store: Store, run_id: int | None = None) -> list[dict]:
    cols = ("run_id", "run_at", "run_by", "run_role", "rule_version", "outcome", "results", "content_hash", "editors")
    where = "WHERE run_id = ?" if run_id is not None else ""
    rows = store.query(f"SELECT {', '.join(cols)} FROM checklist_runs {where} ORDER BY run_id DESC",
                       [run_id] if run_id is not None else [])
    out = []
    for row in rows:
        run = dict(zip(cols, row))
        run["results"] = json.loads(run["results"])
        run["editors"] = list(run["editors"])
        out.append(run)
    return out


def _signoffs(store: Store, run_id: int | None = None) -> list[dict]:
    cols = ("signoff_id", "run_id", "signed_by", "signed_role", "signed_at", "outcome", "decisions", "content_hash")
    where = "WHERE run_id = ?" if run_id is not None else ""
    rows = store.query(f"SELECT {', '.join(cols)} FROM checklist_signoffs {where} ORDER BY signoff_id",
                       [run_id] if run_id is not None else [])
    return [{**dict(zip(cols, r)), "decisions": json.loads(r[6])} for r in rows]


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
                     "failed_checks": ", ".join(str(n) for n in run["results"]["summary"]["failed_checks"]) or "none",
                     "signed_by": last["signed_by"] if last else None, "signed_at": last["signed_at"] if last else None,
                     "sign_off": last["outcome"] if last else "unsigned",
                     "stale": current != run["content_hash"]})
    return pd.DataFrame(rows, columns=["run_id", "run_at", "run_by", "rule_version", "automated", "failed_checks",
                                       "signed_by", "signed_at", "sign_off", "stale"])


def sign(store: Store, actor: Actor, run_id: int, decisions: dict[int, dict]) -> int:
    """Record a reviewer's decision per item and sign the run; returns the sign-off id.

    ``decisions``: {item no: {"decision": pass | fail | waived, "reason": text}}. Every item needs a
    decision; waived needs a reason; an item whose automated check failed cannot be passed (fail it or
    waive it with a reason). Refused with ``StaleEdit`` when the checked records changed since the run,
    and ``FourEyesViolation`` when the signer last edited any checked record.
    """
    authorize(store, actor, Permission.CHECKLIST_SIGN, entity_type="checklist_run", entity_id=run_id)
    run = run_detail(store, run_id)
    editors = sorted(set(run["editors"]) | set(run["current_editors"]))
    require_other_person(store, actor, actor.name if actor.name in editors else None, Permission.CHECKLIST_SIGN,
                         entity_type="checklist_run", entity_id=run_id,
                         what="edits to the checked register rows")
    if run["stale"]:
        raise StaleEdit(f"the register or the evidence rules changed since checklist run {run_id} "
                        f"({run['run_at']:%Y-%m-%d %H:%M:%S} UTC): run the checklist again, then sign")
    status = {c["no"]: c["status"] for c in run["results"]["checks"]}
    problems, clean = [], {}
    for no, _ in CHECKS:
        item = decisions.get(no) or decisions.get(str(no)) or {}
        decision, reason = item.get("decision"), (item.get("reason") or "").strip()
        if decision not in DECISIONS:
            problems.append(Problem(no, "decision", f"choose one of: {', '.join(DECISIONS)}"))
        elif decision == "waived" and not reason:
            problems.append(Problem(no, "reason", "a waiver needs a reason"))
        elif decision == "pass" and status.get(no) == "fail":
            problems.append(Problem(no, "decision", "the automated check found offending rows: fix them, "
                                                    "or record fail / waived with a reason"))
        clean[str(no)] = {"decision": decision, "reason": reason or None, "automated": status.get(no)}
    if problems:
        raise ValidationFailed(problems)
    outcome = "passed" if all(d["decision"] in ("pass", "waived") for d in clean.values()) else "failed"

    def fn(cur) -> Change:
        now_hash = cur.execute("SELECT content_hash FROM checklist_runs WHERE run_id = ?", [run_id]).fetchone()[0]
        signoff_id = cur.execute("SELECT nextval('seq_checklist_signoff')").fetchone()[0]
        cur.execute("INSERT INTO checklist_signoffs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [signoff_id, run_id, actor.name, actor.role, utc_now(), outcome, json.dumps(clean), now_hash])
        return Change("checklist_run", str(run_id), None,
                      {"signoff_id": signoff_id, "outcome": outcome, "decisions": clean, "content_hash": now_hash},
                      result=signoff_id)

    return store.write(actor, "checklist.sign", fn)


def gate_summary(results: dict) -> tuple[bool, str]:
    """(failed?, readable summary) of a set of results, for the CI gate."""
    lines = [f"Pre-submission checklist (rule version {results['rule_version']}): "
             f"{results['summary']['claims']} claims, {results['summary']['sources']} sources"]
    for c in results["checks"]:
        lines.append(f"  [{'FAIL' if c['status'] == 'fail' else 'pass'}] {c['no']}. {c['title']}")
        for f in c["offending"][:25]:
            lines.append(f"         - {f['entity_type']} {f['entity_id']}: {f['reason']}")
        if len(c["offending"]) > 25:
            lines.append(f"         ... and {len(c['offending']) - 25} more")
    failed = results["summary"]["failed_checks"]
    lines.append(f"{len(failed)} of {len(CHECKS)} checks failed" + (f": {', '.join(map(str, failed))}" if failed else ""))
    return bool(failed), "\n".join(lines)

