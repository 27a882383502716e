"""A ``TimestampPath`` Wait ends at its second, not up to a second before it.

Found: ``moto/stepfunctions/parser/asl/component/state/wait/wait_function/timestamp.py``,
``Timestamp._get_wait_seconds``, returned ``int(seconds left)``, so a Wait woke up to a second
early — on top of AWS's documented truncation of the timestamp to the second, which is kept;
and ``WaitFunction._wait_interval`` slept in whole-second steps.

Replaced: both. The Wait sleeps until that second exactly (a monotonic deadline), and still
ends at once when its execution is stopped. A fire is never early because of the emulator.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

__all__ = ["exact_waits"]


@contextmanager
def exact_waits() -> Iterator[None]:
    from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
        FailureEventException,
    )
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.timestamp import (
        Timestamp,
    )
    from moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function import (
        WaitFunction,
    )

    def seconds_left(self: Timestamp, env: Any) -> float:
        self.string.eval(env=env)
        text: str = env.stack.pop()
        moment = self._from_timestamp_string(timestamp=text)  # truncated to the second, as AWS
        if moment is None:
            raise FailureEventException(self._create_failure_event(env, text))
        return calendar.timegm(moment.timetuple()) - time.time()

    def wait_interval(self: WaitFunction, env: Any, wait_seconds: float) -> None:
        deadline = time.monotonic() + wait_seconds
        while env.is_running():
            left = deadline - time.monotonic()
            if left <= 0:
                return
            env.program_state_event.wait(left)  # set when the execution is stopped

    with (
        mock.patch.object(Timestamp, "_get_wait_seconds", seconds_left),
        mock.patch.object(WaitFunction, "_wait_interval", wait_interval),
    ):
        yield
