"""Named actors of the register's scoring tests: two admins (for four eyes) and a reviewer."""

from __future__ import annotations

from register import Actor

ANN = Actor("Ann Admin", "admin")
BOB = Actor("Bob Admin", "admin")
REVIEWER = Actor("Rita Reviewer", "reviewer")
