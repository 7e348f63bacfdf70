"""Named actors of the register's tests, and ``enrol`` to give test actors their accounts.

The register does not trust an ``Actor``: every write re-reads the account it names (``users``: enabled,
holding the role the Actor claims; ``register.db.store.account_problem``). A test that acts as someone
therefore gives them an account first.
"""

from __future__ import annotations

from register import Actor, Store
from register.db.store import utc_now

ANN = Actor("Ann Admin", "admin")
BOB = Actor("Bob Admin", "admin")
REVIEWER = Actor("Rita Reviewer", "reviewer")
ANNOTATOR = Actor("Ana Annotator", "annotator")


def enrol(store: Store, *actors: Actor, created_by: str = "tests") -> None:
    """An enabled local account for each actor, with the role it claims (skipped when it exists).

    Written straight into ``users`` as test set-up (no audit event, no password: tests act through the
    register's functions, not the login page; ``tests/helpers/accounts.py`` makes accounts that log in).
    """
    now = utc_now()
    with store.cursor() as cur:
        for actor in actors:
            cur.execute("INSERT INTO users (username, display_name, role, password_hash, must_change_password, "
                        "created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, '!test', false, ?, ?, ?, ?) "
                        "ON CONFLICT DO NOTHING",
                        [actor.name, actor.name, actor.role, now, created_by, now, created_by])
