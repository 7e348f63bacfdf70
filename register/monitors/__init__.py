"""Monitors: named thresholds on the headline figures, checked after every score run, alerts delivered to webhooks.

* ``figures`` -- the figures a monitor may watch (High + Critical share, scope-level s_H, answers failing
  Authority, critical-information hallucination), read in SQL by the console's own queries;
* ``definitions`` -- monitors and webhooks as versioned rows, edited by admins, audited;
* ``check`` -- after new score runs: read the figures, move each monitor's state (fired / cleared), put an alert and
  its deliveries in the outbox when a state changes;
* ``outbox`` and ``sender`` -- deliver what is due, one bounded HTTP POST per attempt, outside any write, each
  attempt recorded, retried with backoff, delivered or given up (audited);
* ``worker`` -- the console's background thread and the end of a command, which run the two.

The layer sits above ``register.feedback`` (s_H) and ``register.console`` (the overview's and Authority's queries),
beside ``register.demo``; only ``register.cli`` (and the UI) import it. docs/monitors.md describes it for users.
"""
