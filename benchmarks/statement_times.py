"""Where an operation's CPU goes, step by step: every SQL statement it runs timed (wall and CPU of this process).

Used by ``bench_import.py --breakdown``. ``StatementTimes`` wraps ``register.db.store.Cursor``'s three ways of
running a statement (``_run``, the fetch after it, ``arrow``) for the duration of a ``with`` block, and adds each
statement's wall and CPU seconds to the step its text belongs to (``steps``: the first pattern the statement's text
contains, else "other SQL"). What the block spent outside any statement is Python. CPU is
``time.process_time()``: every thread of this process, so a statement DuckDB runs on two threads counts twice its
wall time where both work.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from register.db import store as store_module

__all__ = ["StatementTimes", "Step"]


@dataclass
class Step:
    """One step's statements: how many ran, their wall and CPU seconds."""

    name: str
    statements: int = 0
    wall: float = 0.0
    cpu: float = 0.0


@dataclass
class StatementTimes:
    """The statements of a block, grouped into ``steps`` by ``(name, patterns)``: see the module docstring."""

    steps: Sequence[tuple[str, Sequence[str]]]
    by_step: dict[str, Step] = field(default_factory=dict)
    wall: float = 0.0  # the whole block
    cpu: float = 0.0

    def _step(self, sql: str) -> Step:
        name = next((name for name, patterns in self.steps if any(pattern in sql for pattern in patterns)),
                    "other SQL")
        return self.by_step.setdefault(name, Step(name))

    @contextmanager
    def timing(self) -> Iterator[StatementTimes]:
        """Time every statement run inside the block (on any cursor of any store), and the block itself."""
        cursor = store_module.Cursor
        run, fetch, arrow = cursor._run, cursor._fetch, cursor.arrow
        last: list[Step | None] = [None]  # the step of the statement whose rows a fetch reads
        in_arrow = [False]  # ``arrow`` fetches by itself: timed as one

        def timed(step: Step, call, *args):
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                return call(*args)
            finally:
                step.wall += time.perf_counter() - wall
                step.cpu += time.process_time() - cpu

        def timed_run(self, sql, params):
            step = last[0] = self._step_of(sql)
            step.statements += 1
            return timed(step, run, self, sql, params)

        def timed_fetch(self, fn):
            if in_arrow[0] or last[0] is None:
                return fetch(self, fn)
            return timed(last[0], fetch, self, fn)

        def timed_arrow(self, sql, params=()):
            step = self._step_of(sql)
            step.statements += 1
            in_arrow[0] = True
            try:
                return timed(step, arrow, self, sql, params)
            finally:
                in_arrow[0] = False

        cursor._step_of = lambda _self, sql: self._step(sql)  # type: ignore[attr-defined]
        cursor._run, cursor._fetch, cursor.arrow = timed_run, timed_fetch, timed_arrow  # type: ignore[method-assign]
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield self
        finally:
            self.wall, self.cpu = time.perf_counter() - wall, time.process_time() - cpu
            cursor._run, cursor._fetch, cursor.arrow = run, fetch, arrow  # type: ignore[method-assign]
            del cursor._step_of  # type: ignore[attr-defined]

    def rows(self) -> list[Step]:
        """The steps in the order given (then "other SQL"), and "Python": the block's time outside any statement."""
        order = [name for name, _ in self.steps] + ["other SQL"]
        listed = [self.by_step[name] for name in order if name in self.by_step]
        outside = Step("Python (outside SQL)", 0, self.wall - sum(s.wall for s in listed),
                       self.cpu - sum(s.cpu for s in listed))
        return [*listed, outside]
