"""``users bootstrap|list|add|reset-password|set-role|disable|enable``: the local accounts of the console's
embedded login. One-time passwords are printed once, here, and never stored in clear."""

from __future__ import annotations

from datetime import UTC, datetime

from register.access.permissions import ROLES
from register.cli.common import EXIT_OK, cli_actor
from register.db.store import Store


def add_commands(sub) -> None:
    usr = sub.add_parser("users", help="local accounts of the embedded login")
    usub = usr.add_subparsers(dest="users_command", required=True)
    boot = usub.add_parser("bootstrap", help="create the first admin (one-time password) when no account exists")
    boot.add_argument("--username", default="admin")
    boot.set_defaults(func=cmd_users_bootstrap)
    usub.add_parser("list", help="accounts, roles and states").set_defaults(func=cmd_users_list)
    uadd = usub.add_parser("add", help="add an account (prints its one-time password)")
    uadd.add_argument("username")
    uadd.add_argument("--role", choices=ROLES, required=True)
    uadd.add_argument("--name", help="display name (default: the username)")
    uadd.set_defaults(func=cmd_users_add)
    ureset = usub.add_parser("reset-password", help="new one-time password (also lifts a lock)")
    ureset.add_argument("username")
    ureset.set_defaults(func=cmd_users_reset_password)
    urole = usub.add_parser("set-role", help="change an account's role")
    urole.add_argument("username")
    urole.add_argument("role", choices=ROLES)
    urole.set_defaults(func=cmd_users_set_role)
    for name in ("disable", "enable"):
        toggle = usub.add_parser(name, help=f"{name} an account")
        toggle.add_argument("username")
        toggle.set_defaults(func=cmd_users_disable, command_name=name)


def cmd_users_bootstrap(store: Store, args) -> int:
    from register.access.identity import bootstrap_admin

    password = bootstrap_admin(store, cli_actor(), args.username)
    if password is None:
        print("accounts exist: nothing to do")
        return EXIT_OK
    print(f"created the first admin account {args.username!r}. One-time password (shown only now; it must be "
          f"changed at the first login):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_list(store: Store, args) -> int:
    from register.access.identity import list_users

    for u in list_users(store):
        state = "disabled" if u.disabled else ("locked" if u.locked_until and u.locked_until > datetime.now(
            UTC) else "active")
        print(f"{u.username}\t{u.role}\t{state}\t{u.display_name}")
    return EXIT_OK


def cmd_users_add(store: Store, args) -> int:
    from register.access.identity import create_user

    password = create_user(store, cli_actor(), args.username, args.role, args.name)
    print(f"created {args.username!r} ({args.role}). One-time password (shown only now):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_reset_password(store: Store, args) -> int:
    from register.access.identity import reset_password

    password = reset_password(store, cli_actor(), args.username)
    print(f"new one-time password of {args.username!r} (shown only now):\n\n    {password}\n")
    return EXIT_OK


def cmd_users_set_role(store: Store, args) -> int:
    from register.access.identity import set_role

    set_role(store, cli_actor(), args.username, args.role)
    print(f"{args.username}: role {args.role}")
    return EXIT_OK


def cmd_users_disable(store: Store, args) -> int:
    from register.access.identity import set_disabled

    set_disabled(store, cli_actor(), args.username, args.command_name == "disable")
    print(f"{args.username}: {args.command_name}d")
    return EXIT_OK
