"""What the stack is doing right now, so virtual time moves on only when it is done.

A piece of work holds a ``token`` while it runs: an execution of a state machine from its
``StartExecution`` to its end, a function invocation, a scheduled runner between its runs. A
token is taken where the work is asked for (``hold``, in the caller's thread: an execution
started is busy before its thread begins) and carried by the thread that does it (``adopt``).
Work is *idle* when every token's thread waits on the clock for an instant still to come (a
Wait state, a Retry pause, a runner's next run), or a thread working for it does (a function
hands its tokens to the threads it starts through ``contextvars``, as Python's thread pools
copy them: a batch's members sleep off the rest of their second while the function's own
thread waits for them); the stack adds its delivery queues being empty. Only then may the
time machine move the clock on: nothing due now is left undone.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tickwork_local.virtual_clock import LocalClock

__all__ = ["Activity", "Token"]


class Token:
    __slots__ = ("number", "routine", "thread", "what")

    def __init__(self, number: int, what: str, routine: bool) -> None:
        self.number = number
        self.what = what
        self.routine = routine  # a scheduled run's own work: not news for the other runners
        self.thread: int | None = None  # None: asked for, its thread not begun


_WORKING_FOR: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar(
    "tickwork_local_working_for", default=frozenset()
)


class Activity:
    def __init__(self, clock: LocalClock) -> None:
        self._clock = clock
        clock.context_of = _WORKING_FOR.get
        self._lock = threading.Lock()
        self._numbers = itertools.count()
        self._tokens: dict[int, Token] = {}
        self._routine = threading.local()
        self.finished = 0  # tokens released: how much work was done (tests and the report)
        # Work released that no scheduled run did itself: a runner that ran after the last of
        # it has seen everything there is (``ScheduleRunner``, the time machine's skipping).
        self.news = 0
        # Bumped whenever work is asked for or ends: the time machine moves the clock only if
        # nothing began or ended since it found the stack idle (``unchanged_since``).
        self.generation = 0

    @contextmanager
    def routine(self) -> Iterator[None]:
        """Work begun in this block is a scheduled run's own (``Token.routine``)."""
        self._routine.on = True
        try:
            yield
        finally:
            self._routine.on = False

    def hold(self, what: str) -> Token:
        token = Token(next(self._numbers), what, getattr(self._routine, "on", False))
        with self._lock:
            self._tokens[token.number] = token
            self.generation += 1
        return token

    def adopt(self, token: Token) -> None:
        token.thread = threading.get_ident()

    def release(self, token: Token) -> None:
        with self._lock:
            if self._tokens.pop(token.number, None) is not None:
                self.finished += 1
                self.news += 0 if token.routine else 1
                self.generation += 1

    @contextmanager
    def unchanged_since(self, generation: int) -> Iterator[bool]:
        """Inside: whether no work began or ended since ``generation`` was read and all of it
        is idle still (an execution stopped by hand leaves its Wait before it ends: it works,
        with nothing begun or ended yet); and no work can begin or end until the block is left
        (work asked for meanwhile waits, then sees whatever the block did: the clock moved
        on)."""
        with self._lock:
            yield self.generation == generation and not self._busy(list(self._tokens.values()))

    @contextmanager
    def work(self, what: str) -> Iterator[Token]:
        """Hold a token in this thread while the block runs."""
        token = self.hold(what)
        self.adopt(token)
        thread = threading.get_ident()
        with self._lock:  # the work this thread carries (an execution's token) goes along too
            carried = {t.number for t in self._tokens.values() if t.thread == thread}
        context = _WORKING_FOR.set(_WORKING_FOR.get() | carried)
        try:
            yield token
        finally:
            _WORKING_FOR.reset(context)
            self.release(token)

    def busy(self) -> list[str]:
        """The work not waiting for an instant still to come (empty: idle)."""
        with self._lock:
            tokens = list(self._tokens.values())
        return self._busy(tokens)

    def _busy(self, tokens: list[Token]) -> list[str]:
        now = self._clock.timestamp()
        waiting = self._clock.waiting()
        waited_for = {
            number
            for deadline, work in self._clock.waiting_for()
            if deadline > now
            for number in work
        }
        return [
            token.what
            for token in tokens
            if token.number not in waited_for
            and (
                token.thread is None or token.thread not in waiting or waiting[token.thread] <= now
            )
        ]
