"""Escaping: the one place every user- or data-controlled string goes through before markdown.

Streamlit renders ``st.markdown``, ``st.caption``, ``st.info``, ``st.error``, ``st.toast`` bodies and the
labels of widgets, metrics (label, value and delta), expanders, tabs and page links as GitHub-flavoured
markdown, so text from users or data (names, ids, statements, error messages that quote input) could
otherwise format, link or load something (``[x](javascript:...)``, ``![x](http://...)``, ``:red[...]``,
``$math$``, raw HTML). Two helpers:

- ``escape_markdown(text)`` for prose: every markdown-significant character is backslash-escaped, and
  GitHub's *autolink literals* (``http://...``, ``www.x.y``, ``a@b.c``) and emoji / icon shortcodes
  (``:smile:``, ``:material/home:``) are defused with an invisible WORD JOINER (U+2060), because the
  markdown renderer finds those after parsing, escapes or not. Line breaks are kept as line breaks.
- ``code_span(text)`` for identifiers and names (response ids, use cases, models, accounts): an inline
  code span whose fence is longer than any backtick run in the text, so nothing inside is interpreted
  (no links, images, math, directives, HTML) and the text copies exactly as stored.

- ``escape_html(text)`` for the few places that build HTML themselves: the highlighted answer
  (``st.html``) and Plotly labels, names and hover text (Plotly renders a subset of HTML, ``<a href>``
  included, and decodes entities back to the characters typed).

``st.dataframe``, ``st.text``, ``st.code`` and ``st.json`` show text literally and need none of them;
``st.table`` renders markdown in its cells, so the console does not use it for data.
"""

from __future__ import annotations

import html
import re

__all__ = ["MARKDOWN_SPECIAL", "WORD_JOINER", "code_span", "escape_html", "escape_markdown"]

# every ASCII punctuation character CommonMark lets a backslash escape that markdown, GFM or Streamlit's
# extensions give a meaning to: emphasis, code, links/images, headings (incl. setext "==="), lists,
# tables, strikethrough, HTML and entities, math ($), directives and icons (:name[...] / :name:)
MARKDOWN_SPECIAL = "\\`*_{}[]()#+-.!|<>~$:=&"
WORD_JOINER = "\u2060"

# GFM autolink literals, emoji and icon shortcodes are found in the *parsed* text (escapes already
# resolved): break the patterns their matchers need ("http://", "https://", "www.", "x@domain",
# ":name:", ":material/name:") with a zero-width word joiner.
_DEFUSE = re.compile(r"(?i)(?<=https:)(?=//)|(?<=http:)(?=//)|(?<=\bwww)(?=\.)|(?<=@)(?=[\w-])|(?<=:)(?=[\w+/-]+:)")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def escape_markdown(text: object) -> str:
    """``text`` shown as typed, never formatted, linked or loaded: markdown characters backslash-escaped,
    autolink literals defused, line breaks kept (as markdown hard breaks)."""
    defused = _DEFUSE.sub(WORD_JOINER, str(text))
    escaped = "".join("\\" + ch if ch in MARKDOWN_SPECIAL else ch for ch in defused)
    # a lone newline would be joined into one line; a backslash before the newline is a hard break
    return _LINE_BREAK.sub("\\\\\n", escaped)


def code_span(text: object) -> str:
    """``text`` as an inline code span: shown literally in monospace, copied exactly.

    The fence is one backtick longer than the longest run of backticks in ``text`` and padded with a
    space on each side (CommonMark strips exactly one from each side), so a backtick in the text can
    never close the span. Line breaks inside become spaces (a code span is one line).
    """
    value = _LINE_BREAK.sub(" ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {value} {fence}"


def escape_html(text: object) -> str:
    """``text`` for HTML (``st.html``, Plotly labels): ``& < > " '`` as character references, so no tag,
    attribute or link can start; shown exactly as typed. Plotly's template syntax ``%{...}`` is broken too."""
    return html.escape(str(text), quote=True).replace("%{", "%&#123;")


def compact_count(n: int) -> str:
    """A count short enough for a metric tile: "123,456" below a million, then "10.0M", "1.2B" (a tile cuts a
    longer figure: "10,000,..."). The exact figure belongs in the tile's help."""
    n = int(n)
    for size, suffix in ((1_000_000_000, "B"), (1_000_000, "M")):
        if abs(n) >= size:
            return f"{n / size:,.1f}{suffix}"
    return f"{n:,}"
