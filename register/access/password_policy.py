"""What a password chosen by a person must be, checked wherever one is set (``identity.change_own_password``).

A password is refused, with the reason, when it
- has fewer than ``MIN_PASSWORD_LENGTH`` or more than ``MAX_PASSWORD_LENGTH`` characters;
- contains a control character (NUL, tab, line breaks, ...: none of them can be typed into the login
  form) or a lone surrogate (not text at all);
- is nothing but spaces;
- is the username;
- is easy to guess: zxcvbn (Dropbox's strength estimator, PyPI ``zxcvbn``, MIT licence) scores it
  below ``MIN_STRENGTH`` on its 0-4 scale. zxcvbn knows the commonest passwords, names and words,
  keyboard patterns, repeats, sequences, dates and l33t substitutions, and is told the username and
  display name, so 'aaaaaaaaaaaa', 'password1234' or 'qwertyuiop12' fail however long they are, and
  a few uncommon words pass. Score 3 means at least 10^8 guesses, which an online attacker slowed by
  the login lock, or an offline one against argon2id, cannot make.

One-time passwords (``identity.one_time_password``, 96 random bits) pass these rules by construction;
a test checks that too.
"""

from __future__ import annotations

import threading
import unicodedata

from zxcvbn import zxcvbn

from register.errors import InvalidAccount

MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 128   # long passphrases fit; the login form's field takes this many
MIN_STRENGTH = 3            # zxcvbn score 0-4: 3 = "safely unguessable", >= 10^8 guesses
ESTIMATED_PREFIX = 72       # zxcvbn refuses longer input (its matching is quadratic): judge the first 72
_REFUSED_CATEGORIES = {"Cc": "a control character", "Cs": "a lone surrogate"}
_estimator_lock = threading.Lock()  # zxcvbn keeps the user inputs in a module-level dictionary


def password_problem(password: object, *, username: str = "", display_name: str = "") -> str | None:
    """Why ``password`` cannot be a person's password (one sentence), or None when it can."""
    if not isinstance(password, str) or len(password) < MIN_PASSWORD_LENGTH:
        return f"the password must have at least {MIN_PASSWORD_LENGTH} characters"
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"the password must have at most {MAX_PASSWORD_LENGTH} characters"
    for position, char in enumerate(password, start=1):
        category = unicodedata.category(char)
        if category in _REFUSED_CATEGORIES:
            return (f"the password contains {_REFUSED_CATEGORIES[category]} (U+{ord(char):04X} at position "
                    f"{position}): use only characters you can type")
    if not password.strip():
        return "the password must not be only spaces"
    if username and password.strip().lower() == username.strip().lower():
        return "the password must not be the username"
    return _guessable(password, [s for s in (username, display_name) if s])


def _guessable(password: str, user_inputs: list[str]) -> str | None:
    with _estimator_lock:
        result = zxcvbn(password[:ESTIMATED_PREFIX], user_inputs=user_inputs, max_length=ESTIMATED_PREFIX)
    if result["score"] >= MIN_STRENGTH:
        return None
    feedback = result.get("feedback") or {}
    advice = [part for part in [feedback.get("warning"), *(feedback.get("suggestions") or [])] if part]
    return "the password is too easy to guess: " + (" ".join(advice) or "Add another word or two. Uncommon "
                                                                        "words are better.")


def check_new_password(username: str, password: object, display_name: str = "") -> None:
    """Raise ``InvalidAccount`` with the reason when ``password`` may not be set for ``username``."""
    problem = password_problem(password, username=username, display_name=display_name)
    if problem:
        raise InvalidAccount(problem)
