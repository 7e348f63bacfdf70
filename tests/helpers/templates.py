"""Template databases: each built once per test session (per xdist worker) and copied into a test's folder.

Building a register costs its migrations, and seeding the demo set its imports and scoring; copying the file is a
file copy. A template is built by the same calls a test used to make itself, on first use, into the session's temp
folder; ``copy_database`` copies the DuckDB file with its audit keyring (``<file>.audit-key``, mode 0600 kept), so
the copy verifies and signs exactly as the original would. Every copy shares the template's audit key: tests that
are about keys make their own register.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from register import SYSTEM, Store

KEYRING_SUFFIX = ".audit-key"


def _migrated(store: Store) -> None:
    from register.scoring.profiles import ensure_default_profile

    ensure_default_profile(store, SYSTEM)


def _demo(synthetic: int) -> Callable[[Store], None]:
    """The demo set with ``synthetic`` generated answers, without its two bound use-case profiles: the profile tests
    save, publish and bind versions from 2 on (the demo's own lenses: ``tests/register/demo/test_demo_lenses.py``
    and the browser tests, whose template is the full ``python -m register demo``)."""
    def build(store: Store) -> None:
        from register.demo import seed_demo

        _migrated(store)
        seed_demo(store, SYSTEM, synthetic=synthetic, bound_profiles=False, feedback_history=False)

    return build


def _full_demo(store: Store) -> None:
    """``seed_demo``'s defaults on the migrated register: the demo set with its bound use-case profiles and its
    feedback history, no synthetic answers (the checklist tests' register)."""
    from register.demo import seed_demo

    _migrated(store)
    seed_demo(store, SYSTEM)


def _authorization(store: Store) -> None:
    """tests/register/access/test_authorization.py's register: three responses, one open quarantine row
    (bad-label), a draft profile by 'drafter', two users made through the service (password hashes), accounts for
    'drafter', 'ann' (annotator) and one person of each role."""
    from register import Actor
    from register.access import identity
    from register.access.permissions import ROLES
    from register.ingest import importer
    from register.scoring import profiles
    from tests.helpers.actors import enrol
    from tests.helpers.paths import REPO_ROOT

    data = REPO_ROOT / "tests" / "data" / "import"
    _migrated(store)
    enrol(store, Actor("drafter", "admin"), Actor("ann", "annotator"), *(Actor(f"{r}-person", r) for r in ROLES))
    importer.import_path(store, SYSTEM, data / "responses.jsonl")
    importer.import_path(store, SYSTEM, data / "unknown_label.jsonl")
    profiles.create_draft(store, Actor("drafter", "admin"), {"weights": {"F": 0.35, "C": 0.10}})
    identity.create_user(store, SYSTEM, "uma", "viewer")
    identity.create_user(store, SYSTEM, "second-admin", "admin")


def _page_accounts(store: Store) -> None:
    """The AppTest accounts ``test-<role>`` of ``tests.helpers.accounts.login`` (each costs a password hash)."""
    from tests.helpers.accounts import create_accounts

    create_accounts(store, {f"test-{role}": role for role in ("viewer", "annotator", "reviewer", "admin")})


def on_store(build: Callable[[Store], None]) -> Callable[[Path], None]:
    """A template builder that writes through a ``Store`` on the template's file (closed afterwards)."""

    def build_file(path: Path) -> None:
        store = Store(path)
        try:
            build(store)
        finally:
            store.close()

    return build_file


# name -> (the template it starts from, or None; what is written on top)
BUILDERS: dict[str, tuple[str | None, Callable[[Path], None]]] = {
    "migrated": (None, on_store(_migrated)),  # migrated, the default (paper) profile active
    "demo50": (None, on_store(_demo(50))),  # + the demo set with 50 synthetic responses (the page tests')
    "demo50-accounts": ("demo50", on_store(_page_accounts)),  # + the page tests' accounts
    "demo120": (None, on_store(_demo(120))),  # + the demo set with 120 synthetic responses (the scoring tests')
    "demo-defaults": (None, on_store(_full_demo)),  # + the demo set as seed_demo's defaults load it
    "authorization": (None, on_store(_authorization)),  # + what every role's calls act on
}


def copy_database(source: Path, target: Path) -> Path:
    """Copy the DuckDB file ``source`` (closed) and its audit keyring to ``target``; returns ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    keyring = source.with_name(source.name + KEYRING_SUFFIX)
    if keyring.exists():
        shutil.copy2(keyring, target.with_name(target.name + KEYRING_SUFFIX))
    return target


class Templates:
    """The session's template databases by name (``BUILDERS``), each built on first use under ``folder``."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._built: dict[str, Path] = {}

    def path(self, name: str, build: Callable[[Path], None] | None = None) -> Path:
        """The template ``name``'s file, built on first use by ``build(path)`` if given, else as ``BUILDERS`` says
        (on a copy of the template it starts from)."""
        if name not in self._built:
            path = self.folder / f"{name}.duckdb"
            base, builder = (None, build) if build is not None else BUILDERS[name]
            if base is not None:
                copy_database(self.path(base), path)
            builder(path)
            self._built[name] = path
        return self._built[name]

    def copy(self, name: str, target: Path, build: Callable[[Path], None] | None = None) -> Path:
        """A copy of the template ``name`` (``build`` as for ``path``) at ``target``, not opened."""
        return copy_database(self.path(name, build), target)

    def open(self, name: str, target: Path) -> Store:
        """A ``Store`` on a fresh copy of the template ``name`` at ``target``."""
        return Store(self.copy(name, target))
