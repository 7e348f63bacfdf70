"""Weight elicitation: AHP pairwise comparisons and Delphi rounds, each ending in a draft profile.

AHP: each expert compares the seven dimensions two at a time on Saaty's 1-9 scale; weights come from
the principal eigenvector, CR = CI / RI flags inconsistent judgements (named), several experts are
combined by geometric mean. Delphi: a facilitator opens rounds, experts submit weight vectors without
seeing each other's until the round closes, and the medians become the draft once every IQR is below
the facilitator's threshold. The math is ``hri_core``; the records live in ``register.scoring.elicitation``.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core import HRIError
from hri_core.ahp import DIMENSION_LETTERS
from register import RegisterError
from register.access.permissions import Permission
from register.scoring import elicitation as reg
from ui.features.figures import dimension_label
from ui.features.figures_scoring import delphi_spread_figure, weights_figure
from ui.framework import data
from ui.framework.auth import can, current_actor
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import escape_markdown

PAIRS = [(a, b) for i, a in enumerate(DIMENSION_LETTERS) for b in DIMENSION_LETTERS[i + 1:]]
INTENSITY = {1: "equal", 2: "equal to moderate", 3: "moderately", 4: "moderately to strongly", 5: "strongly",
             6: "strongly to very strongly", 7: "very strongly", 8: "very to extremely", 9: "extremely"}
STEPS = list(range(-8, 9))  # -8 .. 8: the column criterion 9x .. equal .. the row criterion 9x


def step_value(step: int) -> float:
    """Slider position -> Saaty judgement a_ij (row over column)."""
    return float(step + 1) if step >= 0 else 1.0 / (1 - step)


def step_label(row: str, col: str):
    def fmt(step: int) -> str:
        if step == 0:
            return f"{row} and {col} equally important"
        strength = abs(step) + 1
        first, second = (row, col) if step > 0 else (col, row)
        return f"{first} {INTENSITY[strength]} more important than {second} ({strength})"
    return fmt


def ahp_tab() -> None:
    st.markdown("Compare the dimensions two at a time (Saaty's 1-9 scale). "
                + ", ".join(f"**{d}** {dimension_label(d).split(' ', 1)[-1]}" for d in DIMENSION_LETTERS))
    count = int(st.number_input("Experts", min_value=1, max_value=6, value=1, step=1, key="ahp_experts"))
    experts = []
    for k in range(count):
        with st.expander(f"Expert {k + 1}", expanded=k == 0):
            name = st.text_input("Name", key=f"ahp_name_{k}", value=current_actor().name if k == 0 else "",
                                 max_chars=80)
            cols = st.columns(3)
            judgements = {}
            for n, (a, b) in enumerate(PAIRS):
                step = cols[n % 3].select_slider(f"{a} vs {b}", options=STEPS, value=0, key=f"ahp_{k}_{a}{b}",
                                                 format_func=step_label(a, b))
                judgements[f"{a}/{b}"] = step_value(step)
            experts.append({"expert": name, "judgements": judgements})
    try:
        analysis = reg.ahp_analysis(experts)
    except HRIError as error:
        show_error(error)
        return
    rows = [{"expert": name, "CR": round(r.cr, 4), "acceptable": r.acceptable,
             **{d: round(r.weights[d], 4) for d in DIMENSION_LETTERS}} for name, r in analysis["experts"]]
    combined = analysis["combined"]
    rows.append({"expert": "combined (geometric mean)" if count > 1 else "result", "CR": round(combined.cr, 4),
                 "acceptable": combined.acceptable, **{d: round(combined.weights[d], 4) for d in DIMENSION_LETTERS}})
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="ahp_table")
    c1, c2, c3 = st.columns(3)
    c1.metric("Consistency ratio", f"{combined.cr:.3f}")
    c2.metric("λ max", f"{combined.lambda_max:.3f}")
    c3.metric("Random index (n = 7)", f"{combined.ri:.2f}")
    if not combined.acceptable:
        worst = "; ".join(f"{j.row} vs {j.col}: judged {j.value:.3g}, the weights imply {j.implied:.3g} "
                          f"(try {j.suggested:.3g})" for j in combined.inconsistent)
        st.error(f"CR {combined.cr:.3f} is above {combined.max_cr:.2f}: the judgements are inconsistent. "
                 f"Most inconsistent: {worst}", icon=":material/warning:")
    else:
        st.success(f"CR {combined.cr:.3f} ≤ {combined.max_cr:.2f}: consistent enough to use.",
                   icon=":material/check_circle:")
    st.plotly_chart(weights_figure(combined.weights, data.profile().weights), key="ahp_weights")
    name = st.text_input("Draft name", value="ahp-elicited", key="ahp_draft_name", max_chars=80)
    if st.button("Create draft profile from these weights", key="ahp_save", type="primary",
                 disabled=not combined.acceptable or not can(Permission.PROFILE_EDIT)):
        try:
            version, record = data.write(reg.save_ahp, current_actor(), experts, name=name or None)
        except (RegisterError, HRIError) as error:
            show_error(error)
        else:
            st.success(f"Draft version {version} created with elicitation record #{record}. Review and publish "
                       "it on the Scoring profiles page.", icon=":material/save:")


def summary_frames(summary: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    spread = pd.DataFrame([{"dimension": d, **{k: round(v, 4) for k, v in s.items()}}
                           for d, s in summary["spread"].items()])
    distances = pd.DataFrame([{"expert": e, "distance from median": round(v, 4)}
                              for e, v in summary["distances"].items()])
    return spread, distances


def delphi_tab() -> None:
    actor = current_actor()
    with st.expander("Open a new Delphi session (you facilitate it)"):
        with st.form("delphi_open", enter_to_submit=False):
            title = st.text_input("Title", key="dl_title", max_chars=120)
            experts = st.text_area("Experts (one name per line)", key="dl_experts")
            threshold = st.number_input("Converged when every IQR is below", min_value=0.001, max_value=0.5,
                                        value=0.05, step=0.005, format="%.3f", key="dl_threshold")
            opened = st.form_submit_button("Open session", disabled=not can(Permission.PROFILE_EDIT))
        if opened:
            try:
                sid = data.write(reg.open_session, actor, title, experts.splitlines(), threshold)
            except (RegisterError, HRIError) as error:
                show_error(error)
            else:
                st.session_state["dl_session"] = sid
                st.rerun()
    sessions = reg.list_sessions(data.get_store())  # uncached: a session changes per click
    if not sessions:
        st.info("No Delphi session yet.")
        return
    ids = [s["session_id"] for s in sessions]
    if st.session_state.get("dl_session") not in ids:
        st.session_state["dl_session"] = ids[0]
    sid = st.selectbox("Session", ids, key="dl_session",
                       format_func=lambda i: next(f"#{s['session_id']} {s['title']} ({s['status']})"
                                                  for s in sessions if s["session_id"] == i))
    session = reg.delphi_session(data.get_store(), sid)
    st.caption(escape_markdown(
        f"Facilitator {session['facilitator']} · experts {', '.join(session['experts'])} · "
        f"threshold IQR < {session['iqr_threshold']:g}"
        + (f" · finalised into draft v{session['profile_version']}" if session["profile_version"] else "")))
    current = session["rounds"][-1]
    st.metric("Current round", f"{current['round']} ({current['status']})")
    if current["status"] == "open":
        st.caption(f"Submitted so far: {escape_markdown(', '.join(current['submitted'])) or 'nobody'} (weights stay "
                   "hidden until the facilitator closes the round)")
    if session["status"] == "open" and current["status"] == "open" and actor.name in session["experts"]:
        own = reg.round_submissions(data.get_store(), actor, sid, current["round"])
        previous = own[0]["weights"] if own else {}
        with st.form("delphi_submit", enter_to_submit=False):
            st.markdown(f"**Your weights for round {current['round']}** (normalised on submit)")
            cols = st.columns(len(DIMENSION_LETTERS))
            weights = {d: cols[k].number_input(d, min_value=0.0, max_value=100.0, step=0.01, format="%.3f",
                                               value=float(previous.get(d, 1 / 7)), key=f"dl_w_{d}")
                       for k, d in enumerate(DIMENSION_LETTERS)}
            rationale = st.text_area("Rationale (optional)", key="dl_rationale", max_chars=2000)
            sent = st.form_submit_button("Submit my weights")
        if sent:
            try:
                data.write(reg.submit_weights, actor, sid, weights, rationale)
            except (RegisterError, HRIError) as error:
                show_error(error)
            else:
                st.rerun()
    if actor.name == session["facilitator"] and session["status"] == "open":
        c1, c2, c3 = st.columns(3)
        accept = c3.checkbox("Accept without convergence", key="dl_accept")
        try:
            if current["status"] == "open" and c1.button("Close round", key="dl_close"):
                data.write(reg.close_round, actor, sid)
                st.rerun()
            if current["status"] == "closed" and c1.button("Open next round", key="dl_next"):
                data.write(reg.open_next_round, actor, sid)
                st.rerun()
            if current["status"] == "closed" and c2.button("Finalise into a draft profile", key="dl_final",
                                                           type="primary"):
                version, _ = data.write(reg.finalise_delphi, actor, sid, accept_unconverged=accept)
                st.success(f"Draft version {version} created from the medians.", icon=":material/save:")
        except (RegisterError, HRIError) as error:
            show_error(error)
    for rnd in reversed(session["rounds"]):
        if rnd["summary"] is None:
            continue
        summary = rnd["summary"]
        verdict = "converged" if summary["converged"] else "not converged"
        st.markdown(f"**Round {rnd['round']}**: largest IQR {summary['max_iqr']:.4f} — {verdict}")
        spread, distances = summary_frames(summary)
        left, right = st.columns([3, 2])
        left.dataframe(spread, hide_index=True, key=f"dl_spread_{rnd['round']}")
        right.dataframe(distances, hide_index=True, key=f"dl_dist_{rnd['round']}")
        st.plotly_chart(delphi_spread_figure(summary), key=f"dl_fig_{rnd['round']}")
        for sub in reg.round_submissions(data.get_store(), actor, sid, rnd["round"]):
            if sub["rationale"]:
                st.markdown(f"*{escape_markdown(sub['expert'])}*: {escape_markdown(sub['rationale'])}")


def main() -> None:
    page_frame(filters=False)
    st.title("Weight elicitation")
    ahp, delphi = st.tabs(["AHP pairwise comparisons", "Delphi rounds"])
    with ahp:
        ahp_tab()
    with delphi:
        delphi_tab()


run_page(main)
