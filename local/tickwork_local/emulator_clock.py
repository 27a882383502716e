"""moto's Step Functions interpreter on the stack's clock: Waits, Retry pauses and executions.

Found in moto 5.2.5:

- ``Timestamp._get_wait_seconds`` returned ``int(seconds left)`` against the wall clock, so a
  ``TimestampPath`` Wait woke up to a second early (beside AWS's documented truncation of the
  timestamp to the second, which is kept), and ``WaitFunction._wait_interval`` slept in
  whole-second steps on ``program_state_event``;
- ``RetrierDecl._eval_body`` paused with ``time.sleep(interval)``: wall-clock seconds that a
  stop does not cut short;
- ``ExecutionWorker.start`` ran the execution in a bare thread, ``Program.eval`` its states
  in another, and ``ExecutionState._evaluate_with_timeout`` each Task in a third.

Replaced: a Wait ends at its instant of the stack's clock (``LocalClock.wait_until``), and
a Retry pause at its own instant, both cut short when the execution is stopped (a stop wakes
them: ``Environment.set_stop``); each execution holds an ``Activity`` token from its start to
its end, carried by whichever of its threads works (``_CarryingToken``), so the time machine
knows when every execution is waiting for a moment still to come.
On the wall clock the answers are moto's own, only never early; on virtual time the same waits
end when the time machine moves the clock to them. On a test's clock that stands still
(``LocalClock(flowing=False)``) a ``TimestampPath`` Wait ends at its exact instant, not at the
second AWS truncates it to: the function's guard would sleep off the rest of that second
inside a Task's thread pool, where nothing moves a clock that stands still (the guard itself
is run on the wall clock and on flowing virtual time).
"""

from __future__ import annotations

import calendar
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from tickwork.domain.errors import ValidationFailed
from tickwork.domain.times import parse_iso
from tickwork_local.activity import Activity
from tickwork_local.virtual_clock import LocalClock

__all__ = ["emulator_on_clock"]

_retrying = threading.local()  # the environment of the Retry pausing in this thread
_running = threading.local()  # the Activity token of the execution this thread runs


def _exact(text: str, truncated: float) -> float:
    try:
        return parse_iso(text, "waitUntil").timestamp()
    except ValidationFailed:
        return truncated


@contextmanager
def emulator_on_clock(clock: LocalClock, activity: Activity) -> Iterator[None]:
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEventException,
    )
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl
    from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
    from moto.stepfunctions.parser.asl.component.program.program import Program
    from moto.stepfunctions.parser.asl.component.state.exec import execute_state
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import (
        Timestamp,
    )
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
        WaitFunction,
    )
    from moto.stepfunctions.parser.asl.eval.environment import Environment
    from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
    from moto.stepfunctions.parser.utils import TMP_THREADS

    def seconds_left(self: Timestamp, env: Any) -> float:
        self.string.eval(env=env)
        text: str = env.stack.pop()
        moment = self._from_timestamp_string(timestamp=text)  # truncated to the second, as AWS
        if moment is None:
            raise FailureEventException(self._create_failure_event(env, text))
        if not clock.flowing:  # a test's clock: the exact instant (see the module's notes)
            return _exact(text, calendar.timegm(moment.timetuple())) - clock.timestamp()
        return calendar.timegm(moment.timetuple()) - clock.timestamp()

    def wait_interval(self: WaitFunction, env: Any, wait_seconds: float) -> None:
        if wait_seconds > 0:
            clock.wait_until(clock.timestamp() + wait_seconds, lambda: not env.is_running())

    original_retry = retrier_decl.RetrierDecl._eval_body

    def retry(self: Any, env: Any) -> None:
        _retrying.env = env
        try:
            original_retry(self, env)
        finally:
            _retrying.env = None

    class _RetryTime:
        """What ``retrier_decl`` sees as ``time``: its pause on the stack's clock."""

        @staticmethod
        def sleep(seconds: float) -> None:
            env = getattr(_retrying, "env", None)
            stopped = (lambda: not env.is_running()) if env is not None else None
            clock.wait_until(clock.timestamp() + seconds, stopped)

    original_stop = Environment.set_stop

    def set_stop(self: Any, stop_date: Any, cause: Any, error: Any) -> None:
        original_stop(self, stop_date, cause, error)
        clock.wake_all()

    def start(self: ExecutionWorker) -> None:
        token = activity.hold(f"execution {self._evaluation_details.execution_details.name}")

        def run() -> None:
            activity.adopt(token)
            _running.token = token
            try:
                self._execution_logic()  # type: ignore[no-untyped-call]
            finally:
                activity.release(token)

        thread = threading.Thread(target=run, daemon=True)
        TMP_THREADS.append(thread)
        thread.start()

    def program(self: Program, env: Any) -> None:
        """moto's ``Program.eval``, its worker thread carrying the execution's token."""
        token = getattr(_running, "token", None)
        timeout = self.timeout_seconds.timeout_seconds if self.timeout_seconds else None
        env.next_state_name = self.start_at.start_at_name

        def evaluate() -> None:
            if token is not None:
                activity.adopt(token)  # the states run here: this thread's waits count
                _running.token = token
            EvalComponent.eval(self, env)

        worker = threading.Thread(target=evaluate, daemon=True)
        TMP_THREADS.append(worker)
        worker.start()
        worker.join(timeout=timeout)
        if worker.is_alive():
            env.set_timed_out()

    class _CarryingToken(threading.Thread):
        """A Task's own thread (``ExecutionState._evaluate_with_timeout``): it carries its
        execution's token while it runs (a function it invokes may wait on the clock there),
        then hands it back to the state's thread, which waits for it meanwhile."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._token = getattr(_running, "token", None)
            self._parent = threading.get_ident()

        def run(self) -> None:
            token = self._token
            if token is None:
                super().run()
                return
            activity.adopt(token)
            _running.token = token
            try:
                super().run()
            finally:
                token.thread = self._parent

    with (
        mock.patch.object(execute_state, "Thread", _CarryingToken),
        mock.patch.object(Program, "eval", program),
        mock.patch.object(Timestamp, "_get_wait_seconds", seconds_left),
        mock.patch.object(WaitFunction, "_wait_interval", wait_interval),
        mock.patch.object(retrier_decl.RetrierDecl, "_eval_body", retry),
        mock.patch.object(retrier_decl, "time", _RetryTime),
        mock.patch.object(Environment, "set_stop", set_stop),
        mock.patch.object(ExecutionWorker, "start", start),
    ):
        yield
