"""``monitors list|add|remove|check|deliveries|webhook-add|webhook-remove``: thresholds on the headline figures and
the webhooks their alerts go to (``register.monitors``; docs/monitors.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

from register.cli.common import EXIT_OK, EXIT_QUARANTINED, cli_actor, positive
from register.db.store import Store

# `monitors check` exits with this when a monitor is fired after the check (a CI gate, as `authority check`)
EXIT_FIRED = EXIT_QUARANTINED


def add_commands(sub) -> None:
    from register.monitors.vocabulary import FIGURES  # names only: nothing heavy at parse time

    mon = sub.add_parser("monitors", help="thresholds on the headline figures, alerts to webhooks")
    msub = mon.add_subparsers(dest="monitors_command", required=True)
    mlist = msub.add_parser("list", help="monitors in force with their state and latest value, and the webhooks")
    mlist.add_argument("--json", action="store_true", help="as JSON")
    mlist.set_defaults(func=cmd_monitors_list)
    madd = msub.add_parser("add", help="add a monitor, or save a new version of one (fires while the figure is "
                                       "above the threshold)")
    madd.add_argument("name")
    madd.add_argument("--figure", choices=list(FIGURES), required=True)
    madd.add_argument("--threshold", type=float, required=True,
                      help="a share as a fraction (0.25 is 25%%), a count, or s_H (0 to 1)")
    madd.add_argument("--use-case", help="only the answers of this use case (default: every current answer)")
    madd.add_argument("--webhook", action="append", default=[],
                      help="a webhook its alerts go to (repeat for more; default: every webhook)")
    madd.add_argument("--reason", help="why (kept with the version)")
    madd.set_defaults(func=cmd_monitors_add)
    mremove = msub.add_parser("remove", help="remove a monitor (its versions are kept)")
    mremove.add_argument("name")
    mremove.add_argument("--reason")
    mremove.set_defaults(func=cmd_monitors_remove)
    mcheck = msub.add_parser("check", help="check every monitor now and deliver the alerts due; exit 2 when a "
                                           "monitor is fired")
    mcheck.add_argument("--json", action="store_true", help="the readings and deliveries as JSON")
    mcheck.set_defaults(func=cmd_monitors_check)
    mdel = msub.add_parser("deliveries", help="the latest deliveries of alerts, newest first")
    mdel.add_argument("--limit", type=positive, default=50)
    mdel.add_argument("--json", action="store_true", help="as JSON")
    mdel.set_defaults(func=cmd_monitors_deliveries)
    whadd = msub.add_parser("webhook-add", help="add a webhook, or save a new version of one")
    whadd.add_argument("name")
    whadd.add_argument("url", help="http:// or https:// (redirects are not followed)")
    whadd.add_argument("--secret-env", help="NAME of the environment variable holding its HMAC secret (the "
                                            "secret itself is never stored); unset: deliveries are not signed")
    whadd.set_defaults(func=cmd_webhook_add)
    whremove = msub.add_parser("webhook-remove", help="remove a webhook no monitor names")
    whremove.add_argument("name")
    whremove.set_defaults(func=cmd_webhook_remove)


def _listing(store: Store) -> dict[str, Any]:
    from register.monitors import check, definitions

    seen = check.states(store)
    rows = []
    for m in definitions.monitors(store):
        state = seen.get(m.name, {})
        rows.append({**m.as_json(), "state": state.get("state", "unchecked"), "value": state.get("value"),
                     "since": _iso(state.get("since")), "checked_at": _iso(state.get("checked_at"))})
    last = check.last_check(store)
    return {"monitors": rows, "webhooks": [w.as_json() for w in definitions.webhooks(store)],
            "last_check": None if last is None else {k: _iso(v) for k, v in last.items()}}


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def cmd_monitors_list(store: Store, args) -> int:
    from register.monitors.figures import format_value

    listing = _listing(store)
    if args.json:
        print(json.dumps(listing, indent=2, default=str))
        return EXIT_OK
    if not listing["monitors"]:
        print("no monitors (add one: python -m register monitors add NAME --figure F --threshold T)")
    for m in listing["monitors"]:
        scope = m["use_case"] if m["use_case"] is not None else "(every answer)"
        hooks = ",".join(m["webhooks"]) or "(every webhook)"
        print(f"{m['name']}\tv{m['version']}\t{m['figure']} > {format_value(m['figure'], m['threshold'])}\t{scope}\t"
              f"{m['state']}\t{format_value(m['figure'], m['value']) if m['state'] != 'unchecked' else '-'}\t{hooks}")
    for w in listing["webhooks"]:
        print(f"webhook {w['name']}\tv{w['version']}\t{w['url']}\t"
              f"{'signed with $' + w['secret_env'] if w['secret_env'] else 'unsigned'}")
    return EXIT_OK


def cmd_monitors_add(store: Store, args) -> int:
    from register.monitors.definitions import save_monitor
    from register.monitors.figures import format_value

    saved = save_monitor(store, cli_actor(), args.name, args.figure, args.threshold, use_case=args.use_case,
                         webhooks=args.webhook, reason=args.reason)
    print(f"monitor {saved.name} v{saved.version}: {saved.figure} above {format_value(saved.figure, saved.threshold)}"
          + (f" (use case {saved.use_case})" if saved.use_case is not None else "")
          + "; checked after the next score run (or now: monitors check)")
    return EXIT_OK


def cmd_monitors_remove(store: Store, args) -> int:
    from register.monitors.definitions import remove_monitor

    remove_monitor(store, cli_actor(), args.name, reason=args.reason)
    print(f"monitor {args.name} removed")
    return EXIT_OK


def cmd_monitors_check(store: Store, args) -> int:
    from register.monitors.check import check
    from register.monitors.figures import format_value
    from register.monitors.outbox import DeliveryPolicy, deliver_due

    result = check(store, cli_actor(), force=True)
    policy = DeliveryPolicy.from_settings()
    attempts = deliver_due(store, cli_actor(), policy=policy, budget_seconds=policy.timeout)
    readings = [] if result is None else result.readings
    if args.json:
        print(json.dumps({"check": None if result is None else result.as_json(), "deliveries": attempts}, indent=2,
                         default=str))
    else:
        if result is None:
            print("no monitors to check")
        for r in readings:
            value = f"error: {r['error']}" if r["error"] else format_value(r["figure"], r["value"])
            print(f"{r['name']}\t{r['state']}{' (changed)' if r['changed'] else ''}\t{value}\t"
                  f"threshold {format_value(r['figure'], r['threshold'])}")
        for a in attempts:
            print(f"delivery {a['delivery_id']} to {a['webhook']}: {a['status']}"
                  + (f" ({a['error']})" if a["error"] else ""), file=sys.stderr)
    return EXIT_FIRED if any(r["state"] == "fired" for r in readings) else EXIT_OK


def cmd_monitors_deliveries(store: Store, args) -> int:
    from register.monitors.outbox import deliveries

    rows = deliveries(store, limit=args.limit)
    if args.json:
        print(json.dumps([{k: _iso(v) for k, v in r.items()} for r in rows], indent=2, default=str))
        return EXIT_OK
    if not rows:
        print("no deliveries")
    for r in rows:
        print(f"{r['delivery_id']}\talert {r['alert_id']}\t{r['monitor']} {r['alert_state']}\t{r['webhook']}\t"
              f"{r['status']}\t{r['attempts']} attempt{'s' if r['attempts'] != 1 else ''}"
              + (f"\t{r['last_error']}" if r["last_error"] else ""))
    return EXIT_OK


def cmd_webhook_add(store: Store, args) -> int:
    from register.monitors.definitions import save_webhook, shown_url

    saved = save_webhook(store, cli_actor(), args.name, args.url, secret_env=args.secret_env)
    print(f"webhook {saved.name} v{saved.version}: {shown_url(saved.url)}"
          + (f", signed with the secret in ${saved.secret_env}" if saved.secret_env else ", unsigned"))
    return EXIT_OK


def cmd_webhook_remove(store: Store, args) -> int:
    from register.monitors.definitions import remove_webhook

    remove_webhook(store, cli_actor(), args.name)
    print(f"webhook {args.name} removed")
    return EXIT_OK


def after_command(store: Store) -> None:
    """The end of a command that opened the database: when score runs were committed that no check has followed
    (the command scored), check the monitors and deliver the alerts due (``register.monitors.worker.after_command``);
    a command that scored nothing does nothing more. Never raises."""
    try:
        scored = store.scalar("SELECT EXISTS (SELECT 1 FROM monitor_versions) AND EXISTS (SELECT 1 FROM score_runs "
                              "WHERE run_id > coalesce((SELECT max(through_run_id) FROM monitor_checks), 0))")
    except Exception as error:  # noqa: BLE001 - the command's own outcome stands
        print(f"monitors: not checked ({type(error).__name__}: {error})", file=sys.stderr)
        return
    if scored:
        from register.monitors.worker import after_command as monitors_after_command

        monitors_after_command(store)
