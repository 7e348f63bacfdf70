"""Profile versions published for a test: created, activated and run over everything, as publishing does."""

from __future__ import annotations

from register import SYSTEM, Store
from register.scoring.profiles import activate, create_draft, get_profile
from register.scoring.scorer import rescore

# two weightings unlike the default one and unlike each other
OTHER_WEIGHTS = ({"F": 0.5, "C": 0.1, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05},
                 {"F": 0.1, "C": 0.5, "U": 0.1, "O": 0.1, "S": 0.1, "P": 0.05, "H": 0.05})


def publish_versions(store: Store, weightings=OTHER_WEIGHTS) -> list[int]:
    """A new version for each of ``weightings``, activated and run over every current response in turn (an older
    version's view is kept as publishing keeps it); the new version numbers."""
    versions = []
    for weights in weightings:
        version = create_draft(store, SYSTEM, {"weights": weights})
        activate(store, SYSTEM, version, "test: another version")
        rescore(store, SYSTEM, get_profile(store, version))
        versions.append(version)
    return versions
