"""UI helpers of CLAIM's Authority step: cached reads of the checks and the two rule tables, the rows of the
rule editors, and the overview's figure (the tables' writes go through ``ui.framework.data.write``).

No business rules: the checks live in ``register.scoring.authority``, the tables in
``register.scoring.authority_rules``, the console's queries in ``register.console.queries``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from hri_core.authority import AuthorityRules
from register.console.queries import authority as authority_queries
from register.scoring import authority, authority_rules
from ui.features.figures import empty_figure
from ui.framework import data
from ui.framework.text import escape_html

UNCATEGORISED = "uncategorised"
RULE_COLUMNS = ("category", "max_tier", "source_types", "note")
# the overview figure's bars: the failures the review queue takes first, then the gaps of the register
FAILED = (authority.STALE, authority.INSUFFICIENT, authority.FORBIDDEN)
_COLORS = {authority.STALE: "#C62828", authority.INSUFFICIENT: "#EF6C00", authority.FORBIDDEN: "#6A1B9A"}
_GAP_COLOR = "#90A4AE"

CHECKS = ("allowed", "current", "authoritative")  # a claim's three checks, in the order they are read


def failed_reasons(claim: Any) -> str:
    """The reasons of a claim's failed or undecided checks (``CHECKS``), each said once, in check order.

    One cause can fail several checks with the same sentence (a source missing from the register is neither
    allowed, current nor authoritative): the reader gets it once, not once per check."""
    reasons = [str(claim[f"{check}_reason"]) for check in CHECKS if claim[check] is not True]
    return "; ".join(dict.fromkeys(reasons))


# --- cached reads ---------------------------------------------------------------------------------------

overview = data.cached(authority_queries.authority_overview)
findings = data.cached(authority.findings)
rules = data.cached(authority_rules.authority_rules)
rule_versions = data.cached(authority_rules.authority_rule_versions)
use_cases = data.cached(authority_rules.list_use_cases)
use_case_versions = data.cached(authority_rules.use_case_versions)
pending_use_cases = data.cached(authority_rules.pending_use_case_versions)
pending_rules = data.cached(authority_rules.pending_authority_rule_versions)


# --- the rule editor's rows -----------------------------------------------------------------------------


def rule_rows(rules: AuthorityRules) -> pd.DataFrame:
    """One editable row per category rule, then the ``uncategorised`` fallback."""
    rows = [{"category": name, "max_tier": rule.max_tier, "source_types": list(rule.source_types or []),
             "note": rule.note} for name, rule in [*rules.rules.items(), (UNCATEGORISED, rules.uncategorised)]]
    frame = pd.DataFrame(rows, columns=list(RULE_COLUMNS))
    frame["max_tier"] = frame["max_tier"].astype("Int64")
    return frame


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NA or \
        (isinstance(value, str) and not value.strip())


def rules_json(rows: list[dict], valid_until_inclusive: bool, name: str) -> dict:
    """The JSON form of ``AuthorityRules`` from the editor's rows (validated by the register on save)."""
    out: dict[str, Any] = {"name": name, "rules": {}, "valid_until_inclusive": bool(valid_until_inclusive)}
    for row in rows:
        category = None if _blank(row.get("category")) else str(row["category"]).strip()
        if category is None:
            continue
        types = row.get("source_types")
        rule = {"max_tier": None if _blank(row.get("max_tier")) else int(row["max_tier"]),
                "source_types": list(types) if types is not None and len(types) else None,
                "note": None if _blank(row.get("note")) else str(row["note"]).strip()}
        if category == UNCATEGORISED:
            out["uncategorised"] = rule
        else:
            out["rules"][category] = rule
    return out


# --- the overview's figure ------------------------------------------------------------------------------


def authority_figure(result: dict) -> go.Figure:
    """Bars of the SUPPORTED claims per Authority problem (``queries.authority.authority_overview``): the failures
    that send an answer to review in colour, unknown sources and undecided checks in grey."""
    title = "Supported claims resting on stale or unauthoritative sources"
    frame = result.get("by_problem")
    if frame is None or frame.empty or not result.get("supported_sourced"):
        return empty_figure(title)
    order = [*FAILED, *(p for p in frame["problem"] if p not in FAILED)]
    frame = frame.set_index("problem").reindex(order).fillna(0).reset_index()
    total = int(result["supported_sourced"])
    counts = frame["claims"].astype(int).tolist()
    fig = go.Figure(go.Bar(
        x=[escape_html(p) for p in frame["problem"]], y=counts,
        marker_color=[_COLORS.get(p, _GAP_COLOR) for p in frame["problem"]],
        customdata=[100 * n / total for n in counts], showlegend=False,
        hovertemplate="%{x}: %{y:,} supported claims (%{customdata:.1f}% of the sourced ones)<extra></extra>"))
    fig.update_layout(title=title, xaxis_title="Authority problem of the claim's source",
                      yaxis_title="SUPPORTED claims")
    fig.update_xaxes(type="category")
    fig.update_yaxes(rangemode="tozero")
    return fig
