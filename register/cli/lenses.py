"""``lens list|bind|set|approve``: a profile and a CLAIM lens per use case (``register.scoring.lens_versions``).

``bind`` and ``set`` save a new lens version from the one in force, changing one use case's row; it waits for a
second person (``approve``), except when the command line runs as the ``system`` role.
"""

from __future__ import annotations

from register.cli.common import EXIT_OK, cli_actor
from register.db.store import Store


def add_commands(sub) -> None:
    lens = sub.add_parser("lens", help="a profile and the CLAIM steps per use case (four eyes)")
    lsub = lens.add_subparsers(dest="lens_command", required=True)
    lsub.add_parser("list", help="the lens in force per use case and the versions waiting").set_defaults(
        func=cmd_lens_list)
    bind = lsub.add_parser("bind", help="bind a profile version to a use case (pending a second person)")
    bind.add_argument("use_case")
    bind.add_argument("profile_version", help="a profile version, or 'default' to unbind")
    bind.add_argument("--reason", required=True)
    bind.set_defaults(func=cmd_lens_bind)
    lset = lsub.add_parser("set", help="set a use case's CLAIM steps, human review and mitigation policy")
    lset.add_argument("use_case")
    lset.add_argument("--steps", default=None, help="CLAIM steps, ';'-separated (default: all five)")
    lset.add_argument("--human-review", action="store_true", help="wire human review into Mitigation")
    lset.add_argument("--policy", type=int, default=None, help="mitigation policy version (default: the active)")
    lset.add_argument("--reason", required=True)
    lset.set_defaults(func=cmd_lens_set)
    approve = lsub.add_parser("approve", help="put a pending lens version in force (a second person)")
    approve.add_argument("version", type=int)
    approve.add_argument("--reason", required=True)
    approve.set_defaults(func=cmd_lens_approve)


def cmd_lens_list(store: Store, args) -> int:
    """Print the lens in force per use case, then the versions waiting for a second person."""
    from hri_core.lens import steps_text
    from register.scoring.lens_versions import pending_lens_versions
    from register.scoring.lenses import lens_rows, lens_version

    print(f"lens version in force: {lens_version(store) or 'none (every use case under the default)'}")
    for row in lens_rows(store):
        profile = row["profile_version"] or "default"
        policy = row["policy_version"] or "active"
        print(f"  {row['use_case']}: profile {profile}, mitigation policy {policy}, steps "
              f"{steps_text(row['steps'], row['human_review'])}")
    for pending in pending_lens_versions(store):
        print(f"pending: version {pending['version']} by {pending['proposed_by']}")
    return EXIT_OK


def cmd_lens_bind(store: Store, args) -> int:
    """Bind a profile version to a use case (a new lens version)."""
    from register.scoring.lens_versions import bind_profile

    version = None if args.profile_version == "default" else int(args.profile_version)
    saved = bind_profile(store, cli_actor(), args.use_case, version, args.reason)
    print(f"lens version {saved} saved")
    return EXIT_OK


def cmd_lens_set(store: Store, args) -> int:
    """Set a use case's CLAIM steps, human review and mitigation policy (a new lens version)."""
    from register.scoring.lens_versions import set_lens

    saved = set_lens(store, cli_actor(), args.use_case, steps=args.steps, human_review=args.human_review,
                     policy_version=args.policy, reason=args.reason)
    print(f"lens version {saved} saved")
    return EXIT_OK


def cmd_lens_approve(store: Store, args) -> int:
    """A second person puts a pending lens version in force; its use cases' answers are scored again."""
    from register.scoring.lens_versions import approve_lenses

    summary = approve_lenses(store, cli_actor(), args.version, args.reason)
    scored = f", {summary.responses_scored:,} answers scored again (run {summary.run_id})" if summary else ""
    print(f"lens version {args.version} in force{scored}")
    return EXIT_OK
