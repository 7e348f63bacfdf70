"""The Scoring profiles page's diff and publish tabs say which use cases a draft would be bound to (issue 37, item
3): by the lens version that names it, waiting for a second person; or, named by none, that it would become the
default for the use cases no lens binds."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from register import SYSTEM, Actor
from register.scoring.lens_versions import bind_profile
from register.scoring.profiles import create_draft
from tests.helpers.accounts import login
from tests.helpers.actors import enrol
from tests.helpers.paths import REPO_ROOT
from ui.framework.text import escape_markdown

APP = str(REPO_ROOT / "app.py")
ANNA = Actor("Anna Admin", "admin")


def _profiles() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    login(at, "admin")
    at.run()
    return at.switch_page("pages/profiles.py").run()


def _texts(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def test_the_publish_and_diff_tabs_name_the_use_cases_a_draft_would_be_bound_to(seeded_db):
    enrol(seeded_db, ANNA)
    use_case = seeded_db.scalar("SELECT min(use_case) FROM responses WHERE is_current")
    plain = create_draft(seeded_db, SYSTEM, {}, name="plain")
    bound = create_draft(seeded_db, ANNA, {}, name="strict")
    lens = bind_profile(seeded_db, ANNA, use_case, bound, "stricter for this use case")
    at = _profiles()
    assert not at.exception, at.exception
    texts = _texts(at)
    want = (f"v{bound} would be bound to use cases **{escape_markdown(use_case)}** by lens version {lens}, "
            "which waits for a second person")
    assert any(t.startswith(want) for t in texts), texts  # the publish tab offers the newest draft
    at.selectbox(key="pp_version").set_value(plain).run()
    assert any(t.startswith(f"No lens binds v{plain}: published, it becomes the default") for t in _texts(at))
    at.selectbox(key="pd_a").set_value(plain).run()
    texts = _texts(at)
    assert any(t.startswith(f"No lens binds v{plain}") for t in texts) and any(t.startswith(want) for t in texts)
