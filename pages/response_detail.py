"""Response detail: the answer with each claim highlighted, why it scored as it did, its history."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from hri_core.explain import explain
from register.access.sources import RESTRICTED_NOTE
from register.errors import NotFound
from register.scoring.reproduce import reproduce
from ui import data, figures
from ui.auth import current_actor
from ui.errors import show_error
from ui.page import run_page
from ui.shell import page_frame
from ui.text import escape_markdown

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}
# Streamlit's markdown colour names, by label (claims are highlighted in the colour of their worst label)
MARKDOWN_COLOURS = {"SUPPORTED": "green", "PARTIAL": "orange", "UNSUPPORTED": "orange", "CONTRADICTED": "red",
                    "OUTDATED": "violet", "OUT_OF_SCOPE": "blue", "ACCESS_GAP": "gray",
                    "VALIDATED_NEGATIVE_FEEDBACK": "red"}


def highlighted_answer(answer: str, claims: pd.DataFrame, worst: dict[str, str]) -> str:
    """Markdown of the answer with claim spans coloured; all user text escaped."""
    segments = figures.highlight_segments(
        answer,
        [{"text": t, "labels": [worst[c]]} for c, t in zip(claims["claim_id"], claims["text"], strict=True) if t])
    parts = []
    for text, label in segments:
        safe = escape_markdown(text)
        parts.append(f":{MARKDOWN_COLOURS[label]}-background[{safe}]" if label else safe)
    return "".join(parts)


def pick_response() -> str | None:
    rid = st.query_params.get("response_id")
    typed = st.text_input("Response id", value=rid or "", key="detail_response_id",
                          placeholder="Open a response from the Responses page, or type its id")
    typed = typed.strip()
    if typed and typed != rid:
        st.query_params["response_id"] = typed
    return typed or None


def main() -> None:
    page_frame()
    st.title("Response detail")
    rid = pick_response()
    if not rid:
        st.info("Select a response on the Responses or Review queue page, or type its id above.")
        return
    detail = data.response_detail(rid)
    if detail is None:
        show_error(NotFound(f"response {rid!r} does not exist"))
        return
    try:
        repro = reproduce(data.get_store(), rid)
    except NotFound as error:
        show_error(error)
        return
    result, response = repro.recomputed, detail["response"]
    profile = data.get_profile(result.profile_version)
    head = st.columns([1, 1, 1, 3])
    head[0].metric("HRI score", f"{result.score:.1f}")
    head[1].metric("Band", result.band)
    head[2].metric("Action", result.action)
    with head[3]:
        st.caption(f"{response.get('use_case') or '—'} · {response.get('model') or '—'} · revision "
                   f"{response['revision']} · profile v{result.profile_version} · scored as of "
                   f"{result.as_of:%Y-%m-%d %H:%M} UTC")
        if repro.matches:
            st.success("Recomputed from the stored labels and profile: matches the stored score.",
                       icon=":material/verified:")
        else:
            st.error("Recomputation differs from the stored score: " + "; ".join(repro.differences))
    st.info(explain(result, data.load_response(rid), profile), icon=":material/lightbulb:")

    claims = detail["claims"]
    by_id = {c.claim_id: c for c in result.claims}
    worst = {cid: figures.worst_label([lab.value for lab in by_id[cid].labels],
                                      {lab.value: profile.contributions[lab] for lab in by_id[cid].labels})
             for cid in claims["claim_id"]}
    st.subheader("Question")
    st.markdown(escape_markdown(response.get("question") or "—"))
    st.subheader("Answer")
    st.markdown(highlighted_answer(response.get("answer") or "", claims, worst) or "—")
    present = sorted(set(worst.values()), key=list(MARKDOWN_COLOURS).index)
    st.caption("Claims are highlighted in the colour of their worst label: " + " · ".join(
        f":{MARKDOWN_COLOURS[label]}-background[{label}]" for label in present))

    st.subheader("Claims")
    claims = data.claims_for_role(claims, current_actor().role)  # restricted sources: span withheld
    if (claims["source_access"] == RESTRICTED_NOTE).any():
        st.caption(":material/lock: Some claims rest on a restricted source: you see that the source exists, "
                   "not what it says.")
    table = claims.assign(
        contribution=[max(by_id[c].contributions.values()) for c in claims["claim_id"]],
        floor=[by_id[c].floor or None for c in claims["claim_id"]],
    )
    st.dataframe(table[["claim_id", "text", "labels", "dimensions", "criticality", "contribution", "floor",
                        "source_id", "source_access", "span"]], hide_index=True,
                 column_config={"contribution": st.column_config.NumberColumn("Max m_ik", format="%.3f"),
                                "floor": st.column_config.NumberColumn("Floor", format="%.2f")})
    left, right = st.columns(2)
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
    decisions = data.decisions_for(rid)
    if not decisions.empty:
        st.subheader("Review decisions")
        st.dataframe(decisions, hide_index=True)


run_page(main)
