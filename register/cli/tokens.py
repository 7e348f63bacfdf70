"""``tokens create|list|revoke``: personal API tokens (``Authorization: Bearer TOKEN`` on ``/api/v1``).

A token's secret is printed once, by ``create``, and never stored (``register.access.api_tokens``). The command
line acts as ``cli_actor()`` (role ``system``): it makes, lists and revokes the tokens of any account."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from register.cli.common import EXIT_OK, cli_actor, positive
from register.db.store import Store


def add_commands(sub) -> None:
    tok = sub.add_parser("tokens", help="personal API tokens (Authorization: Bearer TOKEN)")
    tsub = tok.add_subparsers(dest="tokens_command", required=True)
    create = tsub.add_parser("create", help="make a token for an account (its secret is printed once)")
    create.add_argument("--user", required=True, help="the account the token acts for (with its role at each call)")
    create.add_argument("--expires-days", type=positive, default=None,
                        help="days until it expires (default: HRI_TOKEN_DEFAULT_DAYS; at most HRI_TOKEN_MAX_DAYS)")
    create.add_argument("--name", default=None, help="what the token is for (a label shown in lists)")
    create.add_argument("--json", action="store_true",
                        help='print {"token", "token_id", "username", "expires_at"} as one JSON object')
    create.set_defaults(func=cmd_tokens_create)
    listing = tsub.add_parser("list", help="tokens with their state (never their secrets)")
    listing.add_argument("--user", default=None, help="only this account's tokens")
    listing.add_argument("--json", action="store_true", help="a JSON list")
    listing.set_defaults(func=cmd_tokens_list)
    revoke = tsub.add_parser("revoke", help="revoke a token: it fails from the next request on")
    revoke.add_argument("token_id", help="the token's id (`tokens list`), the part after hri_")
    revoke.set_defaults(func=cmd_tokens_revoke)


def _when(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def cmd_tokens_create(store: Store, args) -> int:
    from register.access.api_tokens import create_token

    issued = create_token(store, cli_actor(), args.user, expires_days=args.expires_days, name=args.name)
    if args.json:
        print(json.dumps({"token": issued.token, "token_id": issued.token_id, "username": issued.username,
                          "expires_at": _when(issued.expires_at)}))
        return EXIT_OK
    print(f"API token {issued.token_id} for {issued.username!r}, valid until {issued.expires_at:%Y-%m-%d %H:%M} UTC. "
          f"The token (shown only now: it is not stored and cannot be shown again; send it as "
          f"`Authorization: Bearer TOKEN`):\n\n    {issued.token}\n")
    return EXIT_OK


def _listed(token: dict[str, Any]) -> dict[str, Any]:
    return {key: _when(value) if isinstance(value, datetime) else value for key, value in token.items()}


def cmd_tokens_list(store: Store, args) -> int:
    from register.access.api_tokens import list_tokens

    tokens = [_listed(t) for t in list_tokens(store, cli_actor(), args.user)]
    if args.json:
        print(json.dumps(tokens))
        return EXIT_OK
    if not tokens:
        print("no API tokens" + (f" of {args.user!r}" if args.user else ""))
    for t in tokens:
        print("\t".join([t["token_id"], t["username"], t["status"], f"expires {t['expires_at']}",
                         f"last used {t['last_used_at'] or 'never'}", t["name"] or ""]))
    return EXIT_OK


def cmd_tokens_revoke(store: Store, args) -> int:
    from register.access.api_tokens import revoke_token

    revoke_token(store, cli_actor(), args.token_id)
    print(f"API token {args.token_id.strip()}: revoked")
    return EXIT_OK
