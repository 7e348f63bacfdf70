"""The Response detail names the lens its score ran under (issue 37, item 3): profile version, mitigation policy
version, the CLAIM steps run and the lens version."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register import SYSTEM
from register.scoring.lens_versions import set_lens
from tests.helpers.accounts import login
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")


def _detail(response_id: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    login(at, "reviewer")
    at.query_params["response_id"] = response_id
    at.run()
    return at.switch_page("pages/response_detail.py").run()


def test_the_detail_says_which_lens_applied(seeded_db):
    at = _detail("paper-table-v")
    assert not at.exception, at.exception
    assert any(c.value.startswith("Lens: profile v1, mitigation policy v1, steps Scope, Link, Inference, Authority, "
                                  "Mitigation (no use-case lens") for c in at.caption), [c.value for c in at.caption]
    use_case = seeded_db.scalar("SELECT use_case FROM responses WHERE response_id = 'paper-table-v' AND is_current")
    version = set_lens(seeded_db, SYSTEM, use_case, steps=["link", "inference", "mitigation"], human_review=True,
                       reason="a person reviews every answer")
    from ui.framework import data
    data.after_write()
    at.run()
    assert not at.exception, at.exception
    steps = escape_markdown("Link, Inference, Mitigation (human review)")  # the page escapes the words it shows
    line = f"Lens: profile v1, mitigation policy v1, steps {steps} (lens version {version})"
    assert line in [c.value for c in at.caption], [c.value for c in at.caption]
    assert seeded_db.scalar("SELECT decision FROM scores WHERE is_current AND response_id = 'paper-table-v'") in (
        "review", "block")
