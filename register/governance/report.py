"""The release report of one checklist run: PDF (fpdf2) and Markdown with the same content.

Called by the checklist page (download buttons) and by tests that render the PDF to PNG. Content:
the run (who, when, rule version, automated outcome, stale or not), the current answers by their one decision
and the block answers released by a risk acceptance in force, each check with its offending
rows, the register summary, the rule violations, the sign-offs with the audit trail's head each one
recorded at signing time, the head when the report was made (each also as a line of anchor JSON for
``python -m register audit verify --anchor``), the anchor folder's newest anchor, and one chart: offending rows per
check, drawn with fpdf2's own rectangles (no browser or plotting stack is needed to build a report;
the Markdown version carries the same numbers as a table).

The PDF uses fpdf2's built-in Helvetica, which covers Latin-1: other characters are replaced. The PDF draws text as
text; the Markdown escapes every string it did not write itself (names, roles, reasons, ids, titles, statuses, read
from the register) with ``register.db.export``'s ``markdown_line`` and ``code_span``, so that an actor named
``**x** ![i](http://...)`` (the command line takes any name) shows as typed and loads nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from hri_core.decision import DECISIONS
from register.db import audit
from register.db.export import code_span, markdown_line
from register.db.sql import Params
from register.db.store import Store, utc_now
from register.errors import InvalidAnchor
from register.governance.checklist import run_detail
from register.governance.checks import NOT_EVALUABLE
from register.governance.evidence import evaluate_rules
from register.governance.report_outcomes import METRIC_HEADERS, outcome_section, section_lines
from register.scoring.accepted import in_force_select

__all__ = ["report_markdown", "report_pdf"]


def _data(store: Store, run_id: int) -> dict:
    run = run_detail(store, run_id)
    ev = evaluate_rules(store, run["rule_version"])
    columns = ["claim_key", "claim_type", "verification_status", "required_handling"]
    violations = ev[ev["outcome"] == "violation"][columns]
    return {"run": run, "violations": violations, "head": audit.head(store), "kept": _kept_anchor(store),
            **_decisions(store)}


def _kept_anchor(store: Store) -> tuple[str | None, str, str | None]:
    """The anchor folder (None when the register keeps none), what it holds in words, and its newest anchor as
    anchor JSON (None when there is none), for the report's anchors section."""
    if store.anchors.path is None:
        return None, "this register keeps no anchor folder", None
    try:
        newest = store.anchors.newest()
    except InvalidAnchor as error:
        return str(store.anchors.path), f"cannot be read ({error})", None
    if newest is None:
        return str(store.anchors.path), "no anchor kept yet", None
    return str(store.anchors.path), "newest:", anchor_json(newest.seq, newest.hash, newest.events)


def _kept_words(kept: tuple[str | None, str, str | None], folder, words, anchor) -> str:
    """The anchors line, each part through the given renderers (Markdown: code spans and escaping; PDF: as is)."""
    path, state, newest = kept
    if path is None:
        return words(state)
    return (f"the anchor folder {folder(path)} (checked by every audit verify), {words(state)}"
            + (f" {anchor(newest)}" if newest else ""))


def _decisions(store: Store) -> dict:
    """The current answers by their one decision (every decision listed, 0 when none) and the block answers a risk
    acceptance releases today (who proposed and approved it, until when), as the report is made."""
    counts = dict(store.query("SELECT decision, count(*) FROM current_scores GROUP BY decision"))
    p = Params()
    accepted = store.dicts(
        f"SELECT a.acceptance_id, a.response_id, a.revision, a.release, a.expires_on, a.proposed_by, a.decided_by "
        f"FROM ({in_force_select(p, utc_now().date())}) f JOIN current_scores c ON c.response_key = f.response_key "
        "AND c.decision = f.decision_at JOIN risk_acceptances a ON a.response_key = f.response_key "
        "AND a.status = 'accepted' AND a.decision_at = f.decision_at "
        f"WHERE a.expires_on >= {p(utc_now().date())}::DATE ORDER BY a.expires_on, a.acceptance_id", p.values)
    return {"decisions": {d: int(counts.get(d, 0)) for d in DECISIONS}, "accepted": accepted}


def _as_is(text: object) -> str:
    return str(text)


def _decision_lines(d: dict, esc: Callable[[object], str] = _as_is) -> list[str]:
    """The answers-by-decision section as sentences (the same in Markdown and PDF); ``esc`` writes each value read
    from the register (the Markdown's escaper; the PDF's text as it is)."""
    counts = ", ".join(f"{esc(name)} {n:,}" for name, n in d["decisions"].items())
    lines = [f"Current answers by decision (the most severe of the band's action, the floors, the Authority checks "
             f"and the mitigation): {counts}."]
    if not d["accepted"]:
        lines.append("No block answer is released by a risk acceptance.")
    for a in d["accepted"]:
        lines.append(f"Risk acceptance {a['acceptance_id']}: {esc(a['response_id'])} revision {a['revision']} "
                     f"{esc(a['release'])} until {a['expires_on']}, proposed by {esc(a['proposed_by'])}, approved by "
                     f"{esc(a['decided_by'])}.")
    return lines


def anchor_json(seq: int, digest: str, events: int) -> str:
    """One line of anchor JSON, as ``python -m register audit anchor`` writes it: saved to a file it is an
    anchor for ``audit verify --anchor FILE``."""
    return json.dumps({"format": audit.ANCHOR_FORMAT, "seq": seq, "hash": digest, "events": events},
                      separators=(",", ":"))


def _signoff_head(so: dict, esc: Callable[[object], str] = _as_is) -> str:
    if so.get("audit_seq") is None:
        return "audit head at signing: not recorded (signed before sign-offs recorded it)"
    return (f"audit head at signing: event {so['audit_seq']} of {so['audit_events']} events, hash "
            f"{esc(so['audit_hash'])}")


_md = markdown_line  # every string of the Markdown report that the code did not write itself


def report_markdown(store: Store, run_id: int, *, include_outcomes: bool = False) -> str:
    """The release report of checklist run ``run_id`` as Markdown; every value read from the register is escaped
    (``_md``: prose, ``code_span``: ids, hashes and anchors). ``include_outcomes`` adds the weights fitted to the
    register's outcomes and the aggregation models compared, with their intervals (``report_outcomes``: seconds)."""
    d = _data(store, run_id)
    run, results = d["run"], d["run"]["results"]
    s = results["summary"]
    head = d["head"]
    out = [f"# Release report: checklist run {run_id}", "",
           f"- Run by **{_md(run['run_by'])}** ({_md(run['run_role'])}) at {run['run_at']:%Y-%m-%d %H:%M UTC}",
           f"- Audit head when this report was made: event {head.seq} of {head.events} events, hash "
           f"{code_span(head.hash)}",
           f"- Evidence rule version {run['rule_version']}; automated outcome **{_md(run['outcome'])}**",
           f"- Content hash {code_span(str(run['content_hash'])[:16] + '...')}: "
           + ("**STALE** - the checked records changed since this run" if run["stale"] else "current"), "",
           "## Register summary", "",
           f"{s['claims']} claims ({s['claims_deleted']} deleted), {s['sources']} sources, "
           f"{s['violations']} minimum-evidence violations.", "",
           "| verification status | claims |", "| --- | ---: |"]
    out += [f"| {_md(k)} | {v} |" for k, v in s["by_status"].items()]
    out += ["", "## Answers by decision", ""] + [f"- {line}" for line in _decision_lines(d, _md)]
    out += ["", "## Checks (paper Table IX)", "", "| no. | check | automated | offending rows |",
            "| ---: | --- | --- | ---: |"]
    out += [f"| {_md(c['no'])} | {_md(c['title'])} | {_md(c['status'])} | {len(c['offending'])} |"
            for c in results["checks"]]
    for c in results["checks"]:
        if c.get("not_evaluable"):
            out += ["", f"### Check {_md(c['no'])}: {NOT_EVALUABLE}", "",
                    f"{_md(c['not_evaluable'])}. It fails unless a reviewer waives it with a reason."]
        if c["offending"]:
            out += ["", f"### Check {_md(c['no'])}: offending rows", ""]
            out += [f"- {_md(f['entity_type'])} {code_span(f['entity_id'])}: {_md(f['reason'])}"
                    for f in c["offending"]]
    out += ["", "## Minimum evidence rule violations", ""]
    if d["violations"].empty:
        out.append("None.")
    else:
        out += ["| claim | type | status | required handling |", "| --- | --- | --- | --- |"]
        out += [f"| {_md(r.claim_key)} | {_md(r.claim_type)} | {_md(r.verification_status)} | "
                f"{_md(r.required_handling)} |" for r in d["violations"].itertuples()]
    out += ["", "## Sign-offs", ""]
    if not run["signoffs"]:
        out.append("Not signed.")
    for so in run["signoffs"]:
        out.append(f"- **{_md(so['signed_by'])}** ({_md(so['signed_role'])}) at {so['signed_at']:%Y-%m-%d %H:%M UTC}: "
                   f"{_md(so['outcome'])}{' (STALE)' if so['stale'] else ''} (sign-off {so['signoff_id']})")
        for no, item in sorted(so["decisions"].items(), key=lambda kv: int(kv[0])):
            reason = f" - {_md(item['reason'])}" if item.get("reason") else ""
            out.append(f"  - item {_md(no)}: {_md(item['decision'])}{reason}")
        out.append(f"  - {_signoff_head(so, _md)}")
    if include_outcomes:
        out += ["", *_outcomes_markdown(section_lines(outcome_section(store), _md))]
    out += ["", "## Audit trail anchors", "",
            "Save a line below as a file and run `python -m register audit verify --anchor FILE` (or `--anchor "
            "signoff:ID`): it fails when the audit trail no longer holds that event with that hash.", "",
            f"- this report: {code_span(anchor_json(head.seq, head.hash, head.events))}"]
    out += [f"- sign-off {so['signoff_id']}: "
            f"{code_span(anchor_json(so['audit_seq'], so['audit_hash'], so['audit_events']))}"
            for so in run["signoffs"] if so.get("audit_seq") is not None]
    out.append(f"- {_kept_words(d['kept'], code_span, _md, code_span)}")
    return "\n".join(out) + "\n"


def _outcomes_markdown(lines: dict) -> list[str]:
    out = ["## Learning from outcomes (HRI paper, sections VI and IX)", ""] + [line for line in lines["intro"] if line]
    if lines["weights"]:
        out += ["", "| dimension | fitted | interval | active |", "| --- | ---: | --- | ---: |"]
        out += [f"| {' | '.join(row)} |" for row in lines["weights"]]
    for title, rows in (("weights", lines["cv"]), ("model", lines["models"])):
        if rows:
            out += ["", f"| {title} | {' | '.join(METRIC_HEADERS)} |", "| --- |" + " ---: | --- |" * 3]
            out += [f"| {' | '.join(row)} |" for row in rows]
    if lines["commands"]:
        out += ["", "Reproduced by " + " and ".join(code_span(c) for c in lines["commands"]) + "."]
    return out


def _latin1(text) -> str:
    text = str(text if text is not None else "")
    text = text.replace("\u2014", "-").replace("\u2013", "-").replace("\u2019", "'").replace("\u201c", '"').replace(
        "\u201d", '"')
    return text.encode("latin-1", "replace").decode("latin-1")


def report_pdf(store: Store, run_id: int, *, include_outcomes: bool = False) -> bytes:
    """The release report of checklist run ``run_id`` as PDF; ``include_outcomes`` as for ``report_markdown``."""
    from fpdf import FPDF  # on use: only a report download needs the PDF library

    d = _data(store, run_id)
    run, results = d["run"], d["run"]["results"]
    s = results["summary"]
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_page()
    width = pdf.w - pdf.l_margin - pdf.r_margin

    def heading(text: str, size: int = 13) -> None:
        pdf.ln(2)
        pdf.set_font("Helvetica", "B", size)
        pdf.cell(0, 8, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 9)

    def para(text: str, style: str = "") -> None:
        pdf.set_font("Helvetica", style, 9)
        pdf.multi_cell(width, 5, _latin1(text), new_x="LMARGIN", new_y="NEXT", align="L")

    heading(f"Release report: checklist run {run_id}", 16)
    para(f"Run by {run['run_by']} ({run['run_role']}) at {run['run_at']:%Y-%m-%d %H:%M UTC}. Evidence rule version "
         f"{run['rule_version']}. Automated outcome: {run['outcome'].upper()}.")
    head = d["head"]
    para(f"Audit head when this report was made: event {head.seq} of {head.events} events, hash {head.hash}.")
    para(f"Content hash {run['content_hash'][:32]}... "
         + ("STALE: the checked records changed since this run." if run["stale"] else "Current: nothing checked has "
                                                                                     "changed since the run."),
         "B" if run["stale"] else "")

    heading("Register summary")
    para(f"{s['claims']} claims ({s['claims_deleted']} deleted), {s['sources']} sources, {s['violations']} "
         "minimum-evidence violations. Claims by verification status: "
         + ", ".join(f"{k} {v}" for k, v in s["by_status"].items()) + ".")

    heading("Answers by decision")
    for line in _decision_lines(d):
        para(line)

    heading("Offending rows per check")
    _bar_chart(pdf, [(f"{c['no']}", len(c["offending"]), c["status"]) for c in results["checks"]], width)

    heading("Checks (paper Table IX)")
    status_w = 28  # wide enough for "NOT EVALUABLE"
    for c in results["checks"]:
        pdf.set_font("Helvetica", "B", 9)
        pdf.set_text_color(*_STATUS_COLORS.get(c["status"], _STATUS_COLORS["fail"]))
        pdf.cell(status_w, 5, c["status"].upper())
        pdf.set_text_color(0, 0, 0)
        pdf.multi_cell(width - status_w, 5, _latin1(f"{c['no']}. {c['title']}"), new_x="LMARGIN", new_y="NEXT",
                       align="L")
        pdf.set_font("Helvetica", "", 8)
        if c.get("not_evaluable"):
            pdf.set_x(pdf.l_margin + 14)
            pdf.multi_cell(width - 14, 4, _latin1(f"Not evaluable: {c['not_evaluable']}. It fails unless a reviewer "
                                                  "waives it with a reason."), new_x="LMARGIN", new_y="NEXT")
        for f in c["offending"][:40]:
            pdf.set_x(pdf.l_margin + 14)
            pdf.multi_cell(width - 14, 4, _latin1(f"- {f['entity_type']} {f['entity_id']}: {f['reason']}"),
                           new_x="LMARGIN", new_y="NEXT")
        if len(c["offending"]) > 40:
            pdf.set_x(pdf.l_margin + 14)
            pdf.cell(0, 4, f"... and {len(c['offending']) - 40} more", new_x="LMARGIN", new_y="NEXT")
        if c.get("note"):
            pdf.set_x(pdf.l_margin + 14)
            pdf.set_text_color(90, 90, 90)
            pdf.multi_cell(width - 14, 4, _latin1(c["note"]), new_x="LMARGIN", new_y="NEXT")
            pdf.set_text_color(0, 0, 0)

    heading("Minimum evidence rule violations")
    if d["violations"].empty:
        para("None: every claim complies with the rules in force.")
    for r in d["violations"].itertuples():
        para(f"- {r.claim_key} ({r.claim_type}, {r.verification_status}): required handling {r.required_handling}")

    heading("Sign-offs")
    if not run["signoffs"]:
        para("Not signed.")
    for so in run["signoffs"]:
        para(f"{so['signed_by']} ({so['signed_role']}) at {so['signed_at']:%Y-%m-%d %H:%M UTC}: {so['outcome'].upper()}"
             + (" - STALE" if so["stale"] else ""), "B")
        for no, item in sorted(so["decisions"].items(), key=lambda kv: int(kv[0])):
            para(f"  item {no}: {item['decision']}" + (f" - {item['reason']}" if item.get("reason") else ""))
        para(f"  Sign-off {so['signoff_id']}, {_signoff_head(so)}.")

    if include_outcomes:
        lines = section_lines(outcome_section(store), str)
        heading("Learning from outcomes (HRI paper, sections VI and IX)")
        for line in lines["intro"]:
            para(line)
        for row in lines["weights"]:
            para(f"  {row[0]}: fitted {row[1]} {row[2]}, active {row[3]}")
        for row in [*lines["cv"], *lines["models"]]:
            para(f"  {row[0]}: " + "; ".join(f"{METRIC_HEADERS[2 * i]} {row[1 + 2 * i]} {row[2 + 2 * i]}"
                                           for i in range(3)))
        for command in lines["commands"]:
            para(f"Reproduced by: {command}")

    heading("Audit trail anchors")
    para(f"This report: {anchor_json(head.seq, head.hash, head.events)}")
    para(_kept_words(d["kept"], str, str, str) + ".")
    return bytes(pdf.output())


# text and bar colour of a check's status; a status the report does not know is drawn as a failure
_STATUS_COLORS = {"pass": (20, 110, 50), "fail": (170, 30, 30), NOT_EVALUABLE: (180, 110, 0)}
_BAR_COLORS = {"pass": (60, 150, 90), "fail": (200, 60, 60), NOT_EVALUABLE: (230, 150, 30)}


def _bar_chart(pdf, bars: list[tuple[str, int, str]], width: float) -> None:
    """Horizontal bars drawn with rectangles: one per check, red when the check failed, amber when it could not
    be evaluated (no offending rows, so its bar is the stub of an empty one)."""
    label_w, row_h = 22, 6
    top = pdf.get_y() + 1
    biggest = max([n for _, n, _ in bars] + [1])
    plot_w = width - label_w - 20
    pdf.set_font("Helvetica", "", 8)
    for i, (label, n, status) in enumerate(bars):
        y = top + i * row_h
        pdf.set_xy(pdf.l_margin, y)
        pdf.cell(label_w, row_h - 1, f"check {label}", align="R")
        length = plot_w * n / biggest if n else 0.8
        pdf.set_fill_color(*_BAR_COLORS.get(status, _BAR_COLORS["fail"]))
        pdf.rect(pdf.l_margin + label_w + 2, y + 0.8, length, row_h - 2.6, style="F")
        pdf.set_xy(pdf.l_margin + label_w + 4 + length, y)
        pdf.cell(16, row_h - 1, str(n))
    axis_y = top + len(bars) * row_h
    pdf.set_draw_color(120, 120, 120)
    pdf.line(pdf.l_margin + label_w + 2, top, pdf.l_margin + label_w + 2, axis_y)
    pdf.set_xy(pdf.l_margin, axis_y + 1)
    pdf.set_text_color(90, 90, 90)
    pdf.cell(0, 4, "offending rows (red: check failed; amber: not evaluable, fails unless waived; green: passed)",
             new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(0, 0, 0)
