"""Moves a virtual-time stack on: everything due in between happens in order, at its instant.

``advance_to(target)`` repeats one step until the clock reads ``target``: wait until the stack
is idle (every execution, function and scheduled runner waits for an instant still to come,
and every delivery queue is empty: ``Activity``), then move the clock to the earliest instant
something waits for — a Wait state's timestamp, a Retry pause's end, a function's sleep, the
next scheduled run of the pump or the reconciler — and let that happen. Nothing is early
(the clock is moved to a wait's instant, never past it while something is due before), nothing
is skipped (each instant gets its step) and the clock never goes backwards.

Scheduled runs that would find nothing are left out (``ScheduleRunner.next_useful_run``): a
year of a daily cron is not 525,600 pump runs. A run is left out only when no work has ended
since that runner's last run and its function's ``useful`` moment — the earliest parked
launch for the pump, the earliest fire entering the reconciler's look-ahead — lies beyond it.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from tickwork_local.activity import Activity
from tickwork_local.delivery import ScheduleRunner
from tickwork_local.virtual_clock import LocalClock

__all__ = ["Advanced", "StillBusy", "TimeMachine"]


class StillBusy(Exception):
    """The stack did not go idle within the time allowed: what it was still doing."""


@dataclass(frozen=True)
class Advanced:
    """One advance: from and to (unix seconds of the stack's clock), the steps it took, the
    work done meanwhile (executions, invocations), the scheduled runs made and left out, and
    the wall-clock seconds it took."""

    start: float
    end: float
    steps: int
    work: int
    runs: int
    skipped: int
    seconds: float


class TimeMachine:
    def __init__(
        self,
        clock: LocalClock,
        activity: Activity,
        runners: Callable[[], list[ScheduleRunner]],
        queues_empty: Callable[[], bool],
        fresh_glance: Callable[[], None] = lambda: None,
        settle_timeout: float = 120.0,
    ) -> None:
        self.clock = clock
        self.activity = activity
        self._runners = runners
        self._queues_empty = queues_empty
        self._fresh_glance = fresh_glance  # the runners' glance at the table is read again
        self.settle_timeout = settle_timeout
        self._one_at_a_time = threading.Lock()

    # --- idle ---------------------------------------------------------------------------------
    def busy(self) -> list[str]:
        """What the stack is doing now (empty: idle)."""
        busy = self.activity.busy()
        busy += [f"{r.name}: a new schedule" for r in self._runners() if not r.acknowledged()]
        if not busy and not self._queues_empty():
            busy.append("events waiting in a delivery queue")
        return busy

    def settle(self, timeout: float | None = None) -> int:
        """Wait until the stack is idle (twice in a row, with no work begun or ended between:
        a hand-over between threads is not mistaken for the end of the work); ``StillBusy``
        after ``timeout`` wall seconds. Returns the activity's generation it was idle at."""
        timeout = self.settle_timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        pause = 0.0005
        idle_at: int | None = None
        while True:
            generation = self.activity.generation
            busy = self.busy()
            if not busy:
                if idle_at == generation:
                    return generation
                idle_at = generation
            else:
                idle_at = None
                if time.monotonic() > deadline:
                    shown = ", ".join(sorted(set(busy))[:5])
                    raise StillBusy(f"the stack is still busy after {timeout:g}s: {shown}")
            time.sleep(pause)
            pause = min(pause * 2, 0.002)

    # --- moving on ------------------------------------------------------------------------------
    def step(self, limit: float) -> float | None:
        """Settle, then move the clock to the earliest instant something waits for, at most
        ``limit``; returns the clock's reading after the move (None: nothing waits for any
        instant, and there is no limit to move to)."""
        return self._move(limit, self.settle())

    def _move(self, limit: float, seen: int) -> float | None:
        """The move of ``step``, on a stack found idle at activity generation ``seen``. Work
        that begins, ends or wakes since then (a request to the API, an execution stopped by
        hand), or a wait that begins or ends while the next instant is worked out, makes it
        give up, the clock unmoved: the next step settles and looks again."""
        waits = self.clock.changes  # the waits the next instant is worked out from
        runners = self._runners()
        self._fresh_glance()
        useful = {runner: runner.next_useful_run() for runner in runners}
        besides = {runner.ident for runner in runners if runner.ident is not None}
        nearest = min([self.clock.next_deadline(besides), *useful.values(), limit])
        if math.isinf(nearest):
            return None
        with self.activity.unchanged_since(seen) as unchanged:
            if not unchanged or self.clock.changes != waits or not self._queues_empty():
                return self.clock.timestamp()
            for runner, moment in useful.items():
                runner.skip_to(moment if moment > runner.next_run else None)
            return self.clock.jump(max(nearest, self.clock.timestamp()))

    def advance_to(
        self,
        target: float,
        progress: Callable[[float, int], None] | None = None,
        check: Callable[[float], None] | None = None,
    ) -> Advanced:
        """Move the clock to ``target`` (unix seconds), everything due in between happening in
        order; returns what it took. ``progress(now, steps)`` is told after every step;
        ``check(target)`` may refuse, raising, once an advance already running has ended."""
        if math.isnan(target) or math.isinf(target):
            raise ValueError(f"advance_to: {target!r} is not an instant; give unix seconds")
        return self._advance_to(lambda: target, progress, check)

    def _advance_to(
        self,
        target_now: Callable[[], float],
        progress: Callable[[float, int], None] | None,
        check: Callable[[float], None] | None,
    ) -> Advanced:
        """Take the advances' lock, then work out the target (``target_now()``), let ``check``
        refuse it, and move there."""
        with self._one_at_a_time:
            target = target_now()
            if check is not None:
                check(target)
            return self._move_to(target, progress)

    def _move_to(self, target: float, progress: Callable[[float, int], None] | None) -> Advanced:
        """``advance_to`` with the advances' lock held."""
        began, start = time.monotonic(), self.clock.timestamp()
        work = self.activity.finished
        runs = sum(r.runs for r in self._runners())
        skipped = sum(r.skipped for r in self._runners())
        steps = 0
        try:
            while True:
                now = self.step(target)
                assert now is not None  # a finite target is always somewhere to move to
                steps += 1
                if progress is not None:
                    progress(now, steps)
                if now >= target:
                    self.settle()
                    break
        finally:
            self._stop_leaving_out()
        # The runners have done what the runs left out would have, and a run due at the
        # target itself has run: both belong to this advance, not to the next.
        self.settle()
        return Advanced(
            start=start,
            end=self.clock.timestamp(),
            steps=steps,
            work=self.activity.finished - work,
            runs=sum(r.runs for r in self._runners()) - runs,
            skipped=sum(r.skipped for r in self._runners()) - skipped,
            seconds=time.monotonic() - began,
        )

    def advance(
        self,
        seconds: float,
        progress: Callable[[float, int], None] | None = None,
        check: Callable[[float], None] | None = None,
    ) -> Advanced:
        """Move the clock ``seconds`` on, counted from where it is once an advance already
        running (from another thread or an API call) has ended: two advances of an hour move it
        two hours. ``check(target)`` may refuse the target, raising, before anything moves."""
        if math.isnan(seconds) or math.isinf(seconds) or seconds < 0:
            raise ValueError(f"advance: {seconds!r} is not a duration; give seconds, 0 or more")
        return self._advance_to(lambda: self.clock.timestamp() + seconds, progress, check)

    def advance_until(
        self, condition: Callable[[], bool], limit: float = math.inf, timeout: float = 60.0
    ) -> bool:
        """Move the clock on one instant at a time, each once the stack is idle, until
        ``condition()`` holds (True) or the clock reaches ``limit`` or ``timeout`` wall seconds
        pass (False): a test's "advance to the fire" with no sleep in it. The condition is
        asked when the stack is idle, before every move: the clock is never moved past the
        instant it came true at."""
        deadline = time.monotonic() + timeout
        with self._one_at_a_time:
            try:
                while True:
                    try:
                        seen = self.settle(max(0.0, deadline - time.monotonic()) + 1.0)
                    except StillBusy:  # work that hangs past the timeout: not come true
                        return False
                    if condition():
                        return True
                    if self.clock.timestamp() >= limit or time.monotonic() > deadline:
                        return False
                    if self._move(limit, seen) is None:  # nothing waits: only the world acts
                        time.sleep(0.02)
            finally:
                self._stop_leaving_out()

    def _stop_leaving_out(self) -> None:
        """Every runner runs on its schedule again (a stack left alone, not moved on)."""
        for runner in self._runners():
            runner.skip_to(None)
