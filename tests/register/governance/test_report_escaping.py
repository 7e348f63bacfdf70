"""The Markdown release report shows user and data text as typed (issue 34, class 9).

The command line takes any actor name (``HRI_ACTOR``) and a sign-off any reason: written into the report as they
were, a name such as ``**x** ![i](http://...)`` rendered bold and loaded an image wherever the report was viewed.
The report is rendered here by a CommonMark renderer (tables on, raw HTML passed through as viewers do): nothing
the data holds may become a tag. The register's escaper is ``ui.framework.text``'s, copied (the register does not
import ``ui``): a test holds the two equal.
"""

from __future__ import annotations

import html as html_text

import pytest

from register import Actor, Store
from register.db import export
from register.governance import checklist as chk
from register.governance import report
from tests.ui.test_text import PAYLOADS
from ui.framework import text

HOSTILE = ("Olive **bold** _it_ ![i](http://127.0.0.1:9/actor.png) [l](javascript:alert(1)) "
           "<img src=http://127.0.0.1:9/raw.png onerror=alert(1)> | cell | `tick` :red[x] www.evil.example $x$")


def test_the_markdown_release_report_escapes_the_actor_name_and_every_reason(register_cli):
    markdown_it = pytest.importorskip("markdown_it")
    cli = register_cli(HOSTILE)
    assert cli("init").returncode == 0
    assert cli("users", "add", "rita", "--role", "reviewer").returncode == 0
    assert cli("checklist", "run", "--record").returncode == 0
    store = Store(cli.db)
    try:
        run = store.scalar("SELECT max(run_id) FROM checklist_runs")
        chk.sign(store, Actor("rita", "reviewer"), run, {
            c.no: {"decision": "waived", "reason": f"{HOSTILE} item {c.no}\n# heading\n<script>alert(1)</script>"}
            for c in chk.CHECKS})
        md = report.report_markdown(store, run)
    finally:
        store.close()
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    for tag in ("<img", "<a ", "<script", "<em>", "<code>tick", "<h1>heading"):
        assert tag not in html, tag
    assert html.count("<strong>") == md.count("**") // 2  # only the report's own bold: names, outcomes
    assert html.count("<h1>") == 1 and html.count("<table>") == 2  # the report's title, its two tables
    # the name reads as typed (autolink literals broken by an invisible word joiner)
    shown = html_text.escape(HOSTILE.replace("http:", "http:\u2060").replace("www", "www\u2060"), quote=False)
    assert f"Run by <strong>{shown}</strong>" in html
    assert f"- Run by **{export.markdown_line(HOSTILE)}** (system)" in md
    assert "item 1: waived - " + export.markdown_line(f"{HOSTILE} item 1\n# heading") in md


@pytest.mark.parametrize("payload", PAYLOADS)
def test_the_registers_markdown_escaper_is_the_consoles(payload):
    assert export.escape_markdown(payload) == text.escape_markdown(payload)
    assert export.code_span(payload) == text.code_span(payload)
    assert export.MARKDOWN_SPECIAL == text.MARKDOWN_SPECIAL and export.WORD_JOINER == text.WORD_JOINER
    line = export.markdown_line(payload)
    assert "\n" not in line and "\r" not in line
