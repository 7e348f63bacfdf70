"""Personal API tokens (issue 35, item 2): made for an account and shown once, stored only as a hash, accepted with
the account's role at each call, refused when expired, revoked or the account disabled, listed and revoked by their
owner or an admin, and failed authentications limited per client and audited without flooding the trail."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from register import SYSTEM, Actor, Store
from register.access import token_failures
from register.access.api_tokens import (
    TOKEN_PATTERN,
    authenticate,
    create_token,
    list_tokens,
    revoke_token,
)
from register.access.identity import reset_password, set_disabled, set_role
from register.access.permissions import Permission, authorize
from register.errors import (
    TOKEN_REJECTED_MESSAGE,
    InvalidTokenRequest,
    NotFound,
    PermissionDenied,
    TokenRejected,
    TooManyAttempts,
)
from tests.helpers.actors import ANN

VERA = Actor("vera-viewer", "viewer")
RITA = Actor("rita-reviewer", "reviewer")
CLIENT = "10.0.0.7"


@pytest.fixture
def store(store):
    from tests.helpers.actors import enrol

    enrol(store, ANN, VERA, RITA)
    return store


def _events(store: Store, action: str) -> list[dict]:
    """The events of ``action``, oldest first, their ``after`` parsed."""
    rows = store.dicts("SELECT actor_name, actor_role, entity_type, entity_id, after FROM audit_events "
                       "WHERE action = ? ORDER BY seq", [action])
    return [{**row, "after": json.loads(row["after"])} for row in rows]


def _count(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM audit_events")


# --- making and using a token ---------------------------------------------------------------------------


def test_a_token_is_made_for_oneself_and_authenticates_as_its_account(store):
    issued = create_token(store, VERA, "vera-viewer", name="my notebook")
    token_id, _secret = TOKEN_PATTERN.fullmatch(issued.token).groups()
    assert issued.token.startswith("hri_") and token_id == issued.token_id and issued.username == "vera-viewer"
    assert issued.expires_at - issued.created_at == timedelta(days=90)  # HRI_TOKEN_DEFAULT_DAYS
    assert authenticate(store, issued.token, client=CLIENT) == VERA
    (event,) = _events(store, "api_token.create")
    assert (event["actor_name"], event["entity_id"]) == ("vera-viewer", issued.token_id)
    assert (event["after"]["expires_days"], event["after"]["name"]) == (90, "my notebook")
    assert "secret_hash" not in event["after"]


def test_the_secret_is_stored_nowhere_and_never_printed(store):
    """Only its SHA-256 is kept: no text column of any table (audit trail included) holds the secret, after it was
    made, used, presented wrongly and revoked; nor does the database file, nor the object's repr."""
    issued = create_token(store, RITA, "rita-reviewer")
    secret = TOKEN_PATTERN.fullmatch(issued.token).group(2)
    authenticate(store, issued.token, client=CLIENT)
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token[:-1] + ("A" if issued.token[-1] != "A" else "B"), client=CLIENT)
    revoke_token(store, RITA, issued.token_id)
    columns = store.query("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main' "
                          "AND (data_type LIKE 'VARCHAR%' OR data_type = 'JSON') AND table_name IN "
                          "(SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE')")
    assert ("api_tokens", "secret_hash") in columns and ("audit_events", "after") in columns
    found = store.query(" UNION ALL ".join(
        f"""SELECT '{table}.{column}' FROM "{table}" WHERE contains(CAST("{column}" AS VARCHAR), $secret)"""
        for table, column in columns), {"secret": secret[:20]})
    assert found == []
    import hashlib

    assert store.scalar("SELECT secret_hash FROM api_tokens") == hashlib.sha256(secret.encode()).hexdigest()
    with store.cursor() as cursor:
        cursor.execute("CHECKPOINT")
    assert secret[:20].encode() not in store.path.read_bytes()
    assert secret not in repr(issued) and issued.token_id in repr(issued)


def test_a_role_change_applies_at_the_next_call(store):
    issued = create_token(store, RITA, "rita-reviewer")
    assert authenticate(store, issued.token, client=CLIENT).role == "reviewer"
    set_role(store, SYSTEM, "rita-reviewer", "viewer")
    demoted = authenticate(store, issued.token, client=CLIENT)
    assert demoted == Actor("rita-reviewer", "viewer")
    with pytest.raises(PermissionDenied):
        authorize(store, demoted, Permission.REVIEW_DECIDE, entity_type="response")
    set_role(store, SYSTEM, "rita-reviewer", "admin")
    assert authenticate(store, issued.token, client=CLIENT).role == "admin"


def test_a_disabled_account_s_tokens_fail_at_once_and_stay_revoked_after_an_enable(store):
    issued = create_token(store, VERA, "vera-viewer")
    set_disabled(store, SYSTEM, "vera-viewer", True)
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT)
    (token,) = list_tokens(store, SYSTEM, "vera-viewer")
    assert (token["status"], token["revoked_by"]) == ("revoked", SYSTEM.name)
    revoked = _events(store, "api_token.revoke")
    assert [e["entity_id"] for e in revoked] == [issued.token_id] and revoked[0]["after"]["why"] == "user.disable"
    set_disabled(store, SYSTEM, "vera-viewer", False)
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT)
    assert _events(store, "api_token.rejected")[-1]["after"]["reason"].startswith("revoked at")


def test_a_password_reset_revokes_the_account_s_tokens(store):
    """Whoever held the password could have made a token with it: the reset ends those with the sessions."""
    issued = create_token(store, RITA, "rita-reviewer")
    other = create_token(store, VERA, "vera-viewer")
    reset_password(store, SYSTEM, "rita-reviewer")
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT)
    assert authenticate(store, other.token, client=CLIENT) == VERA  # another account's tokens are untouched


def test_a_disabled_account_s_token_fails_even_when_not_revoked(store):
    """The account is read at every call: a token whose account is disabled fails whatever its own row says."""
    issued = create_token(store, VERA, "vera-viewer")
    with store.cursor() as cursor:  # disabled behind the register's back: no revocation happened
        cursor.execute("UPDATE users SET disabled = true WHERE username = 'vera-viewer'")
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT)
    assert _events(store, "api_token.rejected")[-1]["after"]["reason"] == "the account vera-viewer is disabled"


def test_an_expired_token_is_refused(store):
    issued = create_token(store, VERA, "vera-viewer", expires_days=1)
    assert issued.expires_at - issued.created_at == timedelta(days=1)
    assert authenticate(store, issued.token, client=CLIENT, now=issued.expires_at - timedelta(seconds=1)) == VERA
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT, now=issued.expires_at)
    assert list_tokens(store, VERA)[0]["status"] == "active"  # by the clock of now, it has a day left
    (event,) = _events(store, "api_token.rejected")
    assert (event["actor_name"], event["entity_id"]) == ("vera-viewer", issued.token_id)
    assert event["after"]["reason"].startswith("expired at ")


def test_a_revoked_token_is_refused_and_revoking_it_again_says_so(store):
    issued = create_token(store, VERA, "vera-viewer")
    revoke_token(store, VERA, issued.token_id)
    with pytest.raises(TokenRejected):
        authenticate(store, issued.token, client=CLIENT)
    with pytest.raises(InvalidTokenRequest, match="revoked already, by vera-viewer") as again:
        revoke_token(store, VERA, issued.token_id)
    assert again.value.field == "token_id"
    (token,) = list_tokens(store, VERA)
    assert (token["status"], token["revoked_by"]) == ("revoked", "vera-viewer")
    assert len(_events(store, "api_token.revoke")) == 1
    with pytest.raises(NotFound):
        revoke_token(store, VERA, "0123456789ab")


def test_every_failure_gets_the_same_message(store):
    """Malformed, unknown, wrong secret, revoked, expired, disabled account: the caller cannot tell which; the
    trail can."""
    good = create_token(store, VERA, "vera-viewer")
    revoked = create_token(store, RITA, "rita-reviewer")
    revoke_token(store, RITA, revoked.token_id)
    expired = create_token(store, ANN, ANN.name, expires_days=1)
    presented = [("", None), ("Bearer " + good.token, None), ("hri_zz_" + "a" * 43, None),
                 ("hri_0123456789ab_" + "a" * 43, "no such token"),
                 (good.token[:-2] + "xx", "wrong secret"), (revoked.token, "revoked at"),
                 (expired.token, "expired at")]
    for token, _reason in presented[:-1]:
        with pytest.raises(TokenRejected) as refused:
            authenticate(store, token, client=CLIENT)
        assert str(refused.value) == TOKEN_REJECTED_MESSAGE and type(refused.value) is TokenRejected
    with pytest.raises(TokenRejected) as refused:
        authenticate(store, expired.token, client=CLIENT, now=expired.expires_at + timedelta(seconds=1))
    assert str(refused.value) == TOKEN_REJECTED_MESSAGE
    reasons = [e["after"]["reason"] for e in _events(store, "api_token.rejected")]
    assert len(reasons) == len(presented)
    for recorded, (_, reason) in zip(reasons, presented, strict=True):
        assert recorded.startswith(reason or "not an API token (malformed)")


# --- who may ----------------------------------------------------------------------------------------------


def test_a_non_admin_may_not_make_list_or_revoke_another_account_s_tokens(store):
    ritas = create_token(store, RITA, "rita-reviewer")
    before = _count(store)
    with pytest.raises(PermissionDenied, match="only their own API tokens"):
        create_token(store, VERA, "rita-reviewer")
    with pytest.raises(PermissionDenied):
        list_tokens(store, VERA, "rita-reviewer")
    with pytest.raises(PermissionDenied):
        revoke_token(store, VERA, ritas.token_id)
    denied = _events(store, "denied")
    assert [e["actor_name"] for e in denied] == ["vera-viewer"] * 3 and _count(store) == before + 3
    assert store.scalar("SELECT count(*) FROM api_tokens") == 1
    assert authenticate(store, ritas.token, client=CLIENT) == RITA  # still valid
    assert list_tokens(store, VERA) == []  # a non-admin sees only their own


def test_an_admin_makes_lists_and_revokes_for_any_enabled_account(store):
    made = create_token(store, ANN, "vera-viewer", name="pipeline")
    assert authenticate(store, made.token, client=CLIENT) == VERA  # the account's role, not the admin's
    create_token(store, RITA, "rita-reviewer")
    listed = list_tokens(store, ANN)
    assert {t["username"] for t in listed} == {"vera-viewer", "rita-reviewer"}
    assert [t["created_by"] for t in listed if t["username"] == "vera-viewer"] == [ANN.name]
    assert set(listed[0]) == {"token_id", "username", "name", "created_at", "created_by", "expires_at",
                              "last_used_at", "revoked_at", "revoked_by", "status"}  # never the hash
    revoke_token(store, ANN, made.token_id)
    assert list_tokens(store, VERA)[0]["status"] == "revoked"
    with pytest.raises(NotFound):
        create_token(store, ANN, "nobody")
    with pytest.raises(InvalidTokenRequest, match="name the account") as unnamed:
        create_token(store, ANN, "  ")
    assert unnamed.value.field == "username"
    set_disabled(store, SYSTEM, "rita-reviewer", True)
    with pytest.raises(InvalidTokenRequest, match="rita-reviewer is disabled") as refused:
        create_token(store, ANN, "rita-reviewer")
    assert refused.value.field == "username"


def test_a_disabled_or_demoted_actor_is_refused_even_for_its_own_tokens(store):
    create_token(store, RITA, "rita-reviewer")
    set_role(store, SYSTEM, "rita-reviewer", "viewer")
    with pytest.raises(PermissionDenied, match="now viewer"):  # the Actor still says reviewer
        list_tokens(store, RITA)
    set_disabled(store, SYSTEM, "vera-viewer", True)
    with pytest.raises(PermissionDenied, match="disabled"):
        create_token(store, VERA, "vera-viewer")


@pytest.mark.parametrize("days", [0, -3, True, "7", 366])
def test_an_expiry_outside_1_to_the_maximum_is_refused_naming_the_field(store, days):
    with pytest.raises(InvalidTokenRequest) as refused:
        create_token(store, VERA, "vera-viewer", expires_days=days)
    assert refused.value.field == "expires_days" and store.scalar("SELECT count(*) FROM api_tokens") == 0


def test_the_expiry_bounds_come_from_the_settings(store, monkeypatch):
    monkeypatch.setenv("HRI_TOKEN_DEFAULT_DAYS", "7")
    issued = create_token(store, VERA, "vera-viewer")
    assert issued.expires_at - issued.created_at == timedelta(days=7)
    monkeypatch.setenv("HRI_TOKEN_MAX_DAYS", "5")
    with pytest.raises(InvalidTokenRequest, match="HRI_TOKEN_DEFAULT_DAYS=7 is longer than HRI_TOKEN_MAX_DAYS=5"):
        create_token(store, VERA, "vera-viewer")
    assert create_token(store, VERA, "vera-viewer", expires_days=5).expires_at is not None


@pytest.mark.parametrize("name, problem", [("a\nb", "control"), ("x" * 101, "at most 100"),
                                           ("\u202egnp.exe", "control")])
def test_a_name_with_control_characters_or_too_long_is_refused(store, name, problem):
    with pytest.raises(InvalidTokenRequest, match=problem) as refused:
        create_token(store, VERA, "vera-viewer", name=name)
    assert refused.value.field == "name"


# --- the failure limit ------------------------------------------------------------------------------------


def test_failures_are_audited_up_to_the_limit_then_one_lock_out(store):
    good = create_token(store, VERA, "vera-viewer")
    bad = good.token[:-1] + ("A" if good.token[-1] != "A" else "B")
    allowed = token_failures.FAILURES_ALLOWED
    at = good.created_at
    for n in range(allowed):
        with pytest.raises(TokenRejected) as refused:
            authenticate(store, bad, client=CLIENT, now=at + timedelta(seconds=n))
        assert type(refused.value) is TokenRejected
    rejected = _events(store, "api_token.rejected")
    assert len(rejected) == allowed and {e["actor_name"] for e in rejected} == {"vera-viewer"}
    assert (rejected[-1]["after"]["failures_in_window"], rejected[-1]["after"]["client"]) == (allowed, CLIENT)
    assert rejected[-1]["after"]["reason"] == "wrong secret" and rejected[-1]["entity_id"] == good.token_id

    with pytest.raises(TooManyAttempts) as over:
        authenticate(store, bad, client=CLIENT, now=at + timedelta(seconds=allowed))
    assert over.value.retry_after == int(token_failures.LOCK.total_seconds())
    assert isinstance(over.value, TokenRejected)  # a caller that knows only TokenRejected still refuses
    (locked,) = _events(store, "api_token.locked_out")
    assert (locked["actor_name"], locked["entity_type"], locked["entity_id"]) == ("(api token)", "api_client", CLIENT)

    events = _count(store)
    for n in range(5):  # further failures while locked: counted, not audited
        with pytest.raises(TooManyAttempts) as again:
            authenticate(store, "garbage", client=CLIENT, now=at + timedelta(seconds=allowed + 10 + n))
    assert again.value.retry_after == int(token_failures.LOCK.total_seconds()) - 14
    assert _count(store) == events
    # the limit is per client: another one is refused plainly; a valid token passes even from the locked client
    with pytest.raises(TokenRejected) as elsewhere:
        authenticate(store, bad, client="10.0.0.8", now=at + timedelta(seconds=30))
    assert type(elsewhere.value) is TokenRejected
    assert authenticate(store, good.token, client=CLIENT, now=at + timedelta(seconds=31)) == VERA

    after_lock = at + timedelta(seconds=allowed) + token_failures.LOCK
    with pytest.raises(TokenRejected) as later:
        authenticate(store, bad, client=CLIENT, now=after_lock)
    assert type(later.value) is TokenRejected
    assert _events(store, "api_token.rejected")[-1]["after"]["refused_while_locked"] == 5


def test_failures_leave_the_window_and_stop_counting(store):
    allowed = token_failures.FAILURES_ALLOWED
    at = create_token(store, VERA, "vera-viewer").created_at
    for n in range(allowed):
        with pytest.raises(TokenRejected):
            authenticate(store, "nonsense", client=CLIENT, now=at + timedelta(seconds=n))
    later = at + token_failures.WINDOW + timedelta(seconds=allowed)  # every earlier failure is out of the window
    with pytest.raises(TokenRejected) as refused:
        authenticate(store, "nonsense", client=CLIENT, now=later)
    assert type(refused.value) is TokenRejected
    assert _events(store, "api_token.rejected")[-1]["after"]["failures_in_window"] == 1


def test_the_tracked_clients_are_bounded(monkeypatch):
    monkeypatch.setattr(token_failures, "MAX_CLIENTS", 3)
    limiter = token_failures.FailureLimiter()
    from register.db.store import utc_now

    at = utc_now()
    for n in range(10):
        limiter.failed(f"client-{n}", at)
    assert len(limiter._clients) == 3 and "client-9" in limiter._clients


# --- last use -----------------------------------------------------------------------------------------------


def test_last_use_is_recorded_at_most_once_a_minute_and_not_audited(store):
    issued = create_token(store, VERA, "vera-viewer")
    events = _count(store)
    first = issued.created_at + timedelta(seconds=5)
    authenticate(store, issued.token, client=CLIENT, now=first)
    assert list_tokens(store, VERA)[0]["last_used_at"] == first
    authenticate(store, issued.token, client=CLIENT, now=first + timedelta(seconds=59))
    assert list_tokens(store, VERA)[0]["last_used_at"] == first
    authenticate(store, issued.token, client=CLIENT, now=first + timedelta(seconds=60))
    assert list_tokens(store, VERA)[0]["last_used_at"] == first + timedelta(seconds=60)
    assert _count(store) == events


def test_the_token_format_is_prefix_id_and_a_256_bit_secret(store):
    tokens = {create_token(store, VERA, "vera-viewer").token for _ in range(3)}
    assert len(tokens) == 3
    for token in tokens:
        assert re.fullmatch(r"hri_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", token)
