"""The one escaping helper: what it does to hostile text, checked structurally (the Chromium test
``tests/e2e/test_browser_injection.py`` checks what a browser makes of it)."""

from __future__ import annotations

import re

import pytest

from ui.framework.text import MARKDOWN_SPECIAL, WORD_JOINER, code_span, compact_count, escape_markdown

PAYLOADS = [
    "![x](http://127.0.0.1:9/x.png)",
    "[click](javascript:alert(1))",
    "<img src=http://127.0.0.1:9/raw.png onerror=alert(1)>",
    "http://127.0.0.1:9/autolink and HTTPS://evil.example/x",
    "www.evil.example/path",
    "mail eve@evil.example or mailto:eve@evil.example",
    "`code` ``two`` ```three```",
    "$x^2$ and $$\\int$$",
    ":red[red] :material/home: :smile:",
    "Title\n===",
    "&lt;b&gt; &amp; &#x3C;",
    "| a | b |\n|---|---|",
    "# heading\n> quote\n- item\n1. item",
    "line\r\nline\rline\nline",
    "back\\slash \\[not a link\\](x)",
    "héllo \u202e wörld \u0000 end",
]


def _unescape(text: str) -> str:
    """What the markdown renderer shows for an escaped text: escapes resolved, hard breaks as newlines."""
    shown = re.sub(r"\\\n", "\n", text)
    shown = re.sub(r"\\(.)", r"\1", shown)
    return shown.replace(WORD_JOINER, "")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_escaped_text_shows_the_input_and_leaves_no_markdown_character_unescaped(payload):
    escaped = escape_markdown(payload)
    normalised = payload.replace("\r\n", "\n").replace("\r", "\n")
    assert _unescape(escaped) == normalised
    unescaped = re.sub(r"\\.", "", escaped, flags=re.DOTALL)
    assert not [ch for ch in unescaped if ch in MARKDOWN_SPECIAL], escaped


@pytest.mark.parametrize("text", ["http://127.0.0.1:9/x", "https://evil.example", "see www.evil.example",
                                  "eve@evil.example", "HTTP://EVIL.EXAMPLE"])
def test_autolink_literals_are_broken_in_the_parsed_text(text):
    # GFM finds autolinks in the parsed text (escapes resolved), so the pattern itself must not survive
    shown = re.sub(r"\\(.)", r"\1", escape_markdown(text))
    assert not re.search(r"(?i)https?://|\bwww\.|@[\w-]", shown), shown


def test_line_breaks_are_kept_as_hard_breaks():
    assert escape_markdown("one\ntwo\r\nthree") == "one\\\ntwo\\\nthree"


@pytest.mark.parametrize("text", ["plain", "a`b", "ends with `", "`starts", "a ``` b ```` c", "", "x\ny"])
def test_code_span_cannot_be_closed_by_the_text(text):
    span = code_span(text)
    fence = re.match(r"`+", span).group(0)
    inner = span[len(fence):-len(fence)]
    assert span.endswith(fence) and inner.startswith(" ") and inner.endswith(" ")
    assert all(len(run) < len(fence) for run in re.findall(r"`+", inner))
    assert inner[1:-1] == text.replace("\n", " ")


@pytest.mark.parametrize("n, shown", [(0, "0"), (999_999, "999,999"), (1_000_000, "1.0M"), (10_000_095, "10.0M"),
                                      (59_854_667, "59.9M"), (2_400_000_000, "2.4B"), (-1_500_000, "-1.5M")])
def test_a_count_is_short_enough_for_a_metric_tile(n, shown):
    assert compact_count(n) == shown
