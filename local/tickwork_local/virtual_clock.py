"""The local stack's one clock: the wall clock, or virtual time a developer or a test moves on.

Every "now" of the stack in this process reads it: the functions' (their ``Clock`` port), the
emulator's Wait states and Retry pauses, the scheduled runs of the pump and the reconciler, and
the outbox's stamps. On virtual time it is the wall clock plus an offset: it flows with the
wall clock until ``jump`` moves the offset forward, and it never goes backwards (a jump to a
past instant is no jump). Whoever waits for an instant (``wait_until``) registers the deadline,
so the time machine (``tickwork_local.time_machine``) knows the next instant something is due
and which threads are waiting rather than working; a jump wakes the waits it ends.

A test's virtual clock may stand still instead (``flowing=False``): it moves only when moved on,
so nothing in a test happens between two of its steps unless it says so.

On the wall clock (``virtual=False``) it is the same code with an offset of 0 that ``jump``
refuses to move: the real-time stack and the virtual one wait the same way.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

__all__ = ["LocalClock", "NotVirtual"]


def _stopped_at(moment: float) -> Callable[[], float]:
    return lambda: moment


class NotVirtual(Exception):
    """The stack runs on the wall clock: its time cannot be moved."""


@dataclass(order=True)
class _Wait:
    deadline: float
    number: int
    thread: int = field(compare=False)
    condition: threading.Condition = field(compare=False)
    done: bool = field(default=False, compare=False)
    woken: bool = field(default=False, compare=False)  # told to look again (``wake_all``)
    work: frozenset[int] = field(default=frozenset(), compare=False)  # what it is done for


class LocalClock:
    """``now()`` is the wall clock plus ``offset`` seconds; waits end at their instant of it."""

    def __init__(
        self,
        virtual: bool = False,
        offset: float = 0.0,
        wall: Callable[[], float] = time.time,
        flowing: bool = True,
    ) -> None:
        """``flowing=False`` (virtual time only): the clock stands still until it is moved on
        — a test's clock, on which nothing happens between two of its own steps."""
        if (offset or not flowing) and not virtual:
            raise ValueError("only virtual time has an offset or stands still")
        self.virtual = virtual
        self.flowing = flowing
        self._offset = float(offset)
        self._wall = wall if flowing else _stopped_at(wall())
        self._lock = threading.Lock()
        self._waits: list[_Wait] = []  # a heap by deadline; ended ones are dropped lazily
        self._wait_of: dict[int, _Wait] = {}  # thread -> the wait it is in
        # What a wait is done for, read in the waiting thread (``Activity`` tells its tokens).
        self.context_of: Callable[[], frozenset[int]] = frozenset
        self._numbers = itertools.count()
        self._listeners: list[Callable[[float], None]] = []
        # Bumped whenever a wait begins, ends, is woken or waits on: the time machine moves the
        # clock only if the waits it worked the next instant out from are still the waits there
        # are.
        self.changes = 0

    # --- reading it -----------------------------------------------------------------------
    @property
    def offset(self) -> float:
        """Seconds the clock is ahead of the wall clock (0 on the wall clock)."""
        return self._offset

    def timestamp(self) -> float:
        return self._wall() + self._offset

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp(), UTC)

    # --- waiting for it -------------------------------------------------------------------
    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.wait_until(self.deadline_after(seconds))

    def deadline_after(self, seconds: float) -> float:
        """The instant a sleep of ``seconds`` (> 0) waits for: never now itself. Far from 1970
        a float's step is coarser than a microsecond (about 4 µs past the year 2514, 30 µs near
        9000), so now plus a microsecond can round back to now: such a sleep would end at once,
        and a loop sleeping off the last microsecond before a fire would spin on a clock that
        stands still. It waits for the next instant the float can hold instead."""
        now = self.timestamp()
        return max(now + seconds, math.nextafter(now, math.inf))

    def wait_until(self, deadline: float, interrupted: Callable[[], bool] | None = None) -> bool:
        """Block until the clock reads ``deadline`` (unix seconds): True; or until
        ``interrupted()`` is true when checked (after ``wake_all``): False."""
        thread = threading.get_ident()
        with self._lock:
            wait = _Wait(
                deadline,
                next(self._numbers),
                thread,
                threading.Condition(self._lock),
                work=self.context_of(),
            )
            heapq.heappush(self._waits, wait)
            self._wait_of[thread] = wait
            self.changes += 1
            try:
                while True:
                    if interrupted is not None and interrupted():
                        return False
                    if wait.woken:  # looked again and waits on: idle again from here
                        wait.woken = False
                        self.changes += 1
                    left = deadline - self.timestamp()
                    if left <= 0:
                        return True
                    wait.condition.wait(None if left == math.inf or not self.flowing else left)
            finally:
                wait.done = True
                self.changes += 1
                self._wait_of.pop(thread, None)

    def waiting(self) -> dict[int, float]:
        """The threads waiting on this clock, with the instant each waits for. A wait told to
        look again (``wake_all``: its execution was stopped) is not waiting until it has
        looked: it may be about to end."""
        with self._lock:
            return {t: w.deadline for t, w in self._wait_of.items() if not w.woken}

    def waiting_for(self) -> list[tuple[float, frozenset[int]]]:
        """Each wait's instant, with what it is done for (``context_of`` in its thread)."""
        with self._lock:
            return [(w.deadline, w.work) for w in self._wait_of.values() if not w.woken]

    def next_deadline(self, besides: set[int] | frozenset[int] = frozenset()) -> float:
        """The earliest instant a wait is for (inf when nothing waits), leaving out the waits
        of the threads ``besides``."""
        with self._lock:
            while self._waits and self._waits[0].done:
                heapq.heappop(self._waits)
            if not besides:
                return self._waits[0].deadline if self._waits else math.inf
            return min(
                (w.deadline for w in self._waits if not w.done and w.thread not in besides),
                default=math.inf,
            )

    def wake_all(self) -> None:
        """Let every wait check its ``interrupted`` again (an execution was stopped): until
        it has, it counts as working, not waiting (a move worked out meanwhile gives up)."""
        with self._lock:
            self.changes += 1
            for wait in self._waits:
                if not wait.done:
                    wait.woken = True
                    wait.condition.notify_all()

    # --- moving it ------------------------------------------------------------------------
    def jump(self, to: float) -> float:
        """Move virtual time forward to ``to`` (unix seconds) and wake the waits it ends; an
        instant already past moves nothing. Returns the clock's reading after it."""
        if not self.virtual:
            raise NotVirtual(
                "this stack runs on the wall clock: start it with `tickwork local "
                "--virtual-time` to move its time"
            )
        with self._lock:
            now = self.timestamp()
            if to > now:
                self._offset += to - now
                while self.timestamp() < to:  # wall + offset may round a hair below `to`
                    self._offset = math.nextafter(self._offset, math.inf)
                now = self.timestamp()
            # The waits it ends; on a flowing clock every wait, whose sleep was worked out in
            # wall seconds before the jump (a wait just beyond the jump would sleep on).
            for wait in self._waits:
                if not wait.done and (wait.deadline <= now or self.flowing):
                    wait.condition.notify_all()
            listeners = list(self._listeners)
        for listener in listeners:
            listener(self._offset)
        return now

    def on_jump(self, listener: Callable[[float], None]) -> None:
        """Call ``listener(offset)`` after every jump (the stack saves the offset)."""
        self._listeners.append(listener)
