"""Claim highlighting (ui/features/highlight.py): tolerant alignment of claims to the answer, segments, the HTML."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from hri_core import Label, default_profile
from tests.helpers.paths import REPO_ROOT
from ui.features.highlight import (
    LABEL_COLORS,
    OTHER_COLOR,
    align_claims,
    answer_html,
    highlight_pieces,
    highlight_segments,
    label_color,
    legend_html,
    worst_label,
)


def _demo(response_id: str) -> dict:
    with (REPO_ROOT / "data" / "demo" / "factcheck_gpt.jsonl").open(encoding="utf-8") as f:
        return next(r for r in map(json.loads, f) if r["response_id"] == response_id)


# --- labels ---------------------------------------------------------------------------------------------


def test_label_colours_are_the_okabe_ito_palette_one_per_label():
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#999999"}
    assert set(LABEL_COLORS.values()) == okabe_ito and len(LABEL_COLORS) == len(Label)
    assert label_color(Label.CONTRADICTED) == label_color("CONTRADICTED") == "#D55E00"
    assert label_color("NOT_A_LABEL") == OTHER_COLOR and label_color(None) == OTHER_COLOR


def test_worst_label_by_contribution_then_severity():
    contributions = default_profile().contributions  # keyed by Label enums
    assert worst_label(["SUPPORTED", "PARTIAL"], contributions) == "PARTIAL"
    assert worst_label(["ACCESS_GAP", "UNSUPPORTED"], contributions) == "UNSUPPORTED"  # 0.75 > 0.60
    # ties at 0.75: UNSUPPORTED before OUTDATED before OUT_OF_SCOPE, whatever the input order
    assert worst_label(["OUT_OF_SCOPE", "OUTDATED", "UNSUPPORTED"], contributions) == "UNSUPPORTED"
    assert worst_label([Label.VALIDATED_NEGATIVE_FEEDBACK, Label.CONTRADICTED], contributions) == "CONTRADICTED"
    # the profile decides first; with no contributions, severity alone
    assert worst_label(["CONTRADICTED", "ACCESS_GAP"], {"CONTRADICTED": 0.5, "ACCESS_GAP": 0.9}) == "ACCESS_GAP"
    assert worst_label(["PARTIAL", "ACCESS_GAP"], {}) == "ACCESS_GAP"
    assert worst_label([], contributions) is None


# --- alignment ------------------------------------------------------------------------------------------


def test_every_claim_of_fcgpt_017_lands_on_its_line():
    # nine decontextualised claims ("Brett Kavanaugh is a female U.S. Supreme Court justice.") of which only one
    # is word for word in the answer; the CONTRADICTED claim 5 belongs on the Kavanaugh line
    record = _demo("fcgpt-017")
    answer = record["answer"]
    found = align_claims(answer, [c["text"] for c in record["claims"]])
    assert all(found), [c["text"] for c, a in zip(record["claims"], found, strict=True) if a is None]
    spans = [answer[a.start:a.end] for a in found]
    assert spans[0].startswith("there have been a total of four female justices") and found[0].method == "exact"
    for n, name in ((2, "Sandra Day O'Connor"), (3, "Ruth Bader Ginsburg"), (4, "Sonia Sotomayor"),
                    (5, "Brett Kavanaugh"), (6, "Sandra Day O'Connor"), (7, "Ruth Bader Ginsburg"),
                    (8, "Sonia Sotomayor"), (9, "Brett Kavanaugh")):
        assert name in spans[n - 1] and "\n" not in spans[n - 1], (n, spans[n - 1])
    pieces = highlight_pieces(answer, record["claims"], default_profile().contributions)
    kavanaugh = next(p for p in pieces if "Brett Kavanaugh" in p.text)
    assert kavanaugh.label == "CONTRADICTED" and set(kavanaugh.claims) == {5, 9}
    assert {n for p in pieces for n in p.claims} == set(range(1, 10))


def test_alignment_tolerates_case_whitespace_and_punctuation():
    answer = "Sandra Day O’Connor  was\nappointed in 1981;  she served until 2006."
    found = align_claims(answer, ["sandra day o'connor was appointed in 1981", "SHE SERVED UNTIL 2006"])
    assert [f.method for f in found] == ["normalised", "exact"]
    assert answer[found[0].start:found[0].end] == "Sandra Day O’Connor  was\nappointed in 1981"


def test_a_claim_about_nothing_in_the_answer_is_not_placed():
    answer = "The contract runs for two years. Fees are paid monthly."
    found = align_claims(answer, ["Penguins live in Antarctica.", "", None, "The fees are paid every month."])
    assert found[0] is None and found[1] is None and found[2] is None
    assert answer[found[3].start:found[3].end] == "Fees are paid monthly."


def test_most_demo_claims_are_placed():
    with (REPO_ROOT / "data" / "demo" / "factcheck_gpt.jsonl").open(encoding="utf-8") as f:
        records = [json.loads(line) for line in f]
    placed = total = 0
    for record in records:
        found = align_claims(record["answer"], [c["text"] for c in record["claims"]])
        placed += sum(a is not None for a in found)
        total += len(found)
    assert placed / total > 0.95, (placed, total)


# --- segments ---------------------------------------------------------------------------------------------

ANSWER = ("The SLA includes 24/7 support. Fees are $1,200 (per year). "
          "Support hours: Mon-Fri. The SLA includes 24/7 support? Yes.")


def _check_reassembles(segments, answer):
    assert "".join(text for text, _ in segments) == answer
    assert all(text for text, _ in segments)  # no empty segments


def test_highlight_segments_labels_the_right_spans():
    claims = [
        {"text": "the sla includes 24/7 support", "labels": ["CONTRADICTED"]},
        {"text": "Fees are $1,200 (per year).", "labels": ["SUPPORTED"]},  # regex specials: $ ( ) .
        {"text": "The SLA includes 24/7 support", "labels": ["OUTDATED"]},  # the second occurrence: the first is taken
        {"text": "not in the answer at all, penguins", "labels": ["UNSUPPORTED"]},
    ]
    segments = highlight_segments(ANSWER, claims)
    _check_reassembles(segments, ANSWER)
    assert [(t, lab) for t, lab in segments if lab] == [
        ("The SLA includes 24/7 support", "CONTRADICTED"),  # original casing kept
        ("Fees are $1,200 (per year).", "SUPPORTED"),
        ("The SLA includes 24/7 support", "OUTDATED"),
    ]


def test_overlapping_claims_are_both_marked_with_the_worst_label_where_they_meet():
    answer = "Revenue grew 12% in 2025 and margins rose."
    claims = [
        {"text": "grew 12% in 2025", "labels": ["SUPPORTED"]},
        {"text": "12% in 2025 and margins", "labels": ["CONTRADICTED"]},
        {"text": "margins rose", "labels": ["PARTIAL", "UNSUPPORTED"]},
    ]
    pieces = highlight_pieces(answer, claims, default_profile().contributions)
    _check_reassembles([(p.text, p.label) for p in pieces], answer)
    assert [(p.text, p.label, p.claims) for p in pieces if p.claims] == [
        ("grew ", "SUPPORTED", (1,)), ("12% in 2025", "CONTRADICTED", (1, 2)), (" and ", "CONTRADICTED", (2,)),
        ("margins", "CONTRADICTED", (2, 3)), (" rose", "UNSUPPORTED", (3,))]
    assert [p.ends for p in pieces if p.ends] == [(1,), (2,), (3,)]


def test_highlight_segments_edge_cases():
    assert highlight_segments("", [{"text": "x", "labels": ["SUPPORTED"]}]) == []
    assert highlight_segments("Plain answer.", []) == [("Plain answer.", None)]
    answer = "Exactly this."
    assert highlight_segments(answer, [{"text": "", "labels": ["CONTRADICTED"]},
                                       {"text": "this", "labels": []},
                                       {"text": "  exactly THIS.  ", "labels": ["OUTDATED"]}]) == [
        (answer, "OUTDATED")]
    answer = "a+b=c and a.b*c"
    segments = highlight_segments(answer, [{"text": "a.b*c", "labels": ["PARTIAL"]},
                                           {"text": "a+b", "labels": ["SUPPORTED"]}])
    _check_reassembles(segments, answer)
    assert [s for s in segments if s[1]] == [("a+b", "SUPPORTED"), ("a.b*c", "PARTIAL")]


# --- HTML -------------------------------------------------------------------------------------------------


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_answer_html_escapes_every_character_and_keeps_line_breaks():
    answer = 'Line <img src=x onerror=alert(1)> "one"\r\nLine two & <script>alert(2)</script>\rthree'
    claims = [{"text": "<script>alert(2)</script>", "labels": ["CONTRADICTED"]}]
    html = answer_html(highlight_pieces(answer, claims))
    parsed = _Tags()
    parsed.feed(html)
    assert [t for t, _ in parsed.tags] == ["div", "mark", "sup"]  # nothing from the answer became a tag
    shown = "".join(parsed.text)
    assert shown == answer.replace("\r\n", "\n").replace("\r", "\n").replace("</script>", "</script>1", 1)
    assert "white-space: pre-wrap" in parsed.tags[0][1]["style"]
    mark = parsed.tags[1][1]
    assert mark["data-label"] == "CONTRADICTED" and LABEL_COLORS["CONTRADICTED"] in mark["style"]
    assert parsed.tags[2][1]["data-claims"] == "1"


def test_legend_names_each_label_present_in_its_colour():
    parsed = _Tags()
    parsed.feed(legend_html(["SUPPORTED", "CONTRADICTED", "SUPPORTED"]))
    assert re.findall(r"(CONTRADICTED|SUPPORTED)", "".join(parsed.text)) == ["CONTRADICTED", "SUPPORTED"]
    styles = " ".join(a.get("style", "") for _, a in parsed.tags)
    assert LABEL_COLORS["CONTRADICTED"] in styles and LABEL_COLORS["SUPPORTED"] in styles


@pytest.mark.parametrize("label", ["<b>x</b>", "CONTRADICTED\" onmouseover=\"alert(1)"])
def test_labels_in_attributes_cannot_break_out(label):
    html = answer_html(highlight_pieces("abc", [{"text": "abc", "labels": [label]}]))
    parsed = _Tags()
    parsed.feed(html)
    assert [t for t, _ in parsed.tags] == ["div", "mark", "sup"]
    assert parsed.tags[1][1]["data-label"] == label and "onmouseover" not in parsed.tags[1][1]
