"""Response detail: the answer with each claim highlighted, why it scored as it did, its history."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.explain import explain
from hri_core.lens import steps_text
from register.access.sources import RESTRICTED_NOTE, mask_restricted_claims
from register.console.queries.filters import NO_CLAIMS_STATE
from register.errors import NotFound
from ui.features import figures, responses, risk_acceptances
from ui.features.authority import failed_reasons
from ui.features.figures import PLOT_CONFIG
from ui.features.highlight import answer_html, highlight_pieces, legend_html, worst_label
from ui.framework import data
from ui.framework.auth import current_actor
from ui.framework.errors import show_error
from ui.framework.page import run_page
from ui.framework.shell import page_frame
from ui.framework.text import code_span, escape_markdown

DECISION_LABELS = {"release": "Release", "release_with_caution": "Release with caution", "block": "Block",
                   "send_back": "Sent back", "escalate": "Escalated", "ask": "Asked for clarification",
                   "abstain": "Abstained"}


def render_answer(answer: str, claims: pd.DataFrame, worst: dict[str, str]) -> None:
    """The answer with every claim marked in the colour of its worst label, its claim number after it, line
    breaks kept, and a legend (``ui.features.highlight``; every character of the answer escaped)."""
    pieces = highlight_pieces(answer, [{"text": t, "labels": [worst[c]]}
                                       for c, t in zip(claims["claim_id"], claims["text"], strict=True)])
    if not answer:
        st.caption("—")
        return
    st.html(answer_html(pieces))
    marked = {n for p in pieces for n in p.claims}
    labels = [p.label for p in pieces if p.label]
    if labels:
        st.html(legend_html(labels))
    if len(marked) < len(claims):
        missing = [str(n) for n in range(1, len(claims) + 1) if n not in marked]
        st.caption(f"Not found in the answer: claim {', '.join(missing)} (see the table below).")


def lens_line(stored: dict) -> str:
    """Which lens scored this answer: profile version, mitigation policy version, CLAIM steps run, lens version."""
    steps = stored.get("claim_steps")
    policy = stored.get("mitigation_policy_version")
    lens = stored.get("lens_version")
    return (f"Lens: profile v{stored.get('profile_version')}, "
            f"mitigation policy {'v' + str(policy) if policy is not None else 'not run'}, steps "
            f"{escape_markdown(steps_text(None if steps is None else list(steps), stored.get('human_review')))}"
            f" ({'lens version ' + str(lens) if lens is not None else 'no use-case lens: the default'})")


def header(result, response: dict, decision: dict | None, stored: dict | None = None) -> None:
    """Score, band (or "No claims"), action, the mitigation action and the review decision of this revision.

    ``stored``: the stored score row (its mitigation decision and the floor that raised the action).
    """
    stored = stored or {}
    # One wrapping row of metrics, each as wide as its value: fixed columns cut "escalate" or
    # "Release with caution" to "escal…".
    head = st.container(horizontal=True, gap="large")
    verdict = stored.get("decision")
    head.metric("Decision", escape_markdown(verdict or "—"), width="content",
                help="What to do with the answer: the most severe of the band's action, the floors' minimum actions, "
                     "failed Authority checks and the mitigation (its reasons are listed below)")
    if result.no_claims:
        head.metric("HRI score", "—", width="content", help="A response without claims is not judged: it has no score")
        head.metric("Band", NO_CLAIMS_STATE, width="content")
    else:
        head.metric("HRI score", f"{result.score:.1f}", width="content")
        head.metric("Band", escape_markdown(result.band), width="content")
    raised = result.action_floor
    head.metric("HRI action", escape_markdown(result.action), width="content",
                help=(f"Raised from {result.band_action} by the floor {raised.rule_id} on claim {raised.claim_id}, "
                      f"whose minimum action is {raised.min_action}") if raised else "The band's action")
    mitigation = stored.get("mitigation_action")
    head.metric("Mitigation", escape_markdown(mitigation or "—"), width="content",
                help="CLAIM's Mitigation step (seed 004): answer, revise, ask, abstain or escalate")
    shown = "—" if decision is None else DECISION_LABELS.get(decision["decision"], decision["decision"])
    head.metric("Review decision", escape_markdown(shown), width="content",
                help="Not decided yet" if decision is None else "The reason is in the table at the bottom")
    st.caption(f"{code_span(response.get('use_case') or '—')} · {code_span(response.get('model') or '—')} · "
               f"revision {response['revision']} · profile v{result.profile_version} · scored as of "
               f"{result.as_of:%Y-%m-%d %H:%M} UTC")
    if decision is not None:
        st.caption(f"Decided by {code_span(decision['decided_by'])} ({escape_markdown(decision['decided_role'])})"
                   f" at {decision['decided_at']:%Y-%m-%d %H:%M} UTC")
    st.caption(lens_line(stored))
    reasons = list(stored.get("decision_reasons") or [])
    if reasons:
        st.markdown("**Why this decision**\n\n" + "\n".join(f"- {escape_markdown(str(r))}" for r in reasons))
    if stored.get("mitigation_reason"):
        st.caption(f"Mitigation (policy v{stored.get('mitigation_policy_version')}): "
                   f"{escape_markdown(stored['mitigation_reason'])}")
    if raised is not None:
        st.caption(f"Action raised from {escape_markdown(result.band_action or '—')} to "
                   f"{escape_markdown(result.action)}: floor {code_span(raised.rule_id)} fired on claim "
                   f"{code_span(raised.claim_id)} and requires at least {escape_markdown(raised.min_action or '—')}.")


def authority_checks(claims: pd.DataFrame) -> None:
    """Each sourced claim's Authority checks with their reasons; proposed labels said to be proposals."""
    sourced = claims[claims["authority"] != "no source"]
    if sourced.empty:
        return
    flagged = sourced[sourced["authority"] != "ok"]
    for _, claim in flagged.iterrows():
        proposals = list(claim["proposals"] or [])
        reasons = failed_reasons(claim)
        text = f"Claim {code_span(claim['claim_id'])} on {code_span(claim['source_id'])}: " \
               f"{escape_markdown(claim['authority'])} — {escape_markdown(reasons)}"
        if proposals:
            st.warning(text + ". Proposed, not applied: the stored labels stay as they are until a reviewer "
                              "decides.", icon=":material/gpp_maybe:")
        else:
            st.caption(text)
    with st.expander(f"Authority checks of {len(sourced)} sourced claim(s)"):
        st.dataframe(sourced[["claim_id", "source_id", "allowed", "allowed_reason", "current", "current_reason",
                              "authoritative", "authoritative_reason", "proposals"]], hide_index=True)


def pick_response() -> str | None:
    rid = st.query_params.get("response_id")
    typed = st.text_input("Response id", value=rid or "", key="detail_response_id",
                          placeholder="Open a response from the Responses page, or type its id")
    typed = typed.strip()
    if typed and typed != rid:
        st.query_params["response_id"] = typed
    return typed or None


def main() -> None:
    page_frame(filters=False)
    st.title("Response detail")
    rid = pick_response()
    if not rid:
        st.info("Select a response on the Responses or Review queue page, or type its id above.")
        return
    detail = responses.response_detail(rid)
    if detail is None:
        show_error(NotFound(f"response {rid!r} does not exist"))
        return
    try:
        repro = responses.reproduction(rid, tuple(detail["keys"].items()))
    except NotFound as error:
        show_error(error)
        return
    result, response = repro.recomputed, detail["response"]
    profile = data.version_profile(result.profile_version)
    decisions = responses.decisions_for(rid)
    this_revision = decisions[decisions["revision"] == response["revision"]] if not decisions.empty else decisions
    header(result, response, None if this_revision.empty else this_revision.iloc[-1].to_dict(), detail["score"])
    if repro.matches:
        st.success("Recomputed from the stored labels and profile: matches the stored score.",
                   icon=":material/verified:")
    else:
        st.error("Recomputation differs from the stored score: " + escape_markdown("; ".join(repro.differences)))
    st.info(escape_markdown(explain(result, repro.response, profile)), icon=":material/lightbulb:")

    claims = detail["claims"]
    by_id = {c.claim_id: c for c in result.claims}
    worst = {cid: worst_label([lab.value for lab in by_id[cid].labels],
                              {lab.value: profile.contributions[lab] for lab in by_id[cid].labels})
             for cid in claims["claim_id"]}
    st.subheader("Question")
    st.markdown(escape_markdown(response.get("question") or "—"))
    st.subheader("Answer")
    render_answer(response.get("answer") or "", claims, worst)

    st.subheader("Claims")
    # restricted sources: span withheld (never cached)
    claims = mask_restricted_claims(data.get_store(), claims, current_actor().role)
    if (claims["source_access"] == RESTRICTED_NOTE).any():
        st.caption(":material/lock: Some claims rest on a restricted source: you see that the source exists, "
                   "not what it says.")
    table = claims.assign(
        contribution=[max(by_id[c].contributions.values()) for c in claims["claim_id"]],
        floor=[by_id[c].floor or None for c in claims["claim_id"]],
    )
    st.dataframe(table[["claim_id", "text", "labels", "dimensions", "criticality", "contribution", "floor",
                        "category", "is_core", "contradicted_by", "source_id", "authority", "source_access",
                        "span"]],
                 hide_index=True,
                 column_config={"contribution": st.column_config.NumberColumn("Max m_ik", format="%.3f"),
                                "floor": st.column_config.NumberColumn("Floor", format="%.2f"),
                                "authority": st.column_config.TextColumn("Authority", width="medium")})
    authority_checks(claims)
    # drawn only when opened (a lazy expander reruns the page): the two charts were most of what a browser spends
    # on this page; what they show is in the explanation and the claims table above
    charts = st.expander("Charts: the score's make-up and its history", key="detail_charts", on_change="rerun")
    if charts.open:
        left, right = charts.columns(2)
        with left:
            floor = result.decisive_floor
            st.plotly_chart(figures.contribution_figure(
                {d.value: v for d, v in result.dimensions.items()}, {d.value: w for d, w in profile.weights.items()},
                result.hri_add, result.hri,
                {"claim_id": floor.claim_id, "rule_id": floor.rule_id, "value": floor.value} if floor else None,
                result.band, result.action), config=PLOT_CONFIG)
        with right:
            st.plotly_chart(figures.score_history_figure(detail["history"], profile.bands), config=PLOT_CONFIG)
    if not detail["floors"].empty:
        st.caption("Safety floors that fired")
        st.dataframe(detail["floors"], hide_index=True)
    if not decisions.empty:
        st.subheader("Review decisions")
        st.dataframe(decisions, hide_index=True)
    risk_acceptances.answer_section(rid)


run_page(main)
